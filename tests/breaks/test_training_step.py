"""A training step written as one function: the forward and the loss are one graph, `loss.backward()` is one
break (the call runs autograd natively, never traced into autograd's Python), `optimizer.step()` and
`zero_grad()` break cleanly at their calls; parameters and gradients equal eager's over several steps."""

import copy

import torch
import torch.nn.functional as F

import jitcore as jit
from tests.support import CountingBackend


def _setup(seed=0):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    return model


def _make_step(model, opt, zero_first=False):
    def step(x, y):
        if zero_first:
            opt.zero_grad()
        out = model(x)
        loss = F.cross_entropy(out, y)
        loss.backward()
        grads = [p.grad.clone() for p in model.parameters()] if zero_first else None
        opt.step()
        if not zero_first:
            opt.zero_grad()
        return loss, grads
    return step


def _batches(n=4):
    g = torch.Generator().manual_seed(1)
    return [(torch.randn(5, 8, generator=g), torch.randint(0, 4, (5,), generator=g)) for _ in range(n)]


def _run(optimizer_cls, compiled: bool, zero_first=False, register=False, **opt_kwargs):
    model = _setup()
    opt = optimizer_cls(model.parameters(), **opt_kwargs)
    step = _make_step(model, opt, zero_first)
    counting = CountingBackend()
    if compiled and not register:
        step = jit.compile(step, backend=counting)
    losses, grads = [], []
    for x, y in _batches():
        if register:
            jit.register(step)
            with jit.enabled(backend=counting):
                loss, g = step(x, y)
            jit.unregister(step)
        else:
            loss, g = step(x, y)
        losses.append(loss.detach())
        grads.append(g)
    return model, losses, grads, counting


def _assert_same_training(optimizer_cls, zero_first=False, **opt_kwargs):
    eager_model, eager_losses, eager_grads, _ = _run(optimizer_cls, False, zero_first, **opt_kwargs)
    for register in (False, True):
        model, losses, grads, counting = _run(optimizer_cls, True, zero_first, register=register, **opt_kwargs)
        for a, b in zip(eager_losses, losses):
            torch.testing.assert_close(a, b)
        if zero_first:
            for ga, gb in zip(eager_grads, grads):
                for a, b in zip(ga, gb):
                    torch.testing.assert_close(a, b)
        for a, b in zip(eager_model.parameters(), model.parameters()):
            torch.testing.assert_close(a, b)
    return counting


def test_sgd_step_matches_eager_with_one_forward_graph():
    counting = _assert_same_training(torch.optim.SGD, lr=0.1, momentum=0.9)
    assert counting.graph_count >= 1


def test_adam_step_with_gradients_read_matches_eager():
    _assert_same_training(torch.optim.Adam, zero_first=True, lr=0.01)


def test_breaks_are_at_backward_step_and_zero_grad_only():
    model = _setup()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    step = _make_step(model, opt)
    x, y = _batches(1)[0]
    report = jit.explain(step, x, y)
    assert [b.kind for b in report.breaks] == ["autograd", "autograd", "autograd"], report.breaks
    assert report.graph_count == 1
    forward = report.graphs[0]
    assert forward.op_count >= 4  # two linears, relu, cross_entropy


def test_autograd_backward_function_breaks_once():
    model = _setup()

    def step(x):
        loss = model(x).square().mean()
        torch.autograd.backward(loss)
        return loss.detach() * 2

    reference = copy.deepcopy(model)
    x = torch.randn(3, 8)
    counting = CountingBackend()
    compiled = jit.compile(step, backend=counting)
    got = compiled(x)
    loss = reference(x).square().mean()
    loss.backward()
    torch.testing.assert_close(got, loss.detach() * 2)
    for a, b in zip(reference.parameters(), model.parameters()):
        torch.testing.assert_close(a.grad, b.grad)
    assert [b.kind for b in jit.explain(step, x).breaks] == ["autograd"]
