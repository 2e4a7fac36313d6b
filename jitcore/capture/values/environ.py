"""`os.environ` and `os.getenv`: reading the process environment while tracing, as constants with a guard.

`os.environ.get(k, d)`, `os.environ[k]`, `k in os.environ` and `os.getenv(k, d)` with a constant key read the
variable now; the answer (its value, or its absence) becomes a constant and a root guard (ProbeMatch on
`os.environ.get(k)`) re-reads it when an entry is reused, so setting or changing the variable between calls
recompiles. A missing key read with `[]` raises KeyError as Python does (catchable by the traced code). Writing,
deleting or iterating the environment is not modelled (a graph break: it is process state).
"""
from __future__ import annotations

import os

from jitcore.guards import ProbeMatch

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.base import KnownObjectValue, MethodCallValue, NOT_CONSTANT
from jitcore.capture.values.call_rules import CallRule, Meaning, register_callable, KNOWN_CALLABLE
from jitcore.capture.values.constant import const

__all__ = ["EnvironValue"]


def _read(state, key_value):
    """The variable's value or None, guarded; None when the key is not a constant string (not modelled)."""
    key = key_value.constant()
    if key is NOT_CONSTANT or type(key) is not str:
        raise GraphBreak("unsupported_value", "reading os.environ with a key that is not a constant string")
    answer = os.environ.get(key)
    state.ctx.guard(None, ProbeMatch(os.environ.get, (key,), answer, f"os.environ[{key!r}]"))
    return answer


class EnvironValue(KnownObjectValue):
    """os.environ itself (its identity guarded where it was read)."""

    __slots__ = ()

    def getattr(self, state, name):
        if name in ("get", "__getitem__", "__contains__"):
            return MethodCallValue(self, name)
        raise GraphBreak("unsupported_value", f"os.environ.{name} (the environment is process state)")

    def call_method(self, state, name, args, kwargs):
        if kwargs:
            raise GraphBreak("unsupported_call", f"os.environ.{name} with keyword arguments")
        if name == "get" and len(args) in (1, 2):
            answer = _read(state, args[0])
            return const(answer) if answer is not None else (args[1] if len(args) == 2 else const(None))
        if name == "__getitem__" and len(args) == 1:
            return self.getitem(state, args[0])
        if name == "__contains__" and len(args) == 1:
            return self.contains(state, args[0])
        raise GraphBreak("unsupported_call", f"os.environ.{name}")

    def getitem(self, state, key):
        answer = _read(state, key)
        if answer is None:
            raise GraphBreak.raises(KeyError, repr(key.constant()))
        return const(answer)

    def contains(self, state, item):
        return const(_read(state, item) is not None)


def _getenv(state, fn, args, kwargs):
    values = list(args) + [kwargs[name] for name in ("key", "default") if name in kwargs]
    if len(values) not in (1, 2) or set(kwargs) - {"key", "default"}:
        return NotImplemented
    answer = _read(state, values[0])
    return const(answer) if answer is not None else (values[1] if len(values) == 2 else const(None))


register_callable(os.getenv, KNOWN_CALLABLE, CallRule("os.getenv", Meaning.LOOKASIDE, _getenv))
