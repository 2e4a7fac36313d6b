"""Iterators over items known at capture time (iter() of a list, zip, enumerate, map ... over known items).

`is_iterator()` says whether a value is a one-pass iterator of either kind: one over known items or one computed on
demand (a generator, a lazy zip/map: values/generator.py). Consumers that take an iterator as it is (iter(it),
"-".join(it)) ask it.
"""
from __future__ import annotations

from jitcore.capture.values.base import Value
from jitcore.capture.values.generator import is_lazy

__all__ = ["IteratorValue", "is_iterator"]


class IteratorValue(Value):
    """A one-pass iterator over known items (iter(), zip, enumerate, map...); FOR_ITER consumes it."""

    __slots__ = ("items", "position", "iter_type")

    def __init__(self, items, iter_type=None):
        super().__init__(None)
        self.items = list(items)
        self.position = 0
        self.iter_type = iter_type

    def python_type(self):
        return self.iter_type or type(iter(()))

    def next_item(self, state=None):
        """The next item, or None when exhausted."""
        if self.position >= len(self.items):
            return None
        item = self.items[self.position]
        self.position += 1
        return item

    def sequence_items(self):
        return self.items

    def iterate(self, state):
        rest = self.items[self.position:]
        self.position = len(self.items)
        return rest

    def truth(self, state):
        return True

    def children(self):
        return self.items[self.position:]

    def reconstruct(self, codegen):
        """The items not consumed yet, as a fresh iterator (a break inside a loop passes the loop on)."""
        rest = "".join(f"{codegen.load(v)}, " for v in self.items[self.position:])
        return f"iter(({rest}))"


def is_iterator(value) -> bool:
    return isinstance(value, IteratorValue) or is_lazy(value)
