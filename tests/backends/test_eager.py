"""The `eager` backend: the graph's own generated code, called as it is."""

from __future__ import annotations

import torch

from jitcore.backends import lookup
from tests.backends.graphs import graph_and_fake_inputs, leaf
from tests.support import assert_same


def affine_relu(x, w, b):
    return (torch.relu(x @ w + b), x.sum(dim=1))


def test_eager_returns_the_graphs_forward():
    gm, example_inputs = graph_and_fake_inputs(affine_relu, leaf(4, 3, seed=1), leaf(3, 2, seed=2), leaf(2, seed=3))
    assert lookup("eager")(gm, example_inputs) == gm.forward


def test_eager_result_equals_the_graphs_on_two_input_sets():
    gm, example_inputs = graph_and_fake_inputs(affine_relu, leaf(4, 3, seed=1), leaf(3, 2, seed=2), leaf(2, seed=3))
    compiled = lookup("eager")(gm, example_inputs)
    for seed in (10, 20):
        inputs = (leaf(4, 3, seed=seed), leaf(3, 2, seed=seed + 1), leaf(2, seed=seed + 2))
        assert_same(gm(*inputs), compiled(*inputs))
