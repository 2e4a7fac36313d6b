"""Marks users put on their functions, read by every layer: disabled (never traced), allowed in graph (one graph
node), and `is_compiling()` (which capture folds to True). A leaf module: it imports nothing of jitcore.

Marks never keep a function alive longer than the user does, except `allow_in_graph`'s, which holds the function
as torch.compile's does (the mark is a promise about that function object).
"""
from __future__ import annotations

__all__ = ["mark_disabled", "is_disabled", "allow_in_graph", "is_allowed_in_graph", "is_compiling"]

_DISABLED_ATTR = "__jitcore_disabled__"
#: functions that take no attribute (builtins, bound methods of C types): id -> the object, kept alive
_disabled_ids: dict = {}
#: functions marked with jit.allow_in_graph: id -> the function
_allowed: dict = {}


def mark_disabled(fn) -> None:
    target = getattr(fn, "__func__", fn)
    try:
        setattr(target, _DISABLED_ATTR, True)
    except (AttributeError, TypeError):
        _disabled_ids[id(target)] = target


def is_disabled(fn) -> bool:
    target = getattr(fn, "__func__", fn)
    return getattr(target, _DISABLED_ATTR, False) is True or id(target) in _disabled_ids


def allow_in_graph(fn) -> None:
    _allowed[id(fn)] = fn


def is_allowed_in_graph(fn) -> bool:
    return _allowed.get(id(fn)) is fn


def is_compiling() -> bool:
    """False when run natively; True inside code jitcore traces (capture replaces this call with True)."""
    return False
