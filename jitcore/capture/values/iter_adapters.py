"""enumerate() and zip() over live iterators (values/iterator.py): each step takes the next item of the iterators
underneath, so a list growing inside `for i, v in enumerate(lst)` is seen as CPython sees it; a graph break inside
such a loop hands Python a real enumerate / zip over the real iterators."""
from __future__ import annotations

from jitcore.capture.values.constant import const
from jitcore.capture.values.iterator import LiveIteratorValue
from jitcore.capture.values.sequence import TupleValue

__all__ = ["EnumerateValue", "ZipValue"]


class EnumerateValue(LiveIteratorValue):
    """enumerate(live iterator, start): `container` is the iterator underneath, `position` the next count."""

    __slots__ = ()

    def __init__(self, inner, start):
        super().__init__(inner)
        self.position = start

    def python_type(self):
        return enumerate

    def next_item(self, state=None):
        item = self.container.next_item(state)
        if item is None:
            return None
        self.position += 1
        return TupleValue([const(self.position - 1), item])

    def reconstruct(self, codegen):
        return f"enumerate({codegen.load(self.container)}, {self.position})"


class ZipValue(LiveIteratorValue):
    """zip(iterators...): a row takes one item from each in order and stops at the first exhausted one."""

    __slots__ = ("inners",)

    def __init__(self, inners):
        super().__init__(None)
        self.inners = inners

    def python_type(self):
        return zip

    def children(self):
        return list(self.inners)

    def next_item(self, state=None):
        row = []
        for inner in self.inners:
            item = inner.next_item(state)
            if item is None:
                return None
            row.append(item)
        return TupleValue(row)

    def reconstruct(self, codegen):
        return "zip(" + "".join(f"{codegen.load(inner)}, " for inner in self.inners) + ")"
