"""nn.Module.to(...) and its shorthands inside forward: traced as the module itself when they change nothing, a graph
break that runs the conversion in Python otherwise (Note [A module conversion that changes nothing]).
"""
import pytest
import torch
from torch import nn

import jitcore as jit
from tests.support import CountingBackend, check_against_eager, randn


class Router(nn.Module):
    """transformers' routers: keep the classifier in the router's dtype by converting it on every call."""

    def __init__(self, dtype=torch.float32):
        super().__init__()
        torch.manual_seed(0)
        self.classifier = nn.Linear(4, 3)
        self.register_buffer("scale", torch.ones(3))
        self.dtype = dtype

    def forward(self, x):
        x = x.to(self.dtype)
        self.classifier = self.classifier.to(self.dtype)
        return self.classifier(x).softmax(-1) * self.scale.to(self.dtype)


class Shorthand(nn.Module):
    def __init__(self, method):
        super().__init__()
        torch.manual_seed(0)
        self.inner = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 2))
        self.method = method

    def forward(self, x):
        inner = getattr(self.inner, self.method)()
        return inner(x) + 1


def torch_compile_graphs(model, x) -> int:
    torch._dynamo.reset()
    counting = CountingBackend()
    torch.compile(model, backend=counting)(x)
    torch._dynamo.reset()
    return counting.graph_count


def test_conversion_to_the_dtype_it_has_is_one_graph_like_torch_compile():
    model = Router()
    counting = check_against_eager(model, (randn(2, 4),), (randn(2, 4, seed=1),), expected_graphs=None)
    assert counting.graph_count == torch_compile_graphs(Router(), randn(2, 4)) == 1
    assert model.classifier.weight.dtype == torch.float32


@pytest.mark.parametrize("method", ["float", "cpu"])
def test_shorthand_that_changes_nothing_is_one_graph(method):
    check_against_eager(Shorthand(method), (randn(3, 4),), expected_graphs=1)


def test_conversion_to_the_device_it_is_on_is_one_graph():
    class ToDevice(Router):
        def forward(self, x):
            self.classifier = self.classifier.to(torch.device("cpu"), non_blocking=True)
            return self.classifier(x)

    check_against_eager(ToDevice(), (randn(2, 4),), expected_graphs=1)


def test_conversion_that_changes_the_dtype_breaks_and_converts_as_eager():
    eager, compiled_model = Router(torch.float64), Router(torch.float64)
    compiled = jit.compile(compiled_model, backend="eager")
    x = randn(2, 4)
    torch.testing.assert_close(compiled(x), eager(x))
    assert compiled_model.classifier.weight.dtype == eager.classifier.weight.dtype == torch.float64
    report = jit.explain(Router(torch.float64), x)
    assert any("nn.Module conversion that changes the module" in brk.reason for brk in report.breaks)
    # converted by the first call, the next one changes nothing
    torch.testing.assert_close(compiled(x), eager(x))


def test_module_converted_between_calls_recompiles():
    model = Router(torch.float64)
    model.classifier.double()
    counting = CountingBackend()
    compiled = jit.compile(model, backend=counting)
    x = randn(2, 4)
    torch.testing.assert_close(compiled(x), Router(torch.float64)(x))
    model.classifier.float()  # now the call converts it again
    expected = Router(torch.float64)
    expected.classifier.float()
    torch.testing.assert_close(compiled(x), expected(x))
    assert model.classifier.weight.dtype == torch.float64


def test_parameter_with_a_gradient_in_its_dtype_is_one_graph():
    model = Router()
    model.classifier.weight.grad = torch.zeros_like(model.classifier.weight)
    check_against_eager(model, (randn(2, 4),), expected_graphs=1)


def test_gradient_of_a_parameter_to_convert_runs_the_conversion_in_python():
    model, expected = Router(torch.float64), Router(torch.float64)
    for m in (model, expected):
        m.classifier.weight.grad = torch.ones_like(m.classifier.weight)
    x = randn(2, 4)
    torch.testing.assert_close(jit.compile(model, backend="eager")(x), expected(x))
    assert model.classifier.weight.grad.dtype == expected.classifier.weight.grad.dtype == torch.float64


def test_gradient_appearing_between_calls_recompiles():
    model = Router()
    counting = CountingBackend()
    compiled = jit.compile(model, backend=counting)
    x = randn(2, 4)
    torch.testing.assert_close(compiled(x), Router()(x))
    model.classifier.bias.grad = torch.ones(3)
    torch.testing.assert_close(compiled(x), Router()(x))
    assert counting.graph_count == 2  # the gradient is read (and guarded) now
    assert model.classifier.bias.grad is not None


def test_integer_dtype_raises_as_eager():
    class ToInt(Router):
        def forward(self, x):
            self.classifier.to(torch.int64)
            return x

    check_against_eager(ToInt(), (randn(2, 4),), expected_graphs=None)
