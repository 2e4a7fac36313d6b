"""Callables: user Python functions (inlined), torch functions (graph nodes), bound methods.

A user function is traced by inlining: its code runs in a child FrameState with the caller's graph. A callable from
torch (or marked with jit.allow_in_graph) becomes one call_function node.
"""
from __future__ import annotations

import inspect
import types

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.base import Value, NOT_CONSTANT, KnownObjectValue
from jitcore.capture.values.call_rules import call
from jitcore.capture.values.constant import const, fold

__all__ = ["LookasideValue", "PartialValue", "UserFunctionValue", "TorchFunctionValue", "BoundMethodValue", "UserMethodValue", "NestedFunctionValue"]


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
            from jitcore.capture.values import wrap
            from jitcore.capture.sources import AttrSource
            value = getattr(self.fn, name)
            if self.source is None:
                return const(value) if name == "__code__" else wrap(state, value, None)
            return wrap(state, value, AttrSource(self.source, name))
        return super().getattr(state, name)

    def call(self, state, args, kwargs):
        return state.inline_call(self.fn, args, kwargs, fn_source=self.source)

    def compiled_callee(self, state, compilable):
        return (self.fn, None) if compilable(self.fn) else None


class NestedFunctionValue(Value):
    """A function made by MAKE_FUNCTION inside the captured code: code, defaults and closure cells as values."""

    __slots__ = ("code", "globals", "defaults", "kwdefaults", "closure", "qualname")

    def __init__(self, code, fn_globals, defaults, kwdefaults, closure, qualname):
        super().__init__(None)
        self.code = code
        self.globals = fn_globals
        self.defaults = defaults
        self.kwdefaults = kwdefaults
        self.closure = closure
        self.qualname = qualname

    def python_type(self):
        return types.FunctionType

    def getattr(self, state, name):
        if name in ("__name__", "__qualname__"):
            return const(self.code.co_name if name == "__name__" else self.qualname)
        return super().getattr(state, name)

    def call(self, state, args, kwargs):
        return state.inline_nested(self, args, kwargs)

    def children(self):
        return [*self.defaults, *self.kwdefaults.values()]

    def reconstruct(self, codegen):
        if self.closure:
            raise GraphBreak("unsupported_output", "rebuilding a closure made inside the function")
        make = codegen.constant_object(types.FunctionType, "FunctionType")
        defaults = "(" + "".join(f"{codegen.load(v)}, " for v in self.defaults) + ")"
        fn = (f"{make}({codegen.constant_object(self.code, 'code')}, {codegen.globals_name()}, "
              f"{self.code.co_name!r}, {defaults})")
        if self.kwdefaults:
            setter = codegen.constant_object(_with_kwdefaults, "with_kwdefaults")
            body = "".join(f"{k!r}: {codegen.load(v)}, " for k, v in self.kwdefaults.items())
            fn = f"{setter}({fn}, {{{body}}})"
        return fn


def _with_kwdefaults(fn, kwdefaults):
    fn.__kwdefaults__ = kwdefaults
    return fn


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
        return super().getattr(state, name)

    def call(self, state, args, kwargs):
        return state.inline_call(self.fn, [self.self_value, *args], kwargs)

    def compiled_callee(self, state, compilable):
        return (self.fn, self.self_value) if compilable(self.fn) else None

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
        return super().getattr(state, name)

    def call(self, state, args, kwargs):
        return call(state, self.fn, args, kwargs)

    def as_fx_arg(self, state):
        return self.fn

    def as_fake(self, state):
        return self.fn

    def reconstruct(self, codegen):
        return codegen.constant(self.fn)


