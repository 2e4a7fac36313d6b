"""Per-code caches that let code objects go: `CodeCache` maps a code object, by identity, to a value.

An entry lives as long as its code object: the cache holds the code by a weak reference and drops the entry when
the code is collected (a function defined by exec, a dropped module). Identity, not equality, so two equal code
objects compiled in two places keep apart what is made for each (their functions have different globals), and a
lookup is cheap: a code object's hash and equality walk its bytes, names and constants (nested code included)
every time, ~10 us for a Hugging Face forward, which a `WeakKeyDictionary` pays on every lookup (its key is a
fresh weak reference each time, whose hash and comparison are the code's). Keys are `address(code)`, not the
audited `id()` (Note [Identity keys without id()], guards/identity.py).
"""
from __future__ import annotations

import weakref

from jitcore.guards.identity import address

__all__ = ["CodeCache"]


class CodeCache:
    """code object -> value, by identity, for as long as the code object lives."""

    def __init__(self):
        #: address(code) -> (weak reference to the code, value)
        self._entries: dict = {}

    def get(self, code, default=None):
        found = self._entries.get(address(code))
        if found is None or found[0]() is not code:
            return default
        return found[1]

    def __setitem__(self, code, value) -> None:
        key = address(code)
        entries = self._entries
        # the callback runs when the code dies, before its address can be reused, so it only ever drops its own entry
        ref = weakref.ref(code, lambda _, key=key: entries.pop(key, None))
        entries[key] = (ref, value)

    def setdefault(self, code, value):
        found = self.get(code, _MISSING)
        if found is _MISSING:
            self[code] = found = value
        return found

    def __contains__(self, code) -> bool:
        return self.get(code, _MISSING) is not _MISSING

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


_MISSING = object()
