"""torch.compile of what jit.compile made gives eager's results and gradients (Note [Nesting with torch.compile] in
runtime/install.py): Dynamo traces the user's function, never jitcore's prologue, with or without fullgraph, for a
function with a graph break and a module with a data-dependent branch."""
import pytest
import torch
import torch.nn as nn
import torch._dynamo.testing

import jitcore as jit


def _with_a_break(x):
    y = x.sin()
    print("between")
    return y * 2


class _Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        y = self.lin(x)
        if y.sum() > 0:
            return y.relu()
        return y - 1


def _whole(x):
    return (x.cos() + 1).sum(dim=0)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_torch_compile_of_a_compiled_function_with_a_break_matches_eager(backend, capsys):
    torch._dynamo.reset()
    compiled = torch.compile(jit.compile(_with_a_break, backend="eager"), backend=backend)
    x = torch.randn(4, 3)
    for _ in range(2):
        torch.testing.assert_close(compiled(x), _with_a_break(x))
    assert capsys.readouterr().out.count("between") == 4  # once per call, compiled or eager


def test_torch_compile_fullgraph_of_a_compiled_function_is_one_dynamo_graph():
    torch._dynamo.reset()
    counter = torch._dynamo.testing.CompileCounter()
    compiled = torch.compile(jit.compile(_whole, backend="eager"), backend=counter, fullgraph=True)
    x = torch.randn(4, 3)
    torch.testing.assert_close(compiled(x), _whole(x))
    assert counter.frame_count == 1


def test_torch_compile_of_a_compiled_module_matches_eager_results_and_gradients():
    torch._dynamo.reset()
    model = _Branchy()
    compiled = torch.compile(jit.compile(model, backend="eager"), backend="aot_eager")
    for sign in (1.0, -1.0):
        x = (torch.randn(4, 3) * sign).requires_grad_()
        x_eager = x.detach().clone().requires_grad_()
        out, expected = compiled(x), model(x_eager)
        torch.testing.assert_close(out, expected)
        out.sum().backward()
        grads = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        expected.sum().backward()
        torch.testing.assert_close(x.grad, x_eager.grad)
        for got, want in zip(grads, [p.grad for p in model.parameters()]):
            torch.testing.assert_close(got, want)
        model.zero_grad()
