"""Python ints that are graph inputs instead of constants ("automatic dynamic"): a loop counter or a step number
that changes on every call would otherwise recompile every time.

A source becomes dynamic after its int value made a cache entry miss (runtime/cache.py). Its value is a SymInt of
the capture's ShapeEnv: arithmetic with other ints stays symbolic (FX nodes), and it feeds tensor arithmetic as a
scalar. Anything that needs the concrete number (a branch, range(), indexing, a size) specializes it: the roots it
came from get an equality guard and the value becomes a constant, as if it had never been dynamic.
"""
from __future__ import annotations

import math
import operator

import torch

from torch.fx.experimental.symbolic_shapes import DimDynamic, guard_int

from jitcore.guards import EqualsMatch, IntPredicateMatch
from jitcore.capture.breaks import GraphBreak
from jitcore.capture.graph import SIZE_SOURCE
from jitcore.capture.values.base import Value, NOT_CONSTANT
from jitcore.capture.values.constant import const

__all__ = ["SymIntValue", "SymBoolValue", "make_dynamic_int", "size_float", "symbolic_call"]

#: operators that keep an int symbolic, with their Python spelling for predicate guards
_ARITHMETIC = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "mod": "%", "truediv": "/", "iadd": "+",
               "isub": "-", "imul": "*", "ifloordiv": "//", "imod": "%", "itruediv": "/"}
_NUMBER = (int, float)
#: the power operators, kept symbolic for a float base and a constant int exponent only
_POWERS = frozenset({"pow", "ipow"})
_COMPARISONS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


def make_dynamic_int(state, value, source):
    """A graph input for an int (or float) read from `source`."""
    graph = state.graph
    env = graph.fake_mode.shape_env
    shape_source = graph.shape_token()
    if type(value) is int:
        # Note [Dynamic ints are sizes]
        sym = env.create_unspecified_symint_and_symbol(value, shape_source, DimDynamic.DYNAMIC)
        node = graph.add_scalar_input(source, sym, shape_source)
        node.meta[SIZE_SOURCE] = source
        result = SizeValue(sym, state.ctx, lambda: node)
        result.source = source
        graph.inputs[source] = result
        return result
    symbol = env.create_unspecified_symbol(value, shape_source, DimDynamic.DYNAMIC)
    sym = env.create_symfloatnode(symbol, hint=value, source=shape_source)
    node = graph.add_scalar_input(source, sym, shape_source)
    result = SymIntValue(node, sym, state.ctx, source)
    result.roots = (result,)
    result.text = "{v}"
    graph.inputs[source] = result
    return result


# Note [Dynamic ints are sizes]
# A Python int argument that automatic dynamic (or dynamic=True) made a graph input is a symbol of the capture's
# ShapeEnv, like a tensor's size: it is a `SizeValue`, so it flows on symbolic where a size does (`torch.full((n,
# 2))`, `x.view(k, -1)`, `x[-k:]`, `x.repeat(k, 1)`, `torch.split(x, [k, n - k])`), and what tracing relies on
# (`k >= 0` for a size, `k > 3` from a branch, `12 % k == 0` from a view) is one of the ShapeEnv's guards on its
# token, checked by the entry's relation check; a use that needs the number (`range(k)`) specialises it there too
# (`k == 5`). Floats stay `SymIntValue`s over a SymFloat: arithmetic keeps them symbolic, any other use pins them.


