"""Callables: user Python functions (inlined), torch functions (graph nodes), lookasides, bound methods.

A user function is traced by inlining: its code runs in a child FrameState with the caller's graph. A callable from
torch (or marked with jit.allow_in_graph) becomes one call_function node.
"""
from __future__ import annotations

import types

import torch._ops

from jitcore.guards import DictKeysMatch, IdMatch, TypeMatch
from jitcore.capture.breaks import GraphBreak
from jitcore.capture.sources import AttrSource
from jitcore.capture.values.base import Value, KnownObjectValue
from jitcore.capture.values.call_rules import call, first_rule, Meaning
from jitcore.capture.values.constant import const
from jitcore.capture.values.wrapping import wrap
from jitcore.capture.values.sequence import TupleValue

__all__ = ["LookasideValue", "UserFunctionValue", "TorchFunctionValue", "UserMethodValue", "NestedFunctionValue",
           "structural_function"]


class LookasideValue(KnownObjectValue):
    """A function whose meaning while tracing differs from running it (its call rule is jitcore's own code)."""

    __slots__ = ()

    def call(self, state, args, kwargs):
        return call(state, self.fn, args, kwargs)


class UserFunctionValue(KnownObjectValue):
    """A Python function that already existed; calling it inlines its code."""

    __slots__ = ()

    def getattr(self, state, name):
        if name in ("__name__", "__qualname__", "__module__", "__doc__"):
            return const(getattr(self.fn, name))
        if name in ("__code__", "__defaults__", "__kwdefaults__", "__wrapped__") and hasattr(self.fn, name):
            # a decorator reading the function it wraps (`func.__code__.co_varnames`): the object, guarded
            value = getattr(self.fn, name)
            if self.source is None:
                return const(value) if name == "__code__" else wrap(state, value, None)
            return wrap(state, value, AttrSource(self.source, name))
        if name in ("__dict__", "__annotations__", "__type_params__") and self.source is not None:
            # functools.wraps copying them: read from the function, guarded (and a change replayed) like any dict
            return wrap(state, getattr(self.fn, name), AttrSource(self.source, name))
        return super().getattr(state, name)

    def call(self, state, args, kwargs):
        return state.inline_call(self.fn, args, kwargs, fn_source=self.source)

    def compiled_callee(self, state, compilable):
        if state.ctx.standin_value(self.fn) is not None:
            return None  # a method of a class made inside: the entry's own class holds the real one
        return (self.fn, None) if compilable(self.fn) else None


class _StructuralFunctionValue(UserFunctionValue):
    """A Python function captured by type and code rather than identity (each call makes its own: a lambda, a
    closure): Note [Instances shared by structure]. Its names are read on their sources, not folded."""

    __slots__ = ()

    def getattr(self, state, name):
        if name in ("__name__", "__qualname__", "__module__", "__doc__"):
            return wrap(state, getattr(self.fn, name), AttrSource(self.source, name))
        return super().getattr(state, name)

    def compiled_callee(self, state, compilable):
        # a compiled copy is bound to one function object, its cells and defaults: this call's function is
        # another one each call (a closure over a resumed frame's cells), so it runs as it is
        return None


def structural_function(state, fn, source):
    """The value of a function on a structural path: the same type, code and globals, the same attributes in its
    own dict (jit.disable's mark, functools.wraps' `__wrapped__`); defaults and closure cells are read on their
    sources when it is inlined."""
    ctx = state.ctx
    ctx.guard(source, TypeMatch(type(fn)))
    ctx.guard(AttrSource(source, "__code__"), IdMatch(fn.__code__))
    ctx.guard(AttrSource(source, "__globals__"), IdMatch(fn.__globals__))
    ctx.guard(AttrSource(source, "__dict__"), DictKeysMatch(tuple(fn.__dict__)))
    ctx.guard_distinct(source)
    return _StructuralFunctionValue(fn, source)


#: a function's attributes that decide what calling it runs: writing one is not a plain attribute
_RUNS_BY = frozenset({"__code__", "__defaults__", "__kwdefaults__", "__globals__", "__closure__", "__call__"})


