"""Only the user's code is traced: torch's own machinery (the autograd engine, optimizers, functions torch marks
not-to-compile with torch._dynamo.disable / torch._disable_dynamo) is called in Python at a graph break, never
traced into and never given a compiled copy (Note [Only the user's code] in runtime/autoenable.py)."""
import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import jitcore as jit
from jitcore.capture.values.torch_rules import is_torch_runtime
from tests.support import CountingBackend, randn


def _train_step(model, opt, x, y):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


def _labels(seed):
    return torch.randint(0, 4, (5,), generator=torch.Generator().manual_seed(seed))


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))


def _run_steps(step, model, opt, steps=4):
    losses = []
    for seed in range(steps):
        losses.append(step(model, opt, randn(5, 8, seed=seed), _labels(seed)).detach())
    return losses


@pytest.mark.parametrize("door", ["compile", "register"])
def test_a_training_step_matches_eager_and_breaks_only_at_its_own_lines(door):
    eager_model = _model()
    model = copy.deepcopy(eager_model)
    eager_opt = torch.optim.SGD(eager_model.parameters(), lr=0.1, momentum=0.9)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    counting = CountingBackend()
    if door == "compile":
        losses = _run_steps(jit.compile(_train_step, backend=counting), model, opt)
    else:
        jit.register(_train_step)
        try:
            with jit.enabled(backend=counting):
                losses = _run_steps(_train_step, model, opt)
        finally:
            jit.unregister(_train_step)
    expected = _run_steps(_train_step, eager_model, eager_opt)
    torch.testing.assert_close(losses, expected)
    for (name, p), q in zip(model.named_parameters(), eager_model.parameters()):
        torch.testing.assert_close(p, q, msg=name)
    assert counting.graph_count >= 1  # the forward and the loss
    traced_files = {node.meta.get("stack_trace", "") for gm in counting.graphs for node in gm.graph.nodes}
    assert not any("torch/optim" in trace or "torch/autograd" in trace for trace in traced_files)


def test_explain_reports_the_three_calls_as_breaks_in_the_users_file():
    model = _model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    report = jit.explain(_train_step, model, opt, randn(5, 8), _labels(0))
    assert [(b.filename, b.lineno, b.kind) for b in report.breaks] == [
        (__file__, _train_step.__code__.co_firstlineno + line, "autograd") for line in (1, 3, 4)]
    assert len(report.graphs) == 1


def _log_shapes(x):
    return x.shape[0]


_disabled_by_torch = torch._dynamo.disable(_log_shapes)


def test_a_function_torch_disables_runs_in_python_at_a_break(counting):
    def f(x):
        y = x + 1
        n = _disabled_by_torch(y)
        return y * n

    compiled = jit.compile(f, backend=counting)
    x = randn(3, 2)
    torch.testing.assert_close(compiled(x), f(x))
    report = jit.explain(f, x)
    assert [b.kind for b in report.breaks] == ["torch_runtime"]


@pytest.mark.parametrize("fn", [torch.Tensor.backward, torch.autograd.backward, torch.autograd.grad,
                                torch.optim.SGD.step, torch.optim.Optimizer.zero_grad, _disabled_by_torch])
def test_torch_machinery_is_recognised(fn):
    assert is_torch_runtime(fn)


@pytest.mark.parametrize("fn", [F.cross_entropy, nn.Linear.forward, torch.autograd.function.once_differentiable,
                                _log_shapes])
def test_tensor_code_and_user_code_are_not_torch_machinery(fn):
    assert not is_torch_runtime(fn)