class SymIntValue(Value):
    __slots__ = ("node", "fake", "ctx", "roots", "text", "_constant")

    def __init__(self, node, sym, ctx, source=None):
        super().__init__(source)
        self.node = node
        self.fake = sym
        self.ctx = ctx
        #: the dynamic inputs this value was computed from
        self.roots = ()
        #: the value as a Python expression over its single root `{v}` (None with several roots)
        self.text = None
        self._constant = None

    def python_type(self):
        return type(self.fake.node.hint)

    def is_symbolic_number(self) -> bool:
        return self._constant is None

    def constant(self):
        """Asking for the number relies on it: the roots get equality guards (a size root is specialised by the
        ShapeEnv), and the value is specialized."""
        if self._constant is None:
            for root in self.roots:
                if isinstance(root, SizeValue):
                    root.constant()
                else:
                    self.ctx.guard(root.source, EqualsMatch(root.fake.node.hint))
            self._constant = self.fake.node.hint
        return self._constant

    def pinned_by_shape_env(self) -> bool:
        """Whatever tracing relies on about this number is a ShapeEnv guard (it was computed from sizes only), so
        an op whose result has symbolic sizes need not make it a constant."""
        return bool(self.roots) and all(isinstance(root, SizeValue) for root in self.roots)

    def _concrete(self):
        return const(self.constant())

    def binary_op(self, state, op, other, reflected):
        if isinstance(other, SizeValue) and other.is_symbolic_number():
            return other.binary_op(state, op, self, not reflected)
        if self._constant is None and op in _COMPARISONS and type(other.constant()) in _NUMBER:
            # a comparison with a constant is guarded as a relation on the root, not as its exact value
            c = other.constant()
            left, right = (repr(c), self.text) if reflected else (self.text, repr(c))
            hint = self.fake.node.hint
            outcome = getattr(operator, op)(*((c, hint) if reflected else (hint, c)))
            text = None if self.text is None else f"({left} {_COMPARISONS[op]} {right})"
            return SymBoolValue(bool(outcome), text, self.roots, self)
        if self._constant is None and op in _POWERS and not reflected and type(other.constant()) is int \
                and not isinstance(self.fake, torch.SymInt):
            # a float to a constant int power is a real float (`a ** 2`): symbolic, as torch keeps it
            sym = self.fake ** other.constant()
            node = state.graph.create_node("call_function", operator.pow, (self.node, other.constant()), {}, sym)
            result = SymIntValue(node, sym, self.ctx)
            result.roots = self.roots
            return result
        if self._constant is None and op in _ARITHMETIC:
            if other.is_symbolic_number():
                fake_other, node_other, roots = other.fake, other.node, other.roots
            elif type(other.constant()) in _NUMBER:
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
                if len(result.roots) == 1 and self.text is not None and (not roots or other.text is not None):
                    other_text = other.text if roots else repr(fake_other)
                    left, right = (other_text, self.text) if reflected else (self.text, other_text)
                    result.text = f"({left} {_ARITHMETIC[op]} {right})"
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
            result.text = None if self.text is None else f"(-{self.text})"
            return result
        return self._concrete().unary_op(state, op)

    def truth(self, state):
        if self._constant is None and self.text is not None:
            return SymBoolValue(bool(self.fake.node.hint), f"({self.text} != 0)", self.roots, self).constant()
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
        if self._constant is None:
            return codegen.tensor_output(self)  # computed by the graph, which returns it
        return codegen.constant(self._constant)

    def __repr__(self):
        return f"SymInt({self.fake})"




class _DecidedBool(Value):
    """A comparison on symbolic numbers: every use decides it, through `constant()` (which guards what it
    decided), and it then behaves as that Python bool."""

    __slots__ = ()

    def truth(self, state):
        return self.constant()

    def unary_op(self, state, op):
        if op == "not_":
            return const(not self.constant())
        return const(self.constant()).unary_op(state, op)

    def binary_op(self, state, op, other, reflected):
        return const(self.constant()).binary_op(state, op, other, reflected)

    def reconstruct(self, codegen):
        return codegen.constant(self.constant())


class SymBoolValue(_DecidedBool):
    """A comparison of a dynamic int with a constant. Branching on it guards the relation (IntPredicateMatch on the
    single root) rather than the exact value; with several roots it specializes them."""

    __slots__ = ("value", "text", "roots", "operand")

    def __init__(self, value: bool, text, roots, operand):
        super().__init__(None)
        self.value = value
        self.text = text
        self.roots = roots
        self.operand = operand

    def python_type(self):
        return bool

    def constant(self):
        if self.text is not None and len(self.roots) == 1:
            root = self.roots[0]
            root.ctx.guard(root.source, IntPredicateMatch(self.text, self.value, type(root.fake.node.hint)))
        else:
            self.operand.constant()
        return self.value


# -- sizes of tensors with symbolic dims ----------------------------------------------------------------------------
def _guard_on_data(error) -> bool:
    return type(error).__name__ in ("GuardOnDataDependentSymNode", "DataDependentOutputException")


