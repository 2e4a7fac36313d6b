"""The `inductor` backend: mode and options checks at lookup, and two small compiles (C++ on CPU), forward and backward.

The compiles are kept to two tiny graphs: each runs a C++ compiler (about 10 s cold, under 1 s from inductor's cache).
"""

from __future__ import annotations

import pytest
import torch

from jitcore import backends
from jitcore.backends import BackendError, lookup
from tests.backends.graphs import grads_of, graph_and_fake_inputs, leaf
from tests.support import assert_same

# Modes and options (no compile)


@pytest.mark.parametrize("mode", ["default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"])
def test_inductor_modes_set_what_torch_compile_modes_set(mode):
    from torch._inductor import list_mode_options

    assert backends.inductor.config_patches(mode) == list_mode_options(mode)


def test_lookup_inductor_with_a_bad_mode_lists_the_valid_modes():
    with pytest.raises(
        BackendError,
        match="unknown mode 'fast'; valid modes: default, reduce-overhead, max-autotune, max-autotune-no-cudagraphs",
    ):
        lookup("inductor", mode="fast")


def test_lookup_inductor_rejects_an_unknown_config_option_suggesting_close_ones():
    with pytest.raises(BackendError, match=r"unknown option 'max_autotun'; did you mean 'max_autotune'"):
        lookup("inductor", options={"max_autotun": True})


def test_lookup_inductor_rejects_an_option_value_of_the_wrong_type():
    with pytest.raises(BackendError, match=r"option 'max_autotune' must be a bool, got str \('yes'\)"):
        lookup("inductor", options={"max_autotune": "yes"})


def test_lookup_inductor_rejects_options_that_are_not_a_mapping():
    with pytest.raises(BackendError, match="options must be a dict of torch._inductor.config settings, got list"):
        lookup("inductor", options=["max_autotune"])


def test_inductor_options_accept_dashes_and_override_the_mode():
    patches = backends.inductor.config_patches("max-autotune", {"coordinate-descent-tuning": False})
    assert patches == {"max_autotune": True, "coordinate_descent_tuning": False, "triton.cudagraphs": True}


def test_inductor_called_directly_checks_its_mode_before_compiling():
    gm, example_inputs = graph_and_fake_inputs(lambda x: (x + 1,), leaf(2, seed=1))
    with pytest.raises(BackendError, match="unknown mode 'turbo'"):
        backends.inductor.inductor(gm, example_inputs, mode="turbo")


# Compiles


def sin_mul_and_matmul(x, y):
    return (torch.sin(x) * y + 1, (x @ y.t()).relu())


def test_inductor_forward_equals_the_graphs_on_two_input_sets():
    def cos_add_and_sum(x, y):
        return (torch.cos(x) + y * 2, x.sum(0))

    gm, example_inputs = graph_and_fake_inputs(cos_add_and_sum, leaf(3, 4, seed=1), leaf(3, 4, seed=2))
    compiled = lookup("inductor")(gm, example_inputs)
    for seed in (10, 20):
        inputs = (leaf(3, 4, seed=seed), leaf(3, 4, seed=seed + 1))
        assert_same(gm(*inputs), compiled(*inputs))


def test_inductor_grads_equal_eager_grads():
    x, y = leaf(3, 4, seed=1, requires_grad=True), leaf(3, 4, seed=2)
    gm, example_inputs = graph_and_fake_inputs(sin_mul_and_matmul, x, y)
    compiled = lookup("inductor", mode="max-autotune-no-cudagraphs")(gm, example_inputs)
    expected_outputs = gm(x, y)
    actual_outputs = compiled(x, y)
    assert_same(expected_outputs, actual_outputs)
    assert_same(grads_of(expected_outputs, [x, y]), grads_of(actual_outputs, [x, y]))
