"""Dispatch prologues installed in place by the runtime (register + enabled()): prologue code -> the code it wraps.

Inside an enabled() block a registered function, or the class forward of a registered module, runs a prologue:
a call to its dispatcher, then the function's own body. Either way the call computes what the body alone computes,
so capture inlines the wrapped body instead of tracing into the dispatcher (which would break the graph at every
call of such a function, and at every call of any instance of such a module's class).
Entry points: `wraps(prologue, original)` for the runtime, `unwrapped(code)` for capture.
"""
from __future__ import annotations

from jitcore.capture.code_cache import CodeCache

__all__ = ["wraps", "unwrapped"]

#: prologue code -> the code it wraps; an entry lives as long as its prologue. By identity (CodeCache): capture
#: asks this of every function it inlines
_WRAPPED = CodeCache()


def wraps(prologue, original) -> None:
    """Record that `prologue` runs `original`'s body after dispatching (its defaults and closure are the function's)."""
    _WRAPPED[prologue] = original


def unwrapped(code):
    """The code whose body a call running `code` computes: the wrapped code for an in-place prologue, else code."""
    return _WRAPPED.get(code, code)
