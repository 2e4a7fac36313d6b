"""The per-call path: a generated dispatcher tries each cache entry's guard, then runs the entry or captures anew.

The dispatcher is one Python function with the frame's own parameter names (no *args packing). When entries
change, its code is regenerated and swapped into the same function object, which the prologue holds as a constant.
"""
from __future__ import annotations

__all__ = ["Dispatcher"]


class Dispatcher:
    """Owns the generated function `fn(<params>, ___cells)` for one cache."""

    def __init__(self, params: tuple, name: str, miss):
        self.params = params
        self.name = "".join(ch if ch.isalnum() else "_" for ch in name)
        self.namespace = {"___miss": miss}
        self.fn = self._generate([])

    def _generate(self, entries):
        args = ", ".join([*self.params, "___cells"])
        packed = "(" + "".join(f"{p}, " for p in self.params) + ")"
        lines = [f"def ___dispatch_{self.name}({args}):"]
        for i, _ in enumerate(entries):
            lines.append(f"    if ___guard{i}({args}):")
            lines.append(f"        return ___run{i}({args})")
        lines.append(f"    return ___miss({packed}, ___cells)")
        source = "\n".join(lines) + "\n"
        for i, entry in enumerate(entries):
            self.namespace[f"___guard{i}"] = entry.guard_check
            self.namespace[f"___run{i}"] = entry.run
        exec(compile(source, f"<jitcore dispatch for {self.name}>", "exec"), self.namespace)
        fn = self.namespace[f"___dispatch_{self.name}"]
        fn.source = source
        return fn

    def update(self, entries) -> None:
        """Regenerate for the current entries; the function object the prologue holds stays the same."""
        fresh = self._generate(entries)
        self.fn.__code__ = fresh.__code__
        self.fn.source = fresh.source
