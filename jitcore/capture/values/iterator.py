"""Iterators over items known at capture time (iter() of a list, zip, enumerate, map ... over known items).

`is_iterator()` says whether a value is a one-pass iterator of either kind: one over known items or one computed on
demand (a generator, a lazy zip/map: values/generator.py). Consumers that take an iterator as it is (iter(it),
"-".join(it)) ask it.
"""
from __future__ import annotations

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.base import Value
from jitcore.capture.values.lazy_iterator import is_lazy

__all__ = ["IteratorValue", "LiveIteratorValue", "ListIteratorValue", "DictIteratorValue", "SetIteratorValue",
           "is_iterator"]


class IteratorValue(Value):
    """A one-pass iterator over known items (iter(), zip, enumerate, map...); FOR_ITER consumes it."""

    __slots__ = ("items", "position", "iter_type")
    #: an iterator is an object with a position: one held in two places (the loop's and a local) is rebuilt once
    needs_identity = True

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




class LiveIteratorValue(Value):
    """An iterator that reads its container as it is when each item is taken, like CPython's own iterators:
    a list's by index (items appended while looping are seen), a dict's and a set's checking the size (a change
    raises RuntimeError at the next step, and keeps raising). `position` counts the items taken."""

    __slots__ = ("container", "position", "failed")
    needs_identity = True

    def __init__(self, container):
        super().__init__(None)
        self.container = container
        self.position = 0
        #: the RuntimeError message once a step has raised (CPython's iterators stay failed)
        self.failed = None

    def is_iterator(self):
        return True

    def truth(self, state):
        return True

    def iterate(self, state):
        rest = []
        while (item := self.next_item(state)) is not None:
            rest.append(item)
        return rest

    def children(self):
        return [self.container]

    def _raise(self, message):
        self.failed = message
        raise GraphBreak.raises(RuntimeError, message)

    def _raising(self, codegen, message) -> str:
        return f"{codegen.constant_object(FailedIterator, 'failed_iterator')}({message!r})"


class ListIteratorValue(LiveIteratorValue):
    """iter(list): index-based; once it has run off the end it stays exhausted, whatever is appended later."""

    __slots__ = ("done",)

    def __init__(self, container):
        super().__init__(container)
        self.done = False

    def python_type(self):
        return type(iter([]))

    def next_item(self, state=None):
        items = self.container.iterate(state)
        if self.done or self.position >= len(items):
            self.done = True
            return None
        self.position += 1
        return items[self.position - 1]

    def reconstruct(self, codegen):
        if self.done:
            return "iter(())"
        resume = codegen.constant_object(list_iterator_at, "list_iterator_at")
        return f"{resume}({codegen.load(self.container)}, {self.position})"


class DictIteratorValue(LiveIteratorValue):
    """iter(d), iter(d.values()), iter(d.items()): a CPython iterator over the value's own key -> value dict, so
    a change of size (or of keys) between steps raises exactly where Python raises."""

    __slots__ = ("mode", "it", "size", "keys")

    def __init__(self, container, mode="keys"):
        super().__init__(container)
        self.mode = mode
        self.it = iter(container.items)
        self.size = len(container.items)
        self.keys = tuple(container.items)

    def python_type(self):
        return type(iter(getattr({}, self.mode)()))

    def next_item(self, state=None):
        if self.failed is not None:
            self._raise(self.failed)
        try:
            key = next(self.it)
        except StopIteration:
            return None
        except RuntimeError as exc:
            self._raise(str(exc))
        self.position += 1
        return self.container.view_item(self.mode, key)

    def reconstruct(self, codegen):
        items = self.container.items
        if self.failed is not None or len(items) != self.size:
            return self._raising(codegen, self.failed or "dictionary changed size during iteration")
        if tuple(items) != self.keys:
            raise GraphBreak("unsupported_value", "a dict iterator whose dict's keys changed while looping")
        resume = codegen.constant_object(iterator_at, "iterator_at")
        view = "" if self.mode == "keys" else f".{self.mode}()"
        return f"{resume}({codegen.load(self.container)}{view}, {self.position})"


class SetIteratorValue(LiveIteratorValue):
    """iter(s): the members in the order Python iterates them, checking the set's size at every step."""

    __slots__ = ("order", "size")

    def __init__(self, container, order):
        super().__init__(container)
        self.order = order
        self.size = container.length(None)

    def python_type(self):
        return type(iter(set()))

    def next_item(self, state=None):
        if self.failed is not None or self.container.length(state) != self.size:
            self._raise("Set changed size during iteration")
        if self.position >= len(self.order):
            return None
        self.position += 1
        return self.order[self.position - 1]

    def reconstruct(self, codegen):
        if self.failed is not None or self.container.length(None) != self.size:
            return self._raising(codegen, "Set changed size during iteration")
        rest = "".join(f"{codegen.load(v)}, " for v in self.order[self.position:])
        resume = codegen.constant_object(SizedIterator, "sized_iterator")
        return f"{resume}({codegen.load(self.container)}, ({rest}), 'Set changed size during iteration')"


def list_iterator_at(lst, position):
    """A list iterator over lst that has taken `position` items (what a loop interrupted by a graph break holds)."""
    it = iter(lst)
    it.__setstate__(position)
    return it


def iterator_at(iterable, position):
    it = iter(iterable)
    for _ in range(position):
        next(it)
    return it


class SizedIterator:
    """The rest of a set's iteration after a graph break: raises like CPython's set iterator when the set's size
    changes between steps."""

    def __init__(self, container, rest, message):
        self.container, self.rest, self.message = container, iter(rest), message
        self.size = len(container)

    def __iter__(self):
        return self

    def __next__(self):
        if self.size is None or len(self.container) != self.size:
            self.size = None
            raise RuntimeError(self.message)
        return next(self.rest)


class FailedIterator:
    """An iterator whose container changed size while it was looping: every step raises RuntimeError."""

    def __init__(self, message):
        self.message = message

    def __iter__(self):
        return self

    def __next__(self):
        raise RuntimeError(self.message)


def is_iterator(value) -> bool:
    return isinstance(value, (IteratorValue, LiveIteratorValue)) or is_lazy(value)
