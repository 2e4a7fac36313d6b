"""`torch.tensor(n)` of a symbolic size stays symbolic (torch._refs.tensor in the graph, as torch.compile's), so a
sweep over sizes does not compile one graph per size."""
from __future__ import annotations

import torch

import jitcore as jit
from tests.support import CountingBackend, compare_call


def _plus_length(x):
    return x + torch.tensor(x.shape[0]), torch.tensor([x.shape[0], 2], dtype=torch.float32)


def test_tensor_of_a_size_takes_two_graphs_over_a_sweep():
    counting = CountingBackend()
    compiled = jit.compile(_plus_length, backend=counting)
    for n in (2, 3, 4, 5, 6):
        compare_call(_plus_length, compiled, (torch.randn(n, 2),))
    assert counting.graph_count == 2


def test_tensor_of_constants_is_unchanged():
    counting = CountingBackend()

    def f(x):
        return x + torch.tensor([1.0, 2.0])

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (torch.randn(3, 2),))
    assert counting.graph_count == 1
