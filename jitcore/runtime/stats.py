"""Process-wide counters for tests and reports: captures, graphs compiled, native entries, dispatch misses.

`STATS` is the one instance; `jit.reset()` clears it. The cache, the pipeline and entry assembly count into it.
"""
from __future__ import annotations

__all__ = ["STATS"]


class _Stats:
    def __init__(self):
        self.clear()

    def clear(self):
        self.captures = 0
        self.graphs = 0
        self.native_entries = 0
        self.dispatch_misses = 0


STATS = _Stats()