class PartialValue(Value):
    """functools.partial(fn, *args, **keywords): calling it calls fn with the stored arguments first."""

    __slots__ = ("fn", "args", "keywords")

    def __init__(self, fn, args, keywords, source=None):
        super().__init__(source)
        self.fn = fn
        self.args = args
        self.keywords = keywords

    def python_type(self):
        import functools
        return functools.partial

    def getattr(self, state, name):
        from jitcore.capture.values.sequence import TupleValue
        from jitcore.capture.values.mapping import DictValue
        if name == "func":
            return self.fn
        if name == "args":
            return TupleValue(list(self.args))
        if name == "keywords":
            return DictValue(dict(self.keywords))
        return super().getattr(state, name)

    def call(self, state, args, kwargs):
        return self.fn.call(state, [*self.args, *args], {**self.keywords, **kwargs})

    def children(self):
        return [self.fn, *self.args, *self.keywords.values()]

    def reconstruct(self, codegen):
        import functools
        partial = codegen.constant_object(functools.partial, "partial")
        args = "".join(f", {codegen.load(v)}" for v in self.args)
        keywords = "".join(f", {k}={codegen.load(v)}" for k, v in self.keywords.items())
        return f"{partial}({codegen.load(self.fn)}{args}{keywords})"


class BoundMethodValue(Value):
    """`obj.name` for a method of a constant (run at capture time when pure)."""

    __slots__ = ("obj", "name", "pure")

    def __init__(self, obj, name, pure=False):
        super().__init__(None)
        self.obj = obj
        self.name = name
        self.pure = pure

    def call(self, state, args, kwargs):
        from jitcore.capture.values.generator import is_lazy
        from jitcore.capture.values.sequence import IteratorValue
        target = self.obj.constant()
        # an iterator argument (`"-".join(str(s) for s in shape)`) is consumed here, as the method would
        args = [const(tuple(item.constant() for item in v.iterate(state)))
                if self.pure and (is_lazy(v) or isinstance(v, IteratorValue)) else v for v in args]
        a = [v.constant() for v in args]
        k = {n: v.constant() for n, v in kwargs.items()}
        if not self.pure or target is NOT_CONSTANT or NOT_CONSTANT in a or NOT_CONSTANT in k.values():
            raise GraphBreak("unsupported_call", f"method {self.name} on non-constant arguments")
        return const(fold(state, getattr(target, self.name), *a, **k))


def bind_arguments(state, fn_name: str, code, defaults, kwdefaults, args: list, kwargs: dict) -> dict:
    """Bind call arguments to parameter names the way CPython does; a binding error is the user's TypeError."""
    from jitcore.capture.values.sequence import TupleValue
    from jitcore.capture.values.mapping import DictValue

    def fail(message):
        raise GraphBreak("user_exception", f"TypeError: {fn_name}() {message}")

    names = code.co_varnames
    nargs, posonly, nkw = code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount
    has_varargs = bool(code.co_flags & inspect.CO_VARARGS)
    has_varkw = bool(code.co_flags & inspect.CO_VARKEYWORDS)
    kwonly = names[nargs:nargs + nkw]
    result = {}
    for name, value in zip(names[:nargs], args):
        result[name] = value
    extra = list(args[nargs:])
    if extra and not has_varargs:
        fail(f"takes {nargs} positional arguments but {len(args)} were given")
    extra_kw = {}
    for key, value in kwargs.items():
        if key in names[posonly:nargs] or key in kwonly:
            if key in result:
                fail(f"got multiple values for argument '{key}'")
            result[key] = value
        elif has_varkw:
            extra_kw[key] = value
        else:
            fail(f"got an unexpected keyword argument '{key}'")
    defaults = defaults or []
    first_default = nargs - len(defaults)
    for index in range(nargs):
        name = names[index]
        if name not in result:
            if index < first_default:
                fail(f"missing required positional argument: '{name}'")
            result[name] = defaults[index - first_default]
    for name in kwonly:
        if name not in result:
            if not kwdefaults or name not in kwdefaults:
                fail(f"missing required keyword-only argument: '{name}'")
            result[name] = kwdefaults[name]
    if has_varargs:
        result[names[nargs + nkw]] = TupleValue(extra)
    if has_varkw:
        result[names[nargs + nkw + has_varargs]] = DictValue(extra_kw)
    return result