class NestedFunctionValue(Value):
    """A function made by MAKE_FUNCTION inside the captured code: code, defaults and closure cells as values."""

    __slots__ = ("code", "globals", "defaults", "kwdefaults", "closure", "qualname", "attrs",
                 "annotations")
    #: a function is an object with identity: one made inside and held in two places is rebuilt once
    needs_identity = True

    def __init__(self, code, fn_globals, defaults, kwdefaults, closure, qualname, annotations=None):
        super().__init__(None)
        self.code = code
        self.globals = fn_globals
        self.defaults = defaults
        self.kwdefaults = kwdefaults
        self.closure = closure
        self.qualname = qualname
        #: the function's __dict__, a dict value: attributes set while tracing (update_wrapper's __wrapped__ ...)
        self.attrs = const({})
        #: the __annotations__ dict's value (MAKE_FUNCTION's, or made empty on the first read, as CPython does)
        self.annotations = annotations

    def python_type(self):
        return types.FunctionType

    def getattr(self, state, name):
        if name in self.attrs.items:
            return self.attrs.items[name]
        if name in ("__name__", "__qualname__"):
            return const(self.code.co_name if name == "__name__" else self.qualname)
        if name == "__module__":
            return const(self.globals.get("__name__"))
        if name == "__doc__":
            # the compiler makes a function's first constant its docstring, or None when it has none (3.12)
            first = self.code.co_consts[0] if self.code.co_consts else None
            return const(first if isinstance(first, str) else None)
        if name == "__dict__":
            return self.attrs
        if name == "__type_params__":
            return const(())  # a generic function's are set by an intrinsic jitcore does not model
        if name == "__code__":
            return const(self.code)
        if name == "__defaults__":
            return TupleValue(self.defaults) if self.defaults else const(None)
        if name == "__annotations__":
            if self.annotations is None:
                self.annotations = const({})
            return self.annotations
        return super().getattr(state, name)

    def setattr(self, state, name, value):
        if name in _RUNS_BY:
            raise GraphBreak("side_effect", f"setting {name} of a function made inside changes how it runs")
        self.attrs.items[name] = value  # made while tracing: nothing outside has seen it yet

    def call(self, state, args, kwargs):
        return state.inline_nested(self, args, kwargs)

    def children(self):
        return [*self.defaults, *self.kwdefaults.values(), *self.closure]

    def reconstruct(self, codegen):
        """A new function object over the same code; its closure holds the cells themselves: a cell made inside
        is rebuilt once with its final contents (functions sharing it share the rebuilt cell, as Python's
        closures share theirs), a cell that existed before is that very cell."""
        if self.attrs.items or (self.annotations is not None and self.annotations.items):
            raise GraphBreak("unsupported_output", "rebuilding a function made inside with attributes set on it")
        return self._rebuilt(codegen)

    def reconstruct_with_attributes(self, codegen):
        """The function as a class made inside holds it in its dict (capture/values/class_statement.py): with
        the attributes set on it (abc.abstractmethod's mark) and its annotations, which nothing else holds."""
        fn = self._rebuilt(codegen)
        if self.attrs.items or self.annotations is not None:
            setter = codegen.constant_object(_with_attributes, "with_attributes")
            annotations = "None" if self.annotations is None else codegen.load(self.annotations)
            fn = f"{setter}({fn}, {codegen.load(self.attrs)}, {annotations})"
        return fn

    def _rebuilt(self, codegen):
        make = codegen.constant_object(types.FunctionType, "FunctionType")
        defaults = "(" + "".join(f"{codegen.load(v)}, " for v in self.defaults) + ")"
        closure = "(" + "".join(f"{cell.reconstruct_cell(codegen)}, " for cell in self.closure) + ")"
        # a function made by code of another module (a decorator's inner function) keeps that module's globals
        fn_globals = codegen.globals_for(self.globals)
        fn = (f"{make}({codegen.constant_object(self.code, 'code')}, {fn_globals}, "
              f"{self.code.co_name!r}, {defaults}, {closure if self.closure else 'None'})")
        if self.qualname != self.code.co_name:
            fn = f"{codegen.constant_object(_with_qualname, 'with_qualname')}({fn}, {self.qualname!r})"
        if self.kwdefaults:
            setter = codegen.constant_object(_with_kwdefaults, "with_kwdefaults")
            body = "".join(f"{k!r}: {codegen.load(v)}, " for k, v in self.kwdefaults.items())
            fn = f"{setter}({fn}, {{{body}}})"
        return fn


