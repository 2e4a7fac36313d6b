"""A real iterator that existed before the call: the loop's iterator a graph break hands to a resume function
(`for module in self:` of nn.Sequential, `for a, b in zip(boxes, scores)`), or an iterator passed in.

Note [Iterators carried across a break]
A loop interrupted by a graph break goes on in the resume function, which receives the loop's iterator as a real
object (a stack slot). Capture models it so the rest of the loop is traced, not run in Python one FOR_ITER at a
time:
- an iterator over a tuple, range, str, list, dict (keys, values, items) or a reversed list is read as its rest,
  the items still to come (guards/iterators.remaining_items, the guard tree's "rest" step), *relative to where it
  is*: taking item k guards `len(rest) >= k + 1` and wraps `rest[k]`; seeing the end guards `len(rest) == k`. A
  loop that breaks in every iteration therefore meets the same guards at every position (a number among the
  items, a range's counter, becomes a graph input by automatic dynamic), not one entry per position;
- zip, map and enumerate are read as their parts (the "iterstate" step: the iterators, the function, the count)
  and modelled by the live adapters of values/iter_adapters.py over those, nested as deep as they come, so zip
  stops at the shortest, a strict zip raises, map calls its function between steps; an iterator capture cannot
  read (a generator) leaves the whole adapter to Python (FOR_ITER breaks cleanly);
- the container of a list / dict / reversed-list iterator is wrapped too (its identity shared with every other
  reference the trace meets) and watched: once the trace changes it, a list iterator continues by absolute
  position (its position guarded: `ListIteratorValue` over the list value), a dict or reversed-list one breaks.
Tracing advances only the values; the real iterators are advanced after the graph, as side effects replayed
*first* (`replay_first`), while every container is still as the call found it, so next() takes exactly the items
the trace took; an end the trace reached is replayed by exhausting the iterator (so a list appended to later
stays unseen, as in Python). enumerate's count can only be advanced by next(), which advances its iterator too:
an enumerate *owns* the iterators under it (`owner`), replays for all of them, and a trace that takes from an
owned iterator directly breaks.
A list iterator followed by absolute position is replayed after the list's own write-back (`replay_last`: that
write-back may read the list through the iterator, which exhausting it would cut). An exhausted iterator whose
container the trace changed through the iterator itself is left at its end, not exhausted (`drains`).
"""
from __future__ import annotations

from jitcore.guards import EqualsMatch, LengthMatch, MinLengthMatch, NoneMatch, TypeMatch
from jitcore.guards.iterators import (DICT_ITERATORS, LIST_ITERATOR, READABLE_ITERATOR_TYPES,
                                      REVERSED_LIST_ITERATOR, iterator_state, remaining_items)

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.sources import ItemSource, IteratorRestSource, IteratorStateSource
from jitcore.capture.values.builtins import apply_binary
from jitcore.capture.values.constant import const
from jitcore.capture.values.iter_adapters import EnumerateValue, MapValue, ZipValue
from jitcore.capture.values.iterator import IteratorValue, ListIteratorValue
from jitcore.capture.values.sequence import TupleValue
from jitcore.capture.values.wrapping import reserve, reserved_value, wrap

__all__ = ["IteratorInputValue", "ListIteratorInputValue", "wrap_iterator", "ITERATOR_INPUT_TYPES",
           "advance_iterator", "set_list_iterator"]

#: the iterator types wrap_iterator() models
ITERATOR_INPUT_TYPES = READABLE_ITERATOR_TYPES | {map}


def advance_iterator(it, step) -> None:
    """`step` is (count, drain): take `count` items from `it` (the replay of what the graph's loop consumed), then
    exhaust it if `drain`."""
    count, drain = step
    for _ in range(count):
        next(it)
    if drain:
        for _ in it:
            pass


def set_list_iterator(it, state) -> None:
    """Bring a real list iterator to (position, exhausted), where the graph's loop left its value."""
    position, done = state
    if done:
        for _ in it:
            pass
    else:
        it.__setstate__(position)


