"""A module class with a `__call__` of its own: calling an instance runs that `__call__` (not forward), inlined
where the module is called, and a break under it runs it in Python."""
import io

import torch
from torch import nn

from tests.support import check_against_eager, randn

SINK = io.StringIO()


class Scaled(nn.Module):
    def __call__(self, x):
        return self.forward(x) * 100

    def forward(self, x):
        return x + 1


class Delegating(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def __call__(self, *args, **kwargs):
        return super().__call__(*args, **kwargs) - 1

    def forward(self, x):
        return self.lin(x)


class Breaking(Scaled):
    def __call__(self, x):
        print("own call", file=SINK)
        return self.forward(x) * 100


class Holder(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return self.inner(x.sin()).cos()


def test_own_call_runs_instead_of_forward_matches_eager():
    check_against_eager(Holder(Scaled()), (randn(2, 4),), expected_graphs=1)


def test_own_call_delegating_to_module_call_matches_eager():
    torch.manual_seed(0)
    check_against_eager(Holder(Delegating()), (randn(2, 4),), expected_graphs=None)


def test_break_inside_own_call_matches_eager():
    check_against_eager(Holder(Breaking()), (randn(2, 4),), expected_graphs=None)
