"""torch.autograd.Function subclasses called with `.apply`: one graph node whose forward runs on fake tensors while
tracing and for real when the graph runs, so autograd records the user's backward (ctx.save_for_backward, ctx
attributes, needs_input_grad) exactly as eager does; AOTAutograd backends trace that backward into their joint
graph. Gradients equal eager's through both doors and under eager, aot_eager and inductor."""

import pytest
import torch

import jitcore as jit
from tests.support import CountingBackend, randn


class _Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_backward(x)
        ctx.k = k
        return x * k

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        # not the true derivative: proves the user's backward ran
        return grad * ctx.k + x * 0.5, None


class _MulAdd(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b, a + b

    @staticmethod
    def backward(ctx, g_mul, g_add):
        a, b = ctx.saved_tensors
        grad_a = g_mul * b + g_add if ctx.needs_input_grad[0] else None
        grad_b = g_mul * a + g_add if ctx.needs_input_grad[1] else None
        return grad_a, grad_b


def scaled(x):
    return _Scale.apply(x.sin(), 3.0).cos().sum()


def two_outputs(a, b):
    m, s = _MulAdd.apply(a.exp(), b)
    return (m * s).sum()


def _grads(fn, inputs, compiled):
    inputs = [t.detach().clone().requires_grad_(rg) for t, rg in inputs]
    out = compiled(*inputs)
    out.backward()
    return out.detach(), [t.grad for t in inputs]


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
@pytest.mark.parametrize("fn,inputs", [
    (scaled, [(randn(4, seed=1), True)]),
    (two_outputs, [(randn(3, seed=1), True), (randn(3, seed=2), True)]),
    (two_outputs, [(randn(3, seed=1), True), (randn(3, seed=2), False)]),
], ids=["scale", "two_outputs", "needs_input_grad"])
def test_function_apply_is_one_graph_with_the_users_backward(backend, fn, inputs):
    if backend == "inductor":
        pytest.importorskip("torch._inductor")
    counting = CountingBackend(backend)
    expected = _grads(fn, inputs, fn)
    got = _grads(fn, inputs, jit.compile(fn, backend=counting))
    torch.testing.assert_close(got[0], expected[0])
    for a, b in zip(got[1], expected[1]):
        assert (a is None) == (b is None)
        if a is not None:
            torch.testing.assert_close(a, b)
    assert counting.graph_count == 1
    assert not jit.explain(fn, *[t.detach().requires_grad_(rg) for t, rg in inputs]).breaks


def test_function_apply_through_register_and_enabled():
    counting = CountingBackend()
    jit.register(scaled)
    try:
        x = randn(4, seed=3).requires_grad_()
        with jit.enabled(backend=counting):
            out = scaled(x)
        out.backward()
    finally:
        jit.unregister(scaled)
    y = randn(4, seed=3).requires_grad_()
    scaled(y).backward()
    torch.testing.assert_close(x.grad, y.grad)
    assert counting.graph_count == 1


def _python_apply(cls, *args, **kwargs):
    """What torch.autograd.Function.apply was before torch 2.12: a Python classmethod over the C one (bloom's
    GeLUFunction.apply went through it on torch 2.11), which asks torch's C functions jitcore has no rules for."""
    if not torch._C._are_functorch_transforms_active():
        return super(cls, cls).apply(*args, **kwargs)
    raise NotImplementedError


def test_a_python_classmethod_apply_over_the_c_one_is_one_graph_node():
    from jitcore.capture.values.torch_rules import treat_as_function_apply

    class _PyScale(_Scale):
        apply = classmethod(_python_apply)

    treat_as_function_apply(_python_apply)

    def fn(x):
        return _PyScale.apply(x.sin(), 3.0).cos().sum()

    x = randn(4, seed=1)
    counting = CountingBackend("aot_eager")
    expected = _grads(fn, [(x, True)], fn)
    got = _grads(fn, [(x, True)], jit.compile(fn, backend=counting))
    torch.testing.assert_close(got[0], expected[0])
    torch.testing.assert_close(got[1][0], expected[1][0])
    assert counting.graph_count == 1
