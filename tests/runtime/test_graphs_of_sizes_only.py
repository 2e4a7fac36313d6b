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


def _helper(t):
    if t.sum() > 0:
        return t * 2
    return -t


def _no_grad_then_break(x):
    with torch.no_grad():
        a = _helper(x)
    return a, a.requires_grad, torch.is_grad_enabled()


def test_a_graph_that_only_switches_grad_mode_reaches_no_backend_and_switches_it():
    # the frame's graph before the callee's break holds only the no_grad switch: it runs as captured, so the
    # callee (and its resume function) still run with grad off, and grad is back on after the block
    counting = CountingBackend()
    compiled = jit.compile(_no_grad_then_break, backend=counting)
    for seed in (0, 1):
        x = torch.randn(3, generator=torch.Generator().manual_seed(seed), requires_grad=True)
        compare_call(_no_grad_then_break, compiled, (x,))
    assert not any(all(n.op in ("placeholder", "output") or n.target is torch._C._set_grad_enabled
                       for n in gm.graph.nodes) for gm in counting.graphs)
    assert torch.is_grad_enabled()
