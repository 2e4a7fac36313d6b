"""Binding a call's argument values to a function's parameters, as CPython does, for inlining the function."""
from __future__ import annotations

import inspect

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.mapping import DictValue
from jitcore.capture.values.sequence import TupleValue

__all__ = ["bind_arguments"]


def bind_arguments(state, fn_name: str, code, defaults, kwdefaults, args: list, kwargs: dict) -> dict:
    """Bind call arguments to parameter names the way CPython does; a binding error is the user's TypeError."""
    def fail(message):
        raise GraphBreak.raises(TypeError, f"{fn_name}() {message}")

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
