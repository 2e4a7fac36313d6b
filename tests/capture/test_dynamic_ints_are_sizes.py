"""Python int arguments made dynamic are sizes of the capture's ShapeEnv (Note [Dynamic ints are sizes],
capture/values/symint.py): they stay symbolic where a size does, and what tracing relied on is guarded as a relation.
"""
from __future__ import annotations

import torch

import jitcore as jit
from tests.support import CountingBackend, compare_call


def _full(n):
    return torch.full((n, 2), 1.5) * 2


def test_an_int_used_as_a_size_takes_two_graphs_over_a_sweep():
    counting = CountingBackend()
    compiled = jit.compile(_full, backend=counting)
    for n in (2, 3, 4, 5, 6):
        compare_call(_full, compiled, (n,))
    assert counting.graph_count == 2


def test_an_int_argument_is_symbolic_from_the_first_call_under_dynamic_true():
    counting = CountingBackend()

    def scale(x, k):
        return x * k + k

    compiled = jit.compile(scale, backend=counting, dynamic=True)
    for k in (2, 3, 4, 5):
        compare_call(scale, compiled, (torch.randn(3), k))
    assert counting.graph_count == 1


def _view(x, k):
    return x.view(k, -1).sum(0)


def test_a_view_by_an_int_guards_divisibility_and_raises_as_eager_where_it_fails():
    counting = CountingBackend()
    compiled = jit.compile(_view, backend=counting)
    for k in (2, 3, 4, 6):
        compare_call(_view, compiled, (torch.randn(12), k))
    error = compare_call(_view, compiled, (torch.randn(12), 5))
    assert isinstance(error, RuntimeError)
    compare_call(_view, compiled, (torch.randn(12), 12))


def _branch(x, k):
    if k > 3:
        return x[-k:] * 2
    return x[:k] - 1


def test_a_branch_on_a_dynamic_int_gives_one_graph_per_side():
    counting = CountingBackend()
    compiled = jit.compile(_branch, backend=counting)
    for k in (2, 3, 4, 5, 6, 2, 3, 7):
        compare_call(_branch, compiled, (torch.randn(8), k))
    assert counting.graph_count == 3  # k = 2 static, then one dynamic graph per side of `k > 3`


def _range(x, k):
    return torch.stack([x * i for i in range(k)]).sum(0)


def test_an_int_python_needs_as_a_number_is_specialised_and_never_reused_for_another():
    counting = CountingBackend()
    compiled = jit.compile(_range, backend=counting)
    for k in (2, 3, 4, 3, 2, 4):
        compare_call(_range, compiled, (torch.ones(2), k))
    assert counting.graph_count == 3


def _split(x, first):
    head, tail = torch.split(x, [first, x.shape[0] - first])
    return head.sum(0), tail * 2


def test_split_sizes_from_an_int_and_a_size_stay_symbolic():
    counting = CountingBackend()
    compiled = jit.compile(_split, backend=counting)
    for n, first in ((5, 2), (6, 2), (7, 3), (8, 1), (4, 4)):
        compare_call(_split, compiled, (torch.randn(n, 3), first))
    assert counting.graph_count <= 4


def _ones_of_int(x):
    return torch.ones(int(x.shape[0])) * 2


def test_int_of_a_size_is_the_size_itself():
    counting = CountingBackend()
    compiled = jit.compile(_ones_of_int, backend=counting)
    for n in (2, 3, 4, 5):
        compare_call(_ones_of_int, compiled, (torch.randn(n),))
    assert counting.graph_count == 2


def _item_as_size(x, k):
    n = int(k.item())
    return torch.ones(n) * x.sum()


def test_a_number_read_by_item_before_a_break_becomes_a_symbolic_size_after_it():
    counting = CountingBackend()
    compiled = jit.compile(_item_as_size, backend=counting)
    for n in (2, 3, 4, 5, 6):
        compare_call(_item_as_size, compiled, (torch.randn(3), torch.tensor(n)))
    assert counting.graph_count == 2
