"""A real iterator that existed before the call: the loop's iterator a graph break hands to a resume function
(`for module in self:` of nn.Sequential, `for i, x in enumerate(zip(a, b))`), or an iterator passed in.

Its items are read without advancing it (guards/iterators.remaining_items, the guard tree's "rest" step) and wrapped
like a tuple's: the rest's length and each item are guarded on `it(rest)[i]`, so a resume function continues the
loop in its graph instead of breaking at the next FOR_ITER. Tracing advances only the value; the real iterator is
brought to the same position after the graph (a side effect replayed as `advance_iterator(it, n)`), so whoever
else holds it sees it advanced exactly as Python would have; a later break reloads that same object.
"""
from __future__ import annotations

from jitcore.guards import EqualsMatch, LengthMatch, TypeMatch
from jitcore.guards.iterators import LIST_ITERATOR, READABLE_ITERATOR_TYPES, list_iterator_state, remaining_items

from jitcore.capture.sources import ItemSource, IteratorRestSource, ListIteratorStateSource
from jitcore.capture.values.iterator import IteratorValue, ListIteratorValue
from jitcore.capture.values.wrapping import wrap

__all__ = ["IteratorInputValue", "ListIteratorInputValue", "wrap_iterator", "ITERATOR_INPUT_TYPES",
           "advance_iterator", "set_list_iterator"]

#: the iterator types wrap_iterator() models
ITERATOR_INPUT_TYPES = READABLE_ITERATOR_TYPES | {LIST_ITERATOR}


def advance_iterator(it, count: int) -> None:
    """Take `count` items from `it` (the replay of what the graph's loop consumed)."""
    for _ in range(count):
        next(it)


def set_list_iterator(it, state) -> None:
    """Bring a real list iterator to (position, exhausted), where the graph's loop left its value."""
    position, done = state
    if done:
        for _ in it:
            pass
    else:
        it.__setstate__(position)


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


class ListIteratorInputValue(ListIteratorValue):
    """A real list iterator read from a source: its list (live: appends while looping are seen) and its position,
    both guarded; the real iterator is moved to the value's final position after the graph."""

    __slots__ = ("real",)
    #: its list may be written back through it (`it(seq)`): moved only once that is done
    replay_last = True

    def __init__(self, container, position, real, source):
        super().__init__(container)
        self.position = position
        self.source = source
        self.real = real

    def identity(self):
        return self.real

    def next_item(self, state=None):
        if not self.done:
            state.ctx.side_effects.container_mutated(self)
        return super().next_item(state)

    def snapshot(self):
        return (self.position, self.done)

    def changed_items(self, codegen, initial) -> str:
        return repr((self.position, self.done))

    def replay(self, codegen, values: str, initial) -> str:
        restore = codegen.constant_object(set_list_iterator, "set_list_iterator")
        return f"{restore}({self.source.emit(codegen)}, {values})"


def wrap_iterator(state, value, source):
    """A real iterator of a readable type: its remaining items guarded as a tuple (type, length, items); a list
    iterator: its list and position."""
    if source is None or source.path in state.ctx.dynamic_paths:
        # a loop that breaks on every iteration hands over its iterator at a new position each time: Python
        # advances it, and each resume function takes one item (runtime/policy.py learns it)
        return None
    if type(value) is LIST_ITERATOR:
        return _wrap_list_iterator(state, value, source)
    try:
        rest = remaining_items(value)
    except Exception:  # a dict changed size while it was being iterated, a strict zip: left opaque
        return None
    state.ctx.guard(source, TypeMatch(type(value)))
    rest_source = IteratorRestSource(source)
    state.ctx.guard(rest_source, LengthMatch(len(rest)))
    items = [wrap(state, item, ItemSource(rest_source, i)) for i, item in enumerate(rest)]
    return IteratorInputValue(items, value, source)


def _wrap_list_iterator(state, value, source):
    state.ctx.guard(source, TypeMatch(LIST_ITERATOR))
    position_source = ListIteratorStateSource(source, "pos")
    position = list_iterator_state(value, "pos")
    state.ctx.guard(position_source, EqualsMatch(position))
    if position < 0:
        return IteratorInputValue([], value, source)
    container = wrap(state, list_iterator_state(value, "seq"), ListIteratorStateSource(source, "seq"))
    return ListIteratorInputValue(container, position, value, source)
