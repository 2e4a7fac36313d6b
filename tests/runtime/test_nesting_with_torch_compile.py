"""jit.compile and torch.compile nest: the outer compiler wins, as with torch.compile(torch.compile(f)).

torch.compile(jit.compile(f)) traces f with Dynamo (a compiled copy carries Dynamo's nesting marks); a compiled copy
called inside code Dynamo traces is inlined as f; one called natively under torch.compile (after a Dynamo graph
break) runs jitcore's own entries, because Dynamo never compiles a prologue's frame. jit.compile(torch.compile(f))
compiles f with jitcore. (Note [Nesting with torch.compile] in jitcore/runtime/install.py.)
"""
import pytest
import torch

import jitcore as jit
from tests.support import CountingBackend


class _DynamoCounter:
    """A torch.compile backend that counts the graphs Dynamo hands it and runs them as they are."""

    def __init__(self):
        self.graphs = 0

    def __call__(self, gm, example_inputs):
        self.graphs += 1
        return gm.forward


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def f(x):
    return torch.relu(x) * 2 + 1


def test_torch_compile_of_a_compiled_copy_traces_the_function_itself():
    dynamo, counting = _DynamoCounter(), CountingBackend()
    nested = torch.compile(jit.compile(f, backend=counting), backend=dynamo)
    for n in (4, 4):
        x = torch.randn(n)
        assert torch.equal(nested(x), f(x))
    assert dynamo.graphs == 1 and counting.graph_count == 0


def test_torch_compile_of_a_compiled_module_traces_its_forward():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU())
    dynamo = _DynamoCounter()
    nested = torch.compile(jit.compile(model, backend="eager"), backend=dynamo)
    x = torch.randn(2, 3)
    assert torch.allclose(nested(x), model(x)) and torch.allclose(nested(x), model(x))
    assert dynamo.graphs == 1


def test_a_compiled_copy_called_inside_torch_compiled_code_is_inlined_even_across_a_print(capsys):
    def g(x):
        y = x * 2
        print("inside g")
        return y + 1

    copy = jit.compile(g, backend="eager")
    outer = torch.compile(lambda x: copy(x) * 3, backend="eager")
    x = torch.randn(3)
    for _ in range(2):
        assert torch.equal(outer(x), g(x) * 3)
    assert capsys.readouterr().out == "inside g\n" * 4


def test_a_compiled_copy_called_natively_under_torch_compile_runs_jitcore_entries():
    counting = CountingBackend()
    copy = jit.compile(f, backend=counting)

    @torch._dynamo.disable
    def natively(x):
        return copy(x)

    outer = torch.compile(lambda x: natively(x) - 1, backend="eager")
    x = torch.randn(5)
    for _ in range(2):
        assert torch.equal(outer(x), f(x) - 1)
    assert counting.graph_count == 1
    assert [e.native for e in copy._jitcore_cache.entries] == [False]


def test_jit_compile_of_a_torch_compiled_function_or_module_compiles_what_torch_compile_wrapped():
    dynamo, counting = _DynamoCounter(), CountingBackend()
    nested = jit.compile(torch.compile(f, backend=dynamo), backend=counting)
    x = torch.randn(4)
    assert torch.equal(nested(x), f(x)) and torch.equal(nested(x), f(x))
    assert counting.graph_count == 1 and dynamo.graphs == 0

    model = torch.nn.Linear(3, 2)
    compiled = jit.compile(torch.compile(model, backend=dynamo), backend=counting)
    y = torch.randn(2, 3)
    assert torch.allclose(compiled(y), model(y))
    assert counting.graph_count == 2 and dynamo.graphs == 0


def test_jit_compile_of_a_compiled_copy_uses_the_outer_options():
    inner, outer = CountingBackend(), CountingBackend()
    nested = jit.compile(jit.compile(f, backend=inner), backend=outer)
    x = torch.randn(4)
    assert torch.equal(nested(x), f(x))
    assert outer.graph_count == 1 and inner.graph_count == 0


def test_a_function_torch_dynamo_disabled_is_not_unwrapped():
    disabled = torch._dynamo.disable(f)
    x = torch.randn(4)
    assert torch.equal(jit.compile(disabled, backend="eager")(x), f(x))