def _with_attributes(fn, attrs, annotations):
    fn.__dict__.update(attrs)
    if annotations is not None:
        fn.__annotations__ = annotations
    return fn


def _with_qualname(fn, qualname):
    fn.__qualname__ = qualname
    return fn


def _with_kwdefaults(fn, kwdefaults):
    fn.__kwdefaults__ = kwdefaults
    return fn


#: dunder attributes a bound method reads from its function
_FORWARDED = frozenset({"__doc__", "__module__", "__defaults__", "__kwdefaults__", "__code__", "__wrapped__",
                        "__annotations__", "__dict__"})


class UserMethodValue(Value):
    """A Python function bound to a value (a module's or user object's method): inlined with self first."""

    __slots__ = ("fn", "self_value")

    def __init__(self, fn, self_value, source=None):
        super().__init__(source)
        self.fn = fn
        self.self_value = self_value

    def python_type(self):
        return types.MethodType

    def getattr(self, state, name):
        if name == "__self__":
            return self.self_value
        if name == "__func__":
            return UserFunctionValue(self.fn)
        if name in ("__name__", "__qualname__"):
            return const(getattr(self.fn, name))
        if isinstance(self.fn, types.FunctionType) and not name.startswith("__") or name in _FORWARDED:
            # a bound method forwards attribute reads to its function (CPython method_getattro)
            return UserFunctionValue(self.fn).getattr(state, name)
        return super().getattr(state, name)

    def call(self, state, args, kwargs):
        rule = first_rule(self.fn, state.ctx.rule_answers)  # None for a callable no rule claims (a Cython method): inline_call breaks
        if rule is not None and rule.meaning is Meaning.LOOKASIDE:
            # a method jitcore runs itself (nn.Module.__init__ on a module made inside, from super().__init__())
            return call(state, self.fn, [self.self_value, *args], kwargs)
        if rule is not None and rule.meaning is Meaning.NATIVE:
            # a method that runs in Python at a break (an optimizer's step): called as it is, not traced into
            raise GraphBreak(rule.break_kind or "unsupported_call", f"{self.fn.__qualname__}()", untouched=self)
        return state.inline_call(self.fn, [self.self_value, *args], kwargs)

    def compiled_callee(self, state, compilable):
        rule = first_rule(self.fn, state.ctx.rule_answers)
        if rule is not None and rule.meaning is Meaning.NATIVE or state.ctx.standin_value(self.fn) is not None:
            return None
        return self.self_value.bound_callee(state, self.fn, compilable)

    def children(self):
        return [self.self_value]

    def reconstruct(self, codegen):
        method = codegen.constant_object(types.MethodType, "MethodType")
        return f"{method}({codegen.constant_object(self.fn, 'fn')}, {codegen.load(self.self_value)})"


class TorchFunctionValue(KnownObjectValue):
    """A callable from torch (or allowed in graph): a call becomes one call_function node."""

    __slots__ = ()

    def constant(self):
        return self.fn

    def getattr(self, state, name):
        if name in ("__name__", "__qualname__", "__module__"):
            return const(getattr(self.fn, name))
        if isinstance(self.fn, torch._ops.OpOverloadPacket) and not name.startswith("_"):
            # torch.ops.aten.mul.Tensor: one overload of the packet (made on first read, then kept in its dict)
            try:
                overload = getattr(self.fn, name)
            except AttributeError as exc:
                raise GraphBreak.raises(AttributeError, str(exc)) from None
            return wrap(state, overload, AttrSource(self.source, name) if self.source is not None else None)
        return super().getattr(state, name)

    def call(self, state, args, kwargs):
        return call(state, self.fn, args, kwargs)

    def as_fx_arg(self, state):
        return self.fn

    def as_fake(self, state):
        return self.fn

    def reconstruct(self, codegen):
        return codegen.constant(self.fn)
