"""What a `contextvars.ContextVar` holds in the running context, read without raising (the guard tree's "ctxvar"
step). Imports the standard library only; never jitcore or bytecode. Entry points: current_value, UNSET.
"""
from __future__ import annotations

__all__ = ["UNSET", "current_value"]


class _Unset:
    """The answer for a variable with no value in the running context (its default, if any, is not a value of
    the context: `ContextVar.get()` falls back to it only when the context has none)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<unset>"


UNSET = _Unset()


def current_value(var) -> object:
    """`var`'s value in the running context, or UNSET: the thread's (or task's) context the call runs in, the same
    one the guards and the entry run in."""
    return var.get(UNSET)
