"""The registry of functions and modules intercepted inside `enabled()` blocks (other marks: jitcore.marks).

Entries are weak references, so registering a function never keeps it alive.
"""
from __future__ import annotations

import weakref

__all__ = ["Registry", "REGISTRY"]

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
