"""`if self.layer:` on a module is Python's truth: the class's own __bool__, else its __len__ (an empty Sequential
or ModuleList is false), else True; the lookups are guarded, a Python hook is traced (HF MobileViT's
`if self.downsampling_layer:` broke every block out of its graph)."""

import torch

import jitcore as jit
from tests.support import check_against_eager, check_registered_against_eager, randn


class _Flag(torch.nn.Module):
    def __init__(self, on):
        super().__init__()
        self.on = on

    def __bool__(self):
        return self.on

    def forward(self, x):
        return x


class _Sized(torch.nn.Module):
    def __len__(self):
        return 0


class _Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.down = torch.nn.Linear(4, 4)
        self.empty = torch.nn.Sequential()
        self.full = torch.nn.ModuleList([torch.nn.ReLU()])
        self.off = _Flag(False)
        self.on = _Flag(True)
        self.sized = _Sized()

    def forward(self, x):
        if self.down:
            x = self.down(x)
        if self.empty:
            x = x + 100
        if self.full:
            x = x * 2
        if self.off:
            x = x - 100
        if self.on and not self.sized:
            x = x + 1
        return x


def test_truth_of_modules_is_pythons_and_stays_in_the_graph():
    model = _Model()
    check_against_eager(model, (randn(2, 4, seed=1),), (randn(2, 4, seed=2),), expected_graphs=1)
    check_registered_against_eager(model, (randn(2, 4, seed=1),))
    assert not jit.explain(model, randn(2, 4)).breaks


def test_a_container_filled_later_recompiles():
    model = _Model()
    compiled = jit.compile(model, backend="eager")
    x = randn(2, 4)
    torch.testing.assert_close(compiled(x), model(x))
    model.empty.append(torch.nn.Identity())
    torch.testing.assert_close(compiled(x), model(x))
    model.off.on = True
    torch.testing.assert_close(compiled(x), model(x))
