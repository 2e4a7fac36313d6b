"""Python ints that are graph inputs instead of constants ("automatic dynamic"): a loop counter or a step number
that changes on every call would otherwise recompile every time.

A source becomes dynamic after its int value made a cache entry miss (runtime/cache.py). Its value is a SymInt of
the capture's ShapeEnv: arithmetic with other ints stays symbolic (FX nodes), and it feeds tensor arithmetic as a
scalar. Anything that needs the concrete number (a branch, range(), indexing, a size) specializes it: the roots it
came from get an equality guard and the value becomes a constant, as if it had never been dynamic.
"""
from __future__ import annotations

import dataclasses
import operator


from jitcore.capture.values.base import Value, NOT_CONSTANT
from jitcore.capture.values.constant import const

__all__ = ["SymIntValue", "make_dynamic_int"]

#: operators that keep an int symbolic
_ARITHMETIC = frozenset({"add", "sub", "mul", "floordiv", "mod", "iadd", "isub", "imul", "ifloordiv", "imod"})


class _SymbolName(str):
    """A source name torch's ShapeEnv can use both as `source.name` and `source.name()` (it changed)."""

    def __call__(self):
        return str(self)


def _shape_source(user_name: str):
    from torch._guards import Source, GuardSource

    @dataclasses.dataclass(frozen=True)
    class _JitSource(Source):
        label: str

        @property
        def name(self):
            return _SymbolName(self.label)

        def guard_source(self):
            return GuardSource.LOCAL

    return _JitSource(user_name)


def make_dynamic_int(state, value: int, source):
    from torch.fx.experimental.symbolic_shapes import DimDynamic
    graph = state.graph
    env = graph.fake_mode.shape_env
    sym = env.create_unspecified_symint_and_symbol(value, _shape_source(source.user_name), DimDynamic.DYNAMIC)
    node = graph.add_scalar_input(source, sym)
    result = SymIntValue(node, sym, state.ctx, source)
    result.roots = (result,)
    graph.inputs[source] = result
    return result


class SymIntValue(Value):
    __slots__ = ("node", "fake", "ctx", "roots", "_constant")

    def __init__(self, node, sym, ctx, source=None):
        super().__init__(source)
        self.node = node
        self.fake = sym
        self.ctx = ctx
        #: the dynamic inputs this value was computed from
        self.roots = ()
        self._constant = None

    def python_type(self):
        return int

    def is_symbolic_number(self) -> bool:
        return self._constant is None

    def constant(self):
        """Asking for the number relies on it: the roots get equality guards, and the value is specialized."""
        if self._constant is None:
            from guards.checks import EqualsMatch
            for root in self.roots:
                self.ctx.guard(root.source, EqualsMatch(int(root.fake.node.hint)))
            self._constant = int(self.fake.node.hint)
        return self._constant

    def _concrete(self):
        return const(self.constant())

    def binary_op(self, state, op, other, reflected):
        if self._constant is None and op in _ARITHMETIC:
            other_sym = getattr(other, "is_symbolic_number", None)
            if other_sym is not None and other_sym():
                fake_other, node_other, roots = other.fake, other.node, other.roots
            elif type(other.constant()) is int:
                fake_other = node_other = other.constant()
                roots = ()
            else:
                fake_other = None
            if fake_other is not None:
                fn = getattr(operator, op.removeprefix("i") if op.startswith("i") else op)
                a, b = (fake_other, self.fake) if reflected else (self.fake, fake_other)
                na, nb = (node_other, self.node) if reflected else (self.node, node_other)
                sym = fn(a, b)
                node = state.graph.create_node("call_function", fn, (na, nb), {}, sym)
                result = SymIntValue(node, sym, self.ctx)
                result.roots = tuple(dict.fromkeys(self.roots + roots))
                return result
        if other.is_tensor():
            return NotImplemented
        return self._concrete().binary_op(state, op, other, reflected)

    def unary_op(self, state, op):
        if self._constant is None and op == "neg":
            sym = -self.fake
            node = state.graph.create_node("call_function", operator.neg, (self.node,), {}, sym)
            result = SymIntValue(node, sym, self.ctx)
            result.roots = self.roots
            return result
        return self._concrete().unary_op(state, op)

    def truth(self, state):
        return bool(self.constant())

    def length(self, state):
        return self._concrete().length(state)

    def iterate(self, state):
        return self._concrete().iterate(state)

    def getitem(self, state, key):
        return self._concrete().getitem(state, key)

    def getattr(self, state, name):
        return self._concrete().getattr(state, name)

    def contains(self, state, item):
        return self._concrete().contains(state, item)

    def as_fx_arg(self, state):
        return self.node if self._constant is None else self._constant

    def as_fake(self, state):
        return self.fake if self._constant is None else self._constant

    def reconstruct(self, codegen):
        if self.source is not None:
            return self.source.emit(codegen)
        return codegen.constant(self.constant())

    def __repr__(self):
        return f"SymInt({self.fake})"


