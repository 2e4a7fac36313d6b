"""Python floats that vary are graph inputs as under torch.compile's `specialize_float=False`: after one change
(automatic), or from the first call under `dynamic=True` (with ints, also those inside a tuple, list or dict
argument); an op on a tensor with symbolic sizes does not pin a float that only scales values, and `a ** 2` stays
symbolic. A float that decides a size (interpolate's scale_factor) is pinned, and every call equals eager.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

import jitcore as jit
from tests.support import CountingBackend, compare_call

FLOATS = (0.5, 1.5, 2.5, 3.25, 1.5)


def _sweep(fn, make_args, dynamic=None):
    counting = CountingBackend()
    compiled = jit.compile(fn, backend=counting, dynamic=dynamic)
    for index, a in enumerate(FLOATS):
        compare_call(fn, compiled, make_args(index, a))
    return counting


def _scale(x, a):
    return x * a + a * 2


def test_a_float_is_a_graph_input_from_the_first_call_under_dynamic_true():
    counting = _sweep(_scale, lambda i, a: (torch.randn(3, 4), a), dynamic=True)
    assert counting.graph_count == 1
    assert "a" in [node.name for node in counting.graphs[0].graph.nodes if node.op == "placeholder"]


def test_a_varying_float_with_varying_rows_takes_two_graphs():
    counting = _sweep(_scale, lambda i, a: (torch.randn(i + 2, 4), a))
    assert counting.graph_count == 2


def test_a_float_squared_stays_symbolic():
    def f(x, a):
        return x.abs() + a ** 2

    assert _sweep(f, lambda i, a: (torch.randn(3), a)).graph_count == 2


def test_ints_and_floats_inside_a_tuple_argument_are_dynamic_under_dynamic_true():
    def f(x, bounds):
        low, high = bounds
        return x.clamp(low, high) * len(bounds)

    assert _sweep(f, lambda i, a: (torch.randn(3, 4), (-a, a)), dynamic=True).graph_count == 1


def test_a_float_that_decides_a_size_is_pinned_and_equals_eager():
    def f(x, a):
        return F.interpolate(x, scale_factor=a, mode="nearest") * a

    counting = _sweep(f, lambda i, a: (torch.randn(1, 2, 8), a), dynamic=True)
    assert counting.graph_count == 4  # one per distinct factor: the output length is floor(8 * a)
