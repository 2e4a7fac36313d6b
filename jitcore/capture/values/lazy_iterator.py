"""Iterators whose items are computed on demand: the base of generators (values/generator.py) and the lazy
zip/enumerate/map/filter/itertools iterators over them, so each item is pulled when Python would pull it.
"""
from __future__ import annotations

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.base import Value

__all__ = ["OnDemand", "LazyIteratorValue", "is_lazy"]


class OnDemand(Value):
    """An iterator whose items exist only once next_item() computes them."""

    __slots__ = ()

    def truth(self, state):
        return True

    def iterate(self, state):
        items = []
        while (item := self.next_item(state)) is not None:
            items.append(item)
        return items


class LazyIteratorValue(OnDemand):
    """An iterator whose next item is computed when asked for (zip/enumerate/map/filter over a lazy source)."""

    __slots__ = ("produce", "iter_type", "finished")

    def __init__(self, produce, iter_type):
        super().__init__(None)
        #: produce(state) -> the next item, or None when exhausted
        self.produce = produce
        self.iter_type = iter_type
        self.finished = False

    def python_type(self):
        return self.iter_type

    def next_item(self, state):
        if self.finished:
            return None
        item = self.produce(state)
        if item is None:
            self.finished = True
        return item


    def reconstruct(self, codegen):
        if self.finished:
            return "iter(())"
        raise GraphBreak("generator", f"a lazy {self.iter_type.__name__} iterator is needed by Python")


def is_lazy(value) -> bool:
    """A generator or a lazy iterator: its items exist only once asked for."""
    return isinstance(value, OnDemand)
