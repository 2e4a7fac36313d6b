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
from jitcore.capture.values.constant import ConstantValue
from jitcore.capture.values.function import UserFunctionValue, UserMethodValue

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
    else:
        raise GraphBreak("unsupported_call", f"inspect.signature() of a {target.kind_name}")
    _guard_shape(state, fn, target.source if obj is fn else None)
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError) as exc:
        raise GraphBreak("user_exception", f"inspect.signature(): {exc}") from None
    return ConstantValue(sig)


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
