"""A module class that overrides `__call__` (count calls, transform the inputs, then `super().__call__`): Python
calls the override, not nn.Module's, so capture traces it; the super call runs hooks and forward as usual."""

import torch
from torch import nn

import jitcore as jit
from tests.support import CountingBackend, randn


class Doubling(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(3, 3)
        self.count = 0

    def __call__(self, x, *args, **kwargs):
        self.count += 1
        return super().__call__(x * 2, *args, **kwargs)

    def forward(self, x, bias=0.0):
        return self.fc(x) + bias


def test_an_overridden_call_runs_in_one_graph_with_its_effects():
    eager, compiled = Doubling(), Doubling()

    def run(net, x):
        return net(x) + net(x, bias=1.0)

    backend = CountingBackend()
    fn = jit.compile(run, backend=backend)
    for seed in range(2):
        x = randn(2, 3, seed=seed)
        torch.testing.assert_close(fn(compiled, x), run(eager, x))
        if seed == 0:
            assert backend.graph_count == 1  # no break: the override and both forwards in one graph
    assert compiled.count == eager.count == 4


class Breaking(Doubling):
    def forward(self, x, bias=0.0):
        y = self.fc(x)
        if y.sum() > -1e9:  # a branch on a tensor: a break inside the forward the override reaches
            y = y + bias
        return y


def test_an_overridden_call_is_not_skipped_when_its_forward_breaks():
    eager, compiled = Breaking(), Breaking()

    def run(net, x):
        return net(x).relu()

    fn = jit.compile(run)
    for seed in range(3):
        x = randn(2, 3, seed=seed)
        torch.testing.assert_close(fn(compiled, x), run(eager, x))
    assert compiled.count == eager.count == 3
