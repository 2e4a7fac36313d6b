"""An object a break's call makes (a class's constructor run natively, such as `nn.Sequential(*blocks)` over the
modules of another) is a new object on every call: the resume function receives it held by structure, never
guarded by its identity, so later calls do not recompile (Note [Instances shared by structure])."""

import torch
from torch import nn

import jitcore as jit
from tests.support import CountingBackend, randn

torch.manual_seed(0)
NET = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))


def head_of(x):
    head = nn.Sequential(*list(NET)[:2])  # modules with parameters: built at a break
    return head(x).sum(-1)


def test_a_module_made_at_a_break_is_not_guarded_by_identity():
    backend = CountingBackend()
    fn = jit.compile(head_of, backend=backend)
    counts = []
    for seed in range(3):
        x = randn(2, 3, seed=seed)
        torch.testing.assert_close(fn(x), head_of(x))
        counts.append(backend.graph_count)
    assert counts[0] == counts[-1], counts

