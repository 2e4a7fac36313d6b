"""Capture: nn.Module's generator methods (parameters(), named_parameters(), children(), named_modules(),
modules(), buffers()), which use `yield from`, iterated inside forward and inside compiled functions: one graph,
results and gradients as eager, through jit.compile and register + enabled().
"""

import torch
from torch import nn

import jitcore as jit
from tests.support import CountingBackend, check_against_eager, check_registered_against_eager, randn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.a = nn.Linear(3, 3)
        self.b = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 3))
        self.register_buffer("scale", torch.full((3,), 2.0))


class L2Regularised(Net):
    def forward(self, x):
        reg = sum(p.pow(2).sum() for p in self.parameters())
        for child in self.children():
            x = child(x)
        for b in self.buffers():
            x = x * b
        return x + reg


class ByName(Net):
    def forward(self, x):
        params = dict(self.named_parameters())
        out = x @ params["a.weight"].t() + params["b.2.bias"]
        for name, mod in self.named_modules():
            if isinstance(mod, nn.Linear) and name.startswith("b."):
                out = mod(out)
        return out * len(list(self.modules()))


def test_forward_sums_over_self_parameters_and_iterates_children():
    check_against_eager(L2Regularised(), (randn(2, 3, seed=1),), (randn(2, 3, seed=2),), expected_graphs=1)
    assert check_registered_against_eager(L2Regularised(), (randn(2, 3, seed=1),)).graph_count == 1


def test_forward_reads_named_parameters_and_named_modules():
    check_against_eager(ByName(), (randn(2, 3, seed=1),), expected_graphs=1)
    assert check_registered_against_eager(ByName(), (randn(2, 3, seed=1),)).graph_count == 1


def test_module_iterators_on_a_module_passed_to_a_function():
    def f(x, m):
        names = [n for n, _ in m.named_buffers()]
        kinds = [type(c).__name__ for c in m.children()]
        return x + sum(p.numel() for p in m.parameters() if p.requires_grad), names, kinds

    check_against_eager(f, (randn(2, 3, seed=1), Net()), expected_graphs=1)
    assert check_registered_against_eager(f, (randn(2, 3, seed=1), Net())).graph_count == 1


def test_gradients_flow_through_a_regulariser_over_parameters():
    eager, compiled_model = L2Regularised(), L2Regularised()
    compiled_model.load_state_dict(eager.state_dict())
    x = randn(2, 3, seed=3)
    eager(x).sum().backward()
    counting = CountingBackend()
    jit.compile(compiled_model, backend=counting)(x).sum().backward()
    assert counting.graph_count == 1
    for (name, p), q in zip(eager.named_parameters(), compiled_model.parameters()):
        torch.testing.assert_close(p.grad, q.grad, msg=name)


def test_a_parameter_added_later_is_seen():
    def f(x, m):
        return x + sum(p.sum() for p in m.parameters())

    m = Net()
    compiled = jit.compile(f, backend="eager")
    x = randn(2, 3, seed=1)
    torch.testing.assert_close(compiled(x, m), f(x, m))
    m.extra = nn.Parameter(torch.ones(3))
    torch.testing.assert_close(compiled(x, m), f(x, m))
