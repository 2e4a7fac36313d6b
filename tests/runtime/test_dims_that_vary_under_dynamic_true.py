"""Under dynamic=True, a dim that made an entry miss by changing (captured as 1, or made a constant while tracing)
gets a symbol of its own at the recompile, as torch.compile's automatic dynamic gives it: a duck symbol would tie it
to another dim of the same size by chance and recompile again when they part."""
from __future__ import annotations

import torch

import jitcore as jit
from tests.support import CountingBackend, compare_call


def _cat_columns(x, y):
    return torch.cat([x, y], 1).sum(1)


def test_a_dim_that_was_one_does_not_share_a_symbol_after_it_changed():
    counting = CountingBackend()
    compiled = jit.compile(_cat_columns, backend=counting, dynamic=True)
    # x.shape[1]: 1 (specialised), then 2 (the size of x.shape[0]), then 3, 4
    for rows, a, b in ((2, 1, 4), (2, 2, 4), (2, 3, 5), (2, 4, 6)):
        compare_call(_cat_columns, compiled, (torch.randn(rows, a), torch.randn(rows, b)))
    assert counting.graph_count == 2


def _even(x):
    if x.shape[0] % 2 == 0:
        return x.view(2, -1)
    return x + 1


def test_a_branch_on_parity_takes_one_graph_per_side_after_the_first_size():
    counting = CountingBackend()
    compiled = jit.compile(_even, backend=counting, dynamic=True)
    for n in (2, 3, 4, 5, 6, 7, 8):
        compare_call(_even, compiled, (torch.randn(n, 3),))
    assert counting.graph_count <= 3
