"""Builtins and math functions of sizes stay symbolic (capture/values/symint.py `symbolic_call`), as torch.compile
keeps them: `math.ceil(n / 4)`, `max(x.shape)`, `abs(n - 2)`, `n ** 2`, `divmod(n, 3)`, `bool(n - 3)` take no more
graphs over a size sweep than torch.compile's two (one static, one symbolic), and every call equals eager.
"""
from __future__ import annotations

import math

import pytest
import torch

import jitcore as jit
from tests.support import CountingBackend, compare_call


def _ceil(x):
    return x.new_zeros(math.ceil(x.shape[0] / 4)) + math.floor(x.shape[0] / 3) + round(x.shape[0] / 2)


def _int_of_float(x):
    return x.new_ones(int(x.shape[0] / 2)), math.trunc(x.shape[0] / 3)


def _extremes(x):
    return x[: min(x.shape[0], 4)] * max(x.shape), max(x.shape[0], 3, x.shape[1])


def _abs_pow(x):
    return x * abs(2 - x.shape[0]) + x.shape[0] ** 2 + pow(x.shape[0], 3)


def _divmod(x):
    q, r = divmod(x.shape[0], 3)
    return x * q - r


def _truth(x):
    return x * bool(x.shape[0] - 3)


def _prod(x):
    return x.view(-1) * math.prod(x.shape), math.prod(x.shape, start=2)


def _size_of_list(x):
    return x.new_ones(torch.Size([x.shape[0], 2])), torch.Size([x.shape[0], 2])


def _index(x):
    # Tensor.__getitem__ would turn the symbolic index into an int (`__index__`): captured as select on dim 0
    return x[x.shape[0] - 1] + x[len(x) // 2] + x[-(x.shape[0] // 2)]


@pytest.mark.parametrize("fn, graphs", [(_index, 2), (_ceil, 3), (_int_of_float, 2), (_extremes, 2), (_abs_pow, 2), (_divmod, 2),
                                        (_prod, 2), (_size_of_list, 2)],
                         ids=lambda f: getattr(f, "__name__", "").strip("_"))
def test_a_size_sweep_takes_as_many_graphs_as_torch_compile(fn, graphs):
    # torch.compile's counts on this sweep: two (static, then symbolic); _ceil three (ceil(n / 4) turns from 1 to 2)
    counting = CountingBackend()
    compiled = jit.compile(fn, backend=counting)
    for n in (2, 3, 4, 5, 7, 9, 4):
        compare_call(fn, compiled, (torch.randn(n, 5),))
    assert counting.graph_count == graphs


def test_bool_of_a_size_guards_its_truth_not_its_value():
    counting = CountingBackend()
    compiled = jit.compile(_truth, backend=counting)
    for n in (2, 4, 5, 6, 3, 7, 3):
        compare_call(_truth, compiled, (torch.randn(n, 2),))
    assert counting.graph_count == 3  # static 2; symbolic with n != 3; symbolic with n == 3


def test_size_slices_sums_and_products_are_sizes():
    def f(x):
        return x.shape[1:], (1,) + x.shape, x.shape * 2, x.shape + (1,), x.shape.numel(), x.size()[:1]

    compiled = jit.compile(f, backend="eager", dynamic=True)
    for n in (2, 3, 5):
        result = compare_call(f, compiled, (torch.randn(n, 3, 4),))
        assert [type(item) for item in result] == [torch.Size] * 4 + [int, torch.Size]
