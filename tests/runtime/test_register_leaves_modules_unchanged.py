"""register(module) + enabled() intercepts a module instance without changing it: its `__dict__` and class stay as
they are (so `vars()`, `copy.deepcopy` and `jit.compile` of a copy see a plain module), other instances of its class
run natively, and the class's forward is itself again after the block, however the block ends."""
import copy

import pytest
import torch

import jitcore as jit
from tests.support import assert_same, randn


class Scaled(torch.nn.Module):
    """A forward with a visible side effect: every call appends to `log`."""

    def __init__(self, seed):
        super().__init__()
        torch.manual_seed(seed)
        self.lin = torch.nn.Linear(3, 3)
        self.log = []

    def forward(self, x):
        self.log.append(x.shape[0])
        return self.lin(x).relu() * 2


def _eager_twin(model):
    twin = copy.deepcopy(model)
    twin.log = []
    return twin


def test_registered_module_dict_and_class_are_untouched_inside_and_after_the_block(counting):
    model = Scaled(0)
    keys, cls = set(vars(model)), type(model)
    jit.register(model)
    try:
        with jit.enabled(backend=counting):
            for _ in range(3):
                model(randn(2, 3))
            assert set(vars(model)) == keys
            assert type(model) is cls
        assert set(vars(model)) == keys
        assert counting.graph_count == 1
    finally:
        jit.unregister(model)


def test_deepcopy_made_inside_the_block_is_a_plain_module_jit_compile_accepts():
    model = Scaled(1)
    jit.register(model)
    try:
        with jit.enabled(backend="eager"):
            model(randn(2, 3))
            model(randn(2, 3))
            clone = copy.deepcopy(model)
        assert "forward" not in vars(clone)
        clone.log, reference = [], _eager_twin(clone)
        compiled = jit.compile(clone, backend="eager")
        for seed in range(3):
            x = randn(2, 3, seed=seed)
            assert_same(reference(x), compiled(x))
        assert clone.log == reference.log
    finally:
        jit.unregister(model)


def test_registered_and_unregistered_instances_of_one_class_both_match_eager(counting):
    registered, bystander = Scaled(2), Scaled(3)
    eager_registered, eager_bystander = _eager_twin(registered), _eager_twin(bystander)
    jit.register(registered)
    try:
        with jit.enabled(backend=counting):
            for seed in range(3):
                x = randn(4, 3, seed=seed)
                assert_same(eager_registered(x), registered(x))
                assert_same(eager_bystander(x), bystander(x))
        assert registered.log == eager_registered.log
        assert bystander.log == eager_bystander.log
        assert counting.graph_count == 1  # the bystander never reached a backend
    finally:
        jit.unregister(registered)


def test_jit_compile_and_register_agree_with_eager_on_results_and_side_effects():
    model = Scaled(4)
    eager, via_compile = _eager_twin(model), _eager_twin(model)
    compiled = jit.compile(via_compile, backend="eager")
    jit.register(model)
    try:
        with jit.enabled(backend="eager"):
            for seed in range(3):
                x = randn(2, 3, seed=seed)
                expected = eager(x)
                assert_same(expected, compiled(x))
                assert_same(expected, model(x))
        assert model.log == via_compile.log == eager.log
    finally:
        jit.unregister(model)


def test_block_left_by_an_exception_restores_the_class_forward_and_leaves_the_module_plain():
    model = Scaled(5)
    original = Scaled.forward.__code__
    jit.register(model)
    try:
        with pytest.raises(KeyError):
            with jit.enabled(backend="eager"):
                model(randn(2, 3))
                model(randn(2, 3))
                assert Scaled.forward.__code__ is not original  # the class's forward carries the prologue
                raise KeyError("leave")
        assert Scaled.forward.__code__ is original
        assert "forward" not in vars(model)
        x = randn(2, 3, seed=9)
        assert_same(model.lin(x).relu() * 2, model(x))
    finally:
        jit.unregister(model)


def test_unregistering_inside_the_block_makes_the_instance_run_natively(counting):
    model = Scaled(6)
    jit.register(model)
    with jit.enabled(backend=counting):
        model(randn(2, 3))
        model(randn(2, 3))
        jit.unregister(model)
        x = randn(5, 3, seed=3)  # a new shape: a dispatching instance would capture again
        assert_same(model.lin(x).relu() * 2, model(x))
    assert counting.graph_count == 1
