"""The `aot_eager` backend: AOTAutograd's forward and backward graphs, run without a compiler."""

from __future__ import annotations

import torch

from jitcore.backends import lookup
from tests.backends.graphs import grads_of, graph_and_fake_inputs, leaf
from tests.support import assert_same


def sin_mul_and_matmul(x, y):
    return (torch.sin(x) * y + 1, (x @ y.t()).relu())


def test_aot_eager_forward_equals_the_graphs_on_two_input_sets():
    gm, example_inputs = graph_and_fake_inputs(sin_mul_and_matmul, leaf(3, 4, seed=1), leaf(3, 4, seed=2))
    compiled = lookup("aot_eager")(gm, example_inputs)
    for seed in (10, 20):
        inputs = (leaf(3, 4, seed=seed), leaf(3, 4, seed=seed + 1))
        assert_same(gm(*inputs), compiled(*inputs))


def test_aot_eager_returns_a_tuple_when_the_graph_does():
    gm, example_inputs = graph_and_fake_inputs(lambda x: (x.cos(),), leaf(5, seed=1))
    assert type(lookup("aot_eager")(gm, example_inputs)(leaf(5, seed=2))) is tuple


def test_aot_eager_grads_equal_eager_grads():
    x, y = leaf(3, 4, seed=1, requires_grad=True), leaf(3, 4, seed=2, requires_grad=True)
    gm, example_inputs = graph_and_fake_inputs(sin_mul_and_matmul, x, y)
    assert all(example.requires_grad for example in example_inputs)
    compiled = lookup("aot_eager")(gm, example_inputs)
    expected = grads_of(gm(x, y), [x, y])
    actual_outputs = compiled(x, y)
    assert all(output.grad_fn is not None for output in actual_outputs)
    assert_same(expected, grads_of(actual_outputs, [x, y]))


def test_aot_eager_grads_only_for_inputs_that_require_them():
    x, y = leaf(3, 4, seed=1, requires_grad=True), leaf(3, 4, seed=2)
    gm, example_inputs = graph_and_fake_inputs(sin_mul_and_matmul, x, y)
    compiled = lookup("aot_eager")(gm, example_inputs)
    assert_same(grads_of(gm(x, y), [x, y]), grads_of(compiled(x, y), [x, y]))


def test_aot_eager_backward_method_accumulates_like_eager():
    x = leaf(3, 4, seed=1, requires_grad=True)
    gm, example_inputs = graph_and_fake_inputs(lambda x: ((x * x).sum(),), x)
    lookup("aot_eager")(gm, example_inputs)(x)[0].backward()
    assert_same(2 * x.detach(), x.grad)


def test_aot_eager_applies_input_mutation_to_the_real_input():
    def add_in_place(x, y):
        x.add_(y)
        return (x * 2,)

    gm, example_inputs = graph_and_fake_inputs(add_in_place, leaf(4, seed=1), leaf(4, seed=2))
    compiled = lookup("aot_eager")(gm, example_inputs)
    expected_x, actual_x, y = leaf(4, seed=3), leaf(4, seed=3), leaf(4, seed=4)
    assert_same(gm(expected_x, y), compiled(actual_x, y))
    assert_same(expected_x, actual_x)


def test_aot_eager_keeps_a_single_tensor_output_unwrapped():
    gm, example_inputs = graph_and_fake_inputs(lambda x: x.exp() - 1, leaf(2, 3, seed=1))
    inputs = (leaf(2, 3, seed=2),)
    assert_same(gm(*inputs), lookup("aot_eager")(gm, example_inputs)(*inputs))


def test_aot_eager_accepts_real_example_inputs():
    x, y = leaf(3, 4, seed=1, requires_grad=True), leaf(3, 4, seed=2)
    gm, _ = graph_and_fake_inputs(sin_mul_and_matmul, x, y)
    compiled = lookup("aot_eager")(gm, [x, y])
    assert_same(gm(x, y), compiled(x, y))


def test_aot_eager_returns_a_list_when_the_graph_does():
    gm, example_inputs = graph_and_fake_inputs(lambda x: [x.cos(), x.sin()], leaf(5, seed=1))
    inputs = (leaf(5, seed=2),)
    assert_same(gm(*inputs), lookup("aot_eager")(gm, example_inputs)(*inputs))
