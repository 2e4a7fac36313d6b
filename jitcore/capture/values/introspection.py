"""`inspect.signature(fn)` while tracing: computed once at capture time and used as a constant.

Library code asks for a callee's signature to decide how to call it (`len(inspect.signature(fn).parameters)`).
The answer depends only on the function's code, defaults and `__wrapped__` chain, so those are guarded by identity
(where jitcore can reload the function) and the Signature object, which is immutable, folds like a constant.
"""
from __future__ import annotations

import inspect
import types

from jitcore.guards import IdMatch
from jitcore.capture.breaks import GraphBreak
from jitcore.capture.sources import AttrSource
from jitcore.capture.values.base import NOT_CONSTANT
from jitcore.capture.values.constant import ConstantValue
from jitcore.capture.values.function import NestedFunctionValue, UserFunctionValue, UserMethodValue

__all__ = ["signature_lookaside"]


class _AnyInstance:
    """A stand-in `self` for binding a method's function: a bound method's signature never depends on self."""


def signature_lookaside(state, fn, args, kwargs):
    if len(args) != 1 or kwargs:
        raise GraphBreak("unsupported_call", "inspect.signature() with options")
    target = args[0]
    if type(target) is UserFunctionValue:
        fn, obj = target.fn, target.fn
    elif type(target) is UserMethodValue:
        fn = target.fn
        obj = types.MethodType(fn, _AnyInstance())
    elif type(target) is NestedFunctionValue:
        # made inside: its signature is its code's, defaults' and annotations' (a function like it, made now)
        fn = obj = _like(target)
    else:
        raise GraphBreak("unsupported_call", f"inspect.signature() of a {target.kind_name}")
    _guard_shape(state, fn, target.source if obj is fn else None)
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError) as exc:
        raise GraphBreak("user_exception", f"inspect.signature(): {exc}") from None
    return ConstantValue(sig)


def _like(target):
    """A function with a nested function's code, constant defaults and annotations (empty cells: a signature never
    reads them); a break where any of those is not a constant or the function says what it wraps."""
    defaults = tuple(v.constant() for v in target.defaults)
    kwdefaults = {k: v.constant() for k, v in target.kwdefaults.items()}
    annotations = target.annotations.constant() if target.annotations is not None else {}
    if NOT_CONSTANT in defaults or NOT_CONSTANT in kwdefaults.values() or annotations is NOT_CONSTANT or \
            target.attrs.items:
        raise GraphBreak("unsupported_call", "inspect.signature() of a function made inside with defaults, "
                                             "annotations or attributes that are not constants")
    closure = tuple(types.CellType() for _ in target.code.co_freevars) or None
    fn = types.FunctionType(target.code, target.globals, target.code.co_name, defaults or None, closure)
    fn.__kwdefaults__ = kwdefaults or None
    fn.__annotations__ = dict(annotations)
    return fn


def _guard_shape(state, fn, source) -> None:
    """Guard what a function's signature is made of: its code, its defaults and whatever it wraps."""
    seen = 0
    while source is not None and isinstance(fn, types.FunctionType) and seen < 8:
        state.ctx.guard(AttrSource(source, "__code__"), IdMatch(fn.__code__))
        for name in ("__defaults__", "__kwdefaults__"):
            if getattr(fn, name) is not None:
                state.ctx.guard(AttrSource(source, name), IdMatch(getattr(fn, name)))
        wrapped = fn.__dict__.get("__wrapped__")
        if "__signature__" in fn.__dict__:
            state.ctx.guard(AttrSource(source, "__signature__"), IdMatch(fn.__dict__["__signature__"]))
        if wrapped is None:
            return
        source = AttrSource(source, "__wrapped__")
        state.ctx.guard(source, IdMatch(wrapped))
        fn = wrapped
        seen += 1
