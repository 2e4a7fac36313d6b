"""A real iterator that existed before the call: the loop's iterator a graph break hands to a resume function
(`for module in self:` of nn.Sequential, `for i, x in enumerate(zip(a, b))`), or an iterator passed in.

Its items are read without advancing it (guards/iterators.remaining_items, the guard tree's "rest" step) and wrapped
like a tuple's: the rest's length and each item are guarded on `it(rest)[i]`, so a resume function continues the
loop in its graph instead of breaking at the next FOR_ITER. Tracing advances only the value; the real iterator is
brought to the same position after the graph (a side effect replayed as `advance_iterator(it, n)`), so whoever
else holds it sees it advanced exactly as Python would have; a later break reloads that same object.
"""
from __future__ import annotations

from jitcore.guards import LengthMatch, TypeMatch
from jitcore.guards.iterators import READABLE_ITERATOR_TYPES, remaining_items

from jitcore.capture.sources import ItemSource, IteratorRestSource
from jitcore.capture.values.iterator import IteratorValue
from jitcore.capture.values.wrapping import wrap

__all__ = ["IteratorInputValue", "wrap_iterator", "READABLE_ITERATOR_TYPES", "advance_iterator"]


def advance_iterator(it, count: int) -> None:
    """Take `count` items from `it` (the replay of what the graph's loop consumed)."""
    for _ in range(count):
        next(it)


class IteratorInputValue(IteratorValue):
    """One real iterator read from a source; `items` are its remaining items when the call started."""

    __slots__ = ("real",)
    needs_identity = True

    def __init__(self, items, real, source):
        super().__init__(items, type(real))
        self.source = source
        self.real = real

    def identity(self):
        return self.real

    def is_iterator(self):
        return True

    def next_item(self, state=None):
        if self.position < len(self.items):
            self._consumed(state)
        return super().next_item(state)

    def iterate(self, state):
        if self.position < len(self.items):
            self._consumed(state)
        return super().iterate(state)

    def _consumed(self, state):
        # the real iterator must be advanced after the graph: recorded before the position moves (the snapshot)
        state.ctx.side_effects.container_mutated(self)

    # -- the side-effect protocol of a container passed in ----------------------------------------------------
    def snapshot(self):
        return self.position

    def changed_items(self, codegen, initial) -> str:
        return str(self.position - initial)

    def replay(self, codegen, values: str, initial) -> str:
        advance = codegen.constant_object(advance_iterator, "advance_iterator")
        return f"{advance}({self.source.emit(codegen)}, {values})"


def wrap_iterator(state, value, source):
    """A real iterator of a readable type: its remaining items guarded as a tuple (type, length, items)."""
    if source is None:
        return None
    try:
        rest = remaining_items(value)
    except Exception:  # a dict changed size while it was being iterated, a strict zip: left opaque
        return None
    state.ctx.guard(source, TypeMatch(type(value)))
    rest_source = IteratorRestSource(source)
    state.ctx.guard(rest_source, LengthMatch(len(rest)))
    items = [wrap(state, item, ItemSource(rest_source, i)) for i, item in enumerate(rest)]
    return IteratorInputValue(items, value, source)
