"""Floats computed from symbolic sizes (`n / 2`, `math.sqrt(d)`, `float(n)`) stay symbolic, as torch.compile keeps
them (values/symint.py `size_float`); a use that needs the number specialises the sizes they came from."""
from __future__ import annotations

import math

import pytest
import torch

import jitcore as jit
from tests.support import CountingBackend, compare_call


def _scaled(x):
    return x / math.sqrt(x.shape[-1])


@pytest.mark.parametrize("inner", [None, "aot_eager"])
def test_dividing_by_the_square_root_of_a_size_takes_two_graphs(inner):
    counting = CountingBackend(inner)
    compiled = jit.compile(_scaled, backend=counting)
    for d in (2, 3, 4, 5, 6, 7):
        compare_call(_scaled, compiled, (torch.randn(3, d),))
    assert counting.graph_count == 2


def _mean_by_hand(x):
    n = float(x.shape[0])
    return x.sum(0) / n, x.shape[0] / 2


def test_float_of_a_size_and_true_division_stay_symbolic():
    counting = CountingBackend()
    compiled = jit.compile(_mean_by_hand, backend=counting, dynamic=True)
    for n in (2, 3, 5, 8):
        compare_call(_mean_by_hand, compiled, (torch.randn(n, 16),))
    assert counting.graph_count == 1


def _branch_on_ratio(x):
    if x.shape[0] / 2 > 2:
        return x * 2
    return x - 1


def test_a_branch_on_a_float_of_a_size_pins_the_size():
    counting = CountingBackend()
    compiled = jit.compile(_branch_on_ratio, backend=counting, dynamic=True)
    results = [compare_call(_branch_on_ratio, compiled, (torch.ones(n, 2),)) for n in (2, 3, 6, 7, 3)]
    assert [r[0, 0].item() for r in results] == [0.0, 0.0, 2.0, 2.0, 0.0]
