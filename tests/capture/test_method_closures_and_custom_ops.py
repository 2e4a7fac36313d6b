"""Two mechanisms mixture-of-experts models in transformers rely on:
- a closure cell of a function inlined without a source (a method a decorator made, found on its class) is read
  through the cell itself (the guard root `held`), guarded like any other read: a registry captured by the closure
  is followed into the graph, and rebinding the cell's contents recompiles instead of giving a stale result;
- `torch.ops.<namespace>.<op>` (aten's and custom ops made with torch.library) is one graph node.
"""

import torch

import jitcore as jit
from tests.support import CountingBackend, check_against_eager, check_registered_against_eager, randn


def _decorate(cls, registry):
    original = cls.forward

    def forward(self, x):
        impl = registry.get(self.kind, original)
        return impl(self, x)

    cls.forward = forward
    return cls


class _Experts(torch.nn.Module):
    kind = "scaled"

    def forward(self, x):
        return x + 1


_REGISTRY = {"scaled": lambda self, x: x * 3}
_Decorated = _decorate(_Experts, _REGISTRY)


def test_closure_of_a_decorated_method_is_followed_into_the_graph():
    module = _Decorated()
    check_against_eager(module, (randn(3, seed=1),), expected_graphs=1)
    check_registered_against_eager(module, (randn(3, seed=2),))
    assert not jit.explain(module, randn(3)).breaks


def test_changing_what_the_closure_holds_recompiles():
    module = _Decorated()
    counting = CountingBackend()
    compiled = jit.compile(module, backend=counting)
    x = randn(3)
    assert torch.equal(compiled(x), x * 3)
    _REGISTRY["scaled"] = lambda self, x: x * 5
    try:
        assert torch.equal(compiled(x), x * 5)
    finally:
        _REGISTRY["scaled"] = lambda self, x: x * 3
    assert counting.graph_count == 2


def _rebinding_closure():
    factor = 2.0

    class Scale(torch.nn.Module):
        def forward(self, x):
            return x * factor

    def set_factor(value):
        nonlocal factor
        factor = value

    return Scale(), set_factor


def test_rebinding_a_method_closure_recompiles():
    module, set_factor = _rebinding_closure()
    compiled = jit.compile(module, backend="eager")
    x = randn(3)
    assert torch.equal(compiled(x), x * 2)
    set_factor(4.0)
    assert torch.equal(compiled(x), x * 4)


@torch.library.custom_op("jitcore_test::scaled_add", mutates_args=())
def _scaled_add(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
    return x + alpha * y


@_scaled_add.register_fake
def _(x, y, alpha):
    return torch.empty_like(x)


def custom_op_call(x, y):
    return torch.ops.jitcore_test.scaled_add(x.sin(), y, 2.0).cos()


def aten_overload_call(x):
    return torch.ops.aten.mul.Tensor(x, x) + 1


def test_torch_ops_are_graph_nodes():
    for fn, args in [(custom_op_call, (randn(3, seed=1), randn(3, seed=2))), (aten_overload_call, (randn(3),))]:
        counting = check_against_eager(fn, args, expected_graphs=1)
        assert not jit.explain(fn, *args).breaks
        check_registered_against_eager(fn, args)
        assert counting.op_count >= 2