def _data_dependent_break(what: str):
    return GraphBreak("data_dependent", f"{what} depends on tensor data (a data-dependent size)")


class SizeValue(SymIntValue):
    """A size of a tensor with symbolic dims (`x.shape[0]`, `x.numel()`, `len(x)`), or int arithmetic on one: a
    SymInt of the capture's ShapeEnv. Arithmetic stays symbolic (operator nodes); a comparison gives a
    `SizeBoolValue`, whose truth (a Python branch) the ShapeEnv records as a relation (`x.shape[0] > 4`) that the
    entry's guard checks. `constant()` is the explicit specialisation (`range(n)`, a dict key, `int()` handed to
    Python code): the ShapeEnv replaces the symbol by this call's value, and the tensor's guard pins that size.
    Its graph node is made on first use (`make()`), so a size only read in Python adds nothing to the graph."""

    __slots__ = ("_make", "_node")

    def __init__(self, sym, ctx, make):
        self._make = make
        self._node = None
        super().__init__(None, sym, ctx)

    @property
    def node(self):
        if self._node is None:
            self._node = self._make()
        return self._node

    @node.setter
    def node(self, value):
        self._node = value

    def python_type(self):
        return int

    def pinned_by_shape_env(self) -> bool:
        return True

    def constant(self):
        if self._constant is None:
            try:
                self._constant = guard_int(self.fake)
            except Exception as error:
                if _guard_on_data(error):
                    raise _data_dependent_break("a size used as a Python number") from None
                raise
        return self._constant

    def binary_op(self, state, op, other, reflected):
        if self._constant is not None:
            return const(self._constant).binary_op(state, op, other, reflected)
        if other.is_tensor():
            return NotImplemented
        if isinstance(other, SizeValue) and other._constant is None:
            fake_other, node_other = other.fake, other
        elif isinstance(other, SymIntValue) and other.is_symbolic_number():
            # a dynamic Python int meets a size: the int becomes a constant (its own guards stay simple)
            fake_other = node_other = other.constant()
        else:
            c = other.constant()
            if type(c) not in (int, bool, float):
                return const(self.constant()).binary_op(state, op, other, reflected)
            fake_other = node_other = c
        name = op.removeprefix("i") if op.startswith("i") and op != "is_" else op
        if name == "pow" and not reflected and type(fake_other) is int and fake_other >= 0:
            name = "pow"  # `n ** 2`: an int for any int n (a negative or symbolic exponent may give a float)
        elif name not in _ARITHMETIC and name not in _COMPARISONS:
            return const(self.constant()).binary_op(state, op, other, reflected)
        fn = getattr(operator, name)
        a, b = (fake_other, self.fake) if reflected else (self.fake, fake_other)
        result = fn(a, b)
        if name in _COMPARISONS:
            return const(result) if type(result) is bool else SizeBoolValue(result)
        if type(result) in (int, float):
            return const(result)
        graph = state.graph
        na, nb = (node_other, self) if reflected else (self, node_other)
        args = tuple(v.node if isinstance(v, SizeValue) else v for v in (na, nb))
        if isinstance(result, torch.SymFloat):
            roots = (self, node_other) if isinstance(node_other, SizeValue) else (self,)
            return size_float(state, fn, args, result, roots)
        return SizeValue(result, self.ctx, lambda: graph.create_node("call_function", fn, args, {}, result))

    def unary_op(self, state, op):
        if self._constant is None and op == "abs":
            return symbolic_call(state, abs, [self])
        if self._constant is None and op == "neg":
            result = -self.fake
            graph = state.graph
            return SizeValue(result, self.ctx,
                             lambda: graph.create_node("call_function", operator.neg, (self.node,), {}, result))
        return const(self.constant()).unary_op(state, op)

    def truth(self, state):
        if self._constant is not None:
            return bool(self._constant)
        return SizeBoolValue(self.fake != 0).truth(state)

    def reconstruct(self, codegen):
        if self._constant is not None:
            return codegen.constant(self._constant)
        if self.node.op == "placeholder":
            return self.node.meta[SIZE_SOURCE].emit(codegen)  # an input dim's SymInt: read again from the tensor
        return codegen.tensor_output(self)  # the graph computes it and returns it

    def __repr__(self):
        return f"Size({self.fake})"


