"""A graph that computes only numbers from sizes runs as captured, without a backend (Note [Graphs of sizes only],
runtime/pipeline.py), and still gives this call's sizes."""
from __future__ import annotations

import torch

import jitcore as jit
from tests.support import CountingBackend, compare_call


def _sizes(x):
    return x.shape, x.size(1), tuple(s * 2 for s in x.shape)


def test_a_graph_of_size_arithmetic_reaches_no_backend_and_follows_the_sizes():
    counting = CountingBackend()
    compiled = jit.compile(_sizes, backend=counting, dynamic=True)
    for n in (2, 3, 4, 7):
        compare_call(_sizes, compiled, (torch.randn(n, n + 1),))
    assert counting.graph_count == 0


def _sizes_and_sum(x):
    return x.shape[0] * 3, x.sum()


def test_a_graph_with_a_tensor_operation_still_goes_to_the_backend():
    counting = CountingBackend()
    compiled = jit.compile(_sizes_and_sum, backend=counting, dynamic=True)
    for n in (2, 3, 4):
        compare_call(_sizes_and_sum, compiled, (torch.randn(n),))
    assert counting.graph_count == 1
