"""Marks on user functions: disabled (never traced) and registered (intercepted inside `enabled()` blocks).

Marks are kept as weak references, so registering or disabling a function never keeps it alive.
"""
from __future__ import annotations

import weakref

__all__ = ["mark_disabled", "is_disabled", "Registry", "REGISTRY"]

_DISABLED_ATTR = "__jitcore_disabled__"
_disabled_ids: dict = {}


def mark_disabled(fn) -> None:
    target = getattr(fn, "__func__", fn)
    try:
        setattr(target, _DISABLED_ATTR, True)
    except (AttributeError, TypeError):
        _disabled_ids[id(target)] = target


def is_disabled(fn) -> bool:
    target = getattr(fn, "__func__", fn)
    return getattr(target, _DISABLED_ATTR, False) is True or id(target) in _disabled_ids


class Registry:
    """code object -> the functions and module instances registered with it."""

    def __init__(self):
        #: code -> WeakSet of plain functions registered with that code
        self.functions: dict = {}
        #: code of a forward -> WeakSet of module instances registered for it
        self.modules: dict = {}

    def add_function(self, fn) -> None:
        self.functions.setdefault(fn.__code__, weakref.WeakSet()).add(fn)

    def add_module(self, module, forward_fn) -> None:
        self.modules.setdefault(forward_fn.__code__, weakref.WeakSet()).add(module)

    def remove(self, obj) -> None:
        for table in (self.functions, self.modules):
            for code, members in list(table.items()):
                members.discard(obj)
                if not members:
                    del table[code]

    def codes(self) -> set:
        return set(self.functions) | set(self.modules)

    def clear(self) -> None:
        self.functions.clear()
        self.modules.clear()


REGISTRY = Registry()