class IteratorInputValue(IteratorValue):
    """One real iterator read from a source, relative to its position: `rest` are its remaining items when the
    call started, wrapped as they are taken (`items`); `watched` is the container it reads (a list, a dict), if
    any: its identity is reserved (values/wrapping.reserve), its items are not read."""

    __slots__ = ("real", "rest", "rest_source", "watched", "owner", "done", "ctx", "effects")
    needs_identity = True
    replay_first = True

    def __init__(self, state, real, source, rest, watched=None):
        super().__init__([], type(real))
        self.source, self.real, self.rest, self.watched = source, real, rest, watched
        self.rest_source = IteratorRestSource(source)
        #: the enumerate that advances this iterator (and replays for it), or None
        self.owner = None
        self.done = False
        self.ctx = state.ctx
        self.effects = state.ctx.side_effects

    def identity(self):
        return self.real

    def is_iterator(self):
        return True

    def _changed(self) -> bool:
        """The trace changed the container this iterator reads (through any reference to it)."""
        value = self._watched_value()
        return value is not None and self.effects.is_mutated(value)

    def _watched_value(self):
        return None if self.watched is None else reserved_value(self.ctx, self.watched)

    def children(self):
        return []

    def sequence_items(self):
        return None

    def next_item(self, state=None):
        if self.done:
            return None
        if self._changed():
            raise GraphBreak("unsupported_value", f"a {self.kind_name} whose container changed while looping "
                                                  "after a graph break")
        taken = self.position
        if taken >= len(self.rest):
            state.ctx.guard(self.rest_source, LengthMatch(taken))
            self._consumed(state)
            self.done = True
            return None
        state.ctx.guard(self.rest_source, MinLengthMatch(taken + 1))
        self._consumed(state)
        item = wrap(state, self.rest[taken], ItemSource(self.rest_source, taken))
        self.items.append(item)
        self.position += 1
        return item

    def iterate(self, state):
        taken = []
        while (item := self.next_item(state)) is not None:
            taken.append(item)
        return taken

    def _consumed(self, state):
        if self.owner is not None:
            if not self.owner.driving:
                raise GraphBreak("unsupported_value", f"a {self.kind_name} taken from directly while an "
                                                      "enumerate() over it is carried across a graph break")
            return
        # the real iterator must be advanced after the graph: recorded before the position moves (the snapshot)
        self.effects.container_mutated(self)

    def drains(self) -> bool:
        """Whether the replay may exhaust the real iterator: not when a container written back through it is read
        through the iterator (exhausted, it no longer holds it)."""
        watched = self._watched_value()
        return not (watched is not None and watched.source is not None
                    and watched.source.path[:len(self.source.path)] == self.source.path
                    and self.effects.is_mutated(watched))

    # -- the side-effect protocol of a container passed in ----------------------------------------------------
    def snapshot(self):
        return 0

    def changed_items(self, codegen, initial) -> str:
        return repr((self.position, self.done and self.drains()))

    def replay(self, codegen, values: str, initial) -> str:
        advance = codegen.constant_object(advance_iterator, "advance_iterator")
        return f"{advance}({self.source.emit(codegen)}, {values})"


class ListIteratorInputValue(IteratorInputValue):
    """A real list iterator: read relative to its position while the list is as the call found it; once the trace
    changes the list it goes on by absolute position, guarded, over the list value (`absolute`, a
    ListIteratorValue)."""

    __slots__ = ("absolute",)

    def __init__(self, state, real, source, rest, watched):
        super().__init__(state, real, source, rest, watched)
        self.absolute = None

    @property
    def replay_first(self):
        return self.absolute is None

    @property
    def replay_last(self):
        return self.absolute is not None

    def next_item(self, state=None):
        if self.absolute is None and self.owner is None and not self.done and self._changed():
            self._go_absolute(state)
        if self.absolute is None:
            return super().next_item(state)
        self._consumed(state)
        return self.absolute.next_item(state)

    def _go_absolute(self, state):
        start = iterator_state(self.real, "pos")
        state.ctx.guard(IteratorStateSource(self.source, "pos"), EqualsMatch(start))
        self.absolute = ListIteratorValue(wrap(state, self.watched, IteratorStateSource(self.source, "seq")))
        self.absolute.position = start + self.position

    def changed_items(self, codegen, initial) -> str:
        if self.absolute is None:
            return super().changed_items(codegen, initial)
        return repr((self.absolute.position, self.absolute.done))

    def replay(self, codegen, values: str, initial) -> str:
        if self.absolute is None:
            return super().replay(codegen, values, initial)
        restore = codegen.constant_object(set_list_iterator, "set_list_iterator")
        return f"{restore}({self.source.emit(codegen)}, {values})"


class _AdapterInput:
    """What zip / map / enumerate read from a source share: the real object is their identity."""

    __slots__ = ()

    def identity(self):
        return self.real


class ZipInputValue(_AdapterInput, ZipValue):
    """A real zip: ZipValue over the values of its real iterators; it has no state of its own to replay."""

    __slots__ = ("real", "owner")

    def __init__(self, inners, strict, real, source):
        super().__init__(inners, strict)
        self.real, self.source, self.owner = real, source, None


class MapInputValue(_AdapterInput, MapValue):
    """A real map: MapValue over its real function and iterators."""

    __slots__ = ("real", "owner")

    def __init__(self, fn, inners, real, source):
        super().__init__(fn, inners)
        self.real, self.source, self.owner = real, source, None


