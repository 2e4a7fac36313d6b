"""Calls of a functools.lru_cache wrapper that already existed (`@lru_cache def is_available()`, a logger's
`warning_once`): asked of the real cache at capture time.

Note [Calls through an existing lru_cache]
Tracing the wrapped function instead (what torch.compile does, with a warning) gives what the function answers
*now*, where the program gets what the cache remembers, and it repeats the function's effects on every call where
the program makes them once: a `warning_once` would warn on every call, or break the graph at the logging call.
So the call is made for real, with the real arguments, when capture reaches it: the cache answers (a hit), or the
function runs and its answer is remembered (a miss: its effects happen now, once, as the program's call would make
them at this point; capture's replay of the frame is a hit). The answer becomes a constant of the graph.

What the entry relies on is that the cache would answer the same: the key is still in it. A cache loses keys only
by eviction (on a miss of another key) or `cache_clear()` (which zeroes its counters), and gains them only by
misses, so the entry is guarded (ProbeMatch) on the cache's miss count and size staying as they were after the
call: another key added, a key evicted or the cache cleared recaptures, and the new capture asks the cache again.
The guard never calls the function. Its one blind spot is a `cache_clear()` followed by exactly as many misses as
before, leaving the same size.

Arguments must be what the cache hashes: constants (guarded by value where they were read) or objects jitcore
knows the identity of (guarded by identity: another logger is another key). An answer that is not a constant
(a list, an object) is not folded: the call breaks the graph and runs in Python, where it is a hit. A call that
raises breaks too; Python then calls it again (an exception is not remembered), as it would call it again later.
"""
from __future__ import annotations

import functools

from jitcore.guards import IdMatch, ProbeMatch

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.base import NOT_CONSTANT
from jitcore.capture.values.call_rules import CallRule, Meaning, BY_TYPE, register_type
from jitcore.capture.values.constant import const, CONSTANT_TYPES

__all__ = ["cache_fill"]

_MISSING = object()


def cache_fill(wrapper) -> tuple:
    """What changes when the cache gains, loses or drops keys: (misses, size). Reads, never calls, the function."""
    info = wrapper.cache_info()
    return (info.misses, info.currsize)


def _real_argument(state, value):
    """The object the cache would hash for `value`, guarded so the entry sees the same key; _MISSING where it is
    not known (a tensor, a value made while tracing)."""
    if value.is_tensor():
        return _MISSING
    c = value.constant()
    if c is not NOT_CONSTANT:
        return c
    obj = value.identity()
    if obj is None or value.source is None:
        return _MISSING
    state.ctx.guard(value.source, IdMatch(obj))
    return obj


def _is_constant_answer(answer) -> bool:
    if isinstance(answer, tuple):
        return type(answer) is tuple and all(_is_constant_answer(a) for a in answer)
    return type(answer) in CONSTANT_TYPES


def _cached_call(state, fn, args, kwargs):
    real_args = [_real_argument(state, v) for v in args]
    real_kwargs = {k: _real_argument(state, v) for k, v in kwargs.items()}
    if _MISSING in real_args or _MISSING in real_kwargs.values():
        return NotImplemented
    name = getattr(fn, "__qualname__", None) or repr(fn)
    try:
        answer = fn(*real_args, **real_kwargs)
    except Exception as exc:  # noqa: BLE001 (the program's own error: Python meets it again at the break)
        raise GraphBreak("unsupported_call", f"{name}() raised {type(exc).__name__} while tracing") from None
    if not _is_constant_answer(answer):
        return NotImplemented
    state.ctx.guard(None, ProbeMatch(cache_fill, (fn,), cache_fill(fn), f"{name}.cache_info()"))
    return const(answer)


register_type(functools._lru_cache_wrapper, BY_TYPE,
              CallRule("existing lru_cache wrapper", Meaning.LOOKASIDE, _cached_call))