def size_float(state, fn, args, sym, roots) -> SymIntValue:
    """A float computed from sizes (`n / 2`, `math.sqrt(d)`): a SymFloat node of the graph, symbolic as torch.compile
    keeps it; a use that needs the number specialises the sizes it came from (`roots`)."""
    node = state.graph.create_node("call_function", fn, args, {}, sym)
    result = SymIntValue(node, sym, state.ctx)
    result.roots = tuple(dict.fromkeys(roots))
    return result


#: functions of symbolic numbers that stay symbolic, as the function torch.compile's graphs call for them (the
#: ShapeEnv's own functions: `CeilToInt(IntTrueDiv(s0, 4))`, `Max(s0, 6)`), so a use pins no size
_SYMBOLIC_CALLS = {math.sqrt: torch._sym_sqrt, float: torch.sym_float, int: torch.sym_int, math.ceil: math.ceil,
                   math.floor: math.floor, math.trunc: math.trunc, round: round, abs: operator.abs,
                   operator.abs: operator.abs, max: torch.sym_max, min: torch.sym_min}


def symbolic_call(state, fn, args) -> Value:
    """`math.ceil(n / 4)`, `max(n, 3)`, `abs(n - 2)`, `float(n)` ... of sizes (or of floats computed from sizes) and
    constant numbers: a symbolic number; NotImplemented for anything else (the caller folds the constants)."""
    target = _SYMBOLIC_CALLS.get(fn)
    if target is None or not any(a.is_symbolic_number() for a in args):
        return NotImplemented
    fakes, roots = [], []
    for value in args:
        if value.is_symbolic_number():
            value_roots = (value,) if isinstance(value, SizeValue) else getattr(value, "roots", ())
            if not value_roots or not all(isinstance(root, SizeValue) for root in value_roots):
                return NotImplemented
            roots += value_roots
            fakes.append(value.fake)
        else:
            c = value.constant()
            if type(c) not in _NUMBER:
                return NotImplemented
            fakes.append(c)
    result = target(*fakes)
    if type(result) in _NUMBER:
        return const(result)
    graph = state.graph

    def node_args():
        return tuple(v.node if v.is_symbolic_number() else v.constant() for v in args)
    if isinstance(result, torch.SymInt):
        return SizeValue(result, state.ctx, lambda: graph.create_node("call_function", target, node_args(), {}, result))
    if isinstance(result, torch.SymFloat):
        return size_float(state, target, node_args(), result, roots)
    return NotImplemented


class SizeBoolValue(_DecidedBool):
    """A comparison of sizes. Its truth is this call's outcome, recorded by the ShapeEnv as a relation the entry's
    guard checks (one graph per side of a branch, not one per size)."""

    __slots__ = ("sym", "_value")

    def __init__(self, sym):
        super().__init__(None)
        self.sym = sym
        self._value = None

    def python_type(self):
        return bool

    def constant(self):
        if self._value is None:
            try:
                self._value = bool(self.sym)
            except Exception as error:
                if _guard_on_data(error):
                    raise _data_dependent_break("a branch on a size") from None
                raise
        return self._value


class SizeSliceValue(Value):
    """`x[a:n]` with a symbolic bound: a slice whose graph argument holds the size nodes (no specialisation)."""

    __slots__ = ("parts",)

    def __init__(self, parts):
        super().__init__(None)
        self.parts = list(parts)

    def python_type(self):
        return slice

    def children(self):
        return list(self.parts)

    def constant(self):
        return slice(*(p.constant() for p in self.parts))

    def as_fx_arg(self, state):
        return slice(*(p.as_fx_arg(state) for p in self.parts))

    def as_fake(self, state):
        return slice(*(p.as_fake(state) for p in self.parts))

    def reconstruct(self, codegen):
        return codegen.constant(self.constant())


def symbolic_slice(parts):
    """A SizeSliceValue when a bound is a symbolic size (constants and None elsewhere), else None."""
    if not any(isinstance(p, SizeValue) and p.is_symbolic_number() for p in parts):
        return None
    for p in parts:
        if not (isinstance(p, SizeValue) and p.is_symbolic_number()):
            c = p.constant()
            if not (c is None or type(c) is int):
                return None
    return SizeSliceValue(parts)