class EnumerateInputValue(_AdapterInput, EnumerateValue):
    """A real enumerate: its count (a number value, symbolic once it varied) plus the items taken; it owns the
    iterators under it and replays next() on itself for them."""

    __slots__ = ("real", "owner", "count", "taken", "driving", "done", "effects")
    replay_first = True

    def __init__(self, state, inner, count, real, source):
        super().__init__(inner, 0)
        self.real, self.source, self.owner, self.count = real, source, None, count
        self.taken = 0
        self.driving = self.done = False
        self.effects = state.ctx.side_effects

    def children(self):
        return [self.container, self.count]

    def next_item(self, state=None):
        if self.owner is not None and not self.owner.driving:
            raise GraphBreak("unsupported_value", "an enumerate taken from directly while an enumerate() over it "
                                                  "is carried across a graph break")
        self.driving = True
        try:
            item = self.container.next_item(state)
        finally:
            self.driving = False
        if self.owner is None:
            self.effects.container_mutated(self)
        if item is None:
            self.done = True
            return None
        index = self.count if self.taken == 0 else apply_binary(state, "add", self.count, const(self.taken))
        self.taken += 1
        return TupleValue([index, item])

    def snapshot(self):
        return 0

    def changed_items(self, codegen, initial) -> str:
        drain = self.done and all(inner.drains() for inner in _under(self.container, deep=True)
                                  if isinstance(inner, IteratorInputValue))
        return repr((self.taken, drain))

    def replay(self, codegen, values: str, initial) -> str:
        advance = codegen.constant_object(advance_iterator, "advance_iterator")
        return f"{advance}({self.source.emit(codegen)}, {values})"


def wrap_iterator(state, value, source):
    """A real iterator capture can read: relative to its position (Note [Iterators carried across a break]); None
    where it stays opaque (no source, learnt to stay in Python, or not readable)."""
    if source is None or source.path in state.ctx.dynamic_paths:
        # an iterator met at another absolute position (its list changed in a loop that breaks on every
        # iteration): Python advances it, and each resume function takes one item (runtime/policy.py learns it)
        return None
    kind = type(value)
    if kind in _ADAPTERS:
        state.ctx.guard(source, TypeMatch(kind))
        return _ADAPTERS[kind](state, value, source)
    try:
        rest = remaining_items(value)
    except Exception:  # a dict changed size while it was being iterated: left opaque
        return None
    state.ctx.guard(source, TypeMatch(kind))
    if kind is not LIST_ITERATOR and kind is not REVERSED_LIST_ITERATOR and kind not in DICT_ITERATORS:
        return IteratorInputValue(state, value, source, rest)
    # the container it reads, watched for changes; None once the iterator is exhausted (appends are not seen)
    part = IteratorStateSource(source, "dict" if kind in DICT_ITERATORS else "seq")
    container = iterator_state(value, part.part)
    if container is None:
        state.ctx.guard(part, NoneMatch())
        return IteratorInputValue(state, value, source, ())
    reserve(state, container, part)
    if kind is LIST_ITERATOR:
        return ListIteratorInputValue(state, value, source, rest, container)
    return IteratorInputValue(state, value, source, rest, container)


def _parts(state, value, source, indices):
    """The values of the iterators among the parts of a zip / map / enumerate, or None if one of them is not an
    iterator capture reads (a generator: the adapter is left to Python)."""
    parts = value.__reduce__()[1]
    inners = [wrap(state, parts[i], IteratorStateSource(source, i)) for i in indices]
    return inners if all(isinstance(inner, _OWNABLE) for inner in inners) else None


def _under(value, deep=False):
    """`value` and the iterators a zip or map `value` reads, recursively; `deep` goes on under an enumerate too."""
    found = [value]
    if isinstance(value, (ZipInputValue, MapInputValue)) or (deep and isinstance(value, EnumerateInputValue)):
        for inner in value.inners if not isinstance(value, EnumerateInputValue) else [value.container]:
            found.extend(_under(inner, deep))
    return found


def _wrap_zip(state, value, source):
    strict = iterator_state(value, "strict")
    state.ctx.guard(IteratorStateSource(source, "strict"), EqualsMatch(strict))
    inners = _parts(state, value, source, range(len(value.__reduce__()[1])))
    return None if inners is None else ZipInputValue(inners, strict, value, source)


def _wrap_map(state, value, source):
    inners = _parts(state, value, source, range(1, len(value.__reduce__()[1])))
    if inners is None:
        return None
    fn = wrap(state, iterator_state(value, 0), IteratorStateSource(source, 0))
    return MapInputValue(fn, inners, value, source)


def _wrap_enumerate(state, value, source):
    """An enumerate owns the iterators under it (Note [Iterators carried across a break]): none of them may have
    been taken from in this trace already, nor be owned by another enumerate."""
    inners = _parts(state, value, source, [0])
    if inners is None:
        return None
    owned = _under(inners[0])
    if any(inner.owner is not None or state.ctx.side_effects.is_mutated(inner) for inner in owned):
        return None
    count = wrap(state, iterator_state(value, 1), IteratorStateSource(source, 1))
    result = EnumerateInputValue(state, inners[0], count, value, source)
    for inner in owned:
        inner.owner = result
    return result


_ADAPTERS = {zip: _wrap_zip, map: _wrap_map, enumerate: _wrap_enumerate}
#: the values an adapter may read: iterators capture models from a source
_OWNABLE = (IteratorInputValue, ZipInputValue, MapInputValue, EnumerateInputValue)
