"""Per-code caches that let code objects go: `CodeCache` maps a code object, by identity, to a value.

An entry lives as long as its code object: the cache holds the code by a weak reference and drops the entry when
the code is collected (a function defined by exec, a dropped module). Identity, not equality, so two equal code
objects compiled in two places keep apart what is made for each (their functions have different globals).
"""
from __future__ import annotations

import weakref

__all__ = ["CodeCache"]


class CodeCache:
    """code object -> value, by identity, for as long as the code object lives."""

    def __init__(self):
        #: id(code) -> (weak reference to the code, value)
        self._entries: dict = {}

    def get(self, code, default=None):
        found = self._entries.get(id(code))
        if found is None or found[0]() is not code:
            return default
        return found[1]

    def __setitem__(self, code, value) -> None:
        key = id(code)
        entries = self._entries
        # the callback runs when the code dies, before its id can be reused, so it only ever drops its own entry
        ref = weakref.ref(code, lambda _, key=key: entries.pop(key, None))
        entries[key] = (ref, value)

    def setdefault(self, code, value):
        found = self.get(code, _MISSING)
        if found is _MISSING:
            self[code] = found = value
        return found

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


_MISSING = object()
