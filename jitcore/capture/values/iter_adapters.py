"""enumerate(), zip(), map(), filter() and reversed(list) over live iterators (values/iterator.py): each step takes
the next item of the iterators underneath when Python would, so a list growing inside `for i, v in enumerate(lst)`
(or `map(f, lst)`, `filter(p, lst)`) is seen as CPython sees it, and map's function and filter's predicate run
between the loop's steps, not all before it; a graph break inside such a loop hands Python a real enumerate / zip /
map / filter / reversed over the real iterators."""
from __future__ import annotations

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.constant import const
from jitcore.capture.values.iterator import LiveIteratorValue
from jitcore.capture.values.sequence import TupleValue

__all__ = ["EnumerateValue", "FilterValue", "MapValue", "ReversedListValue", "ZipValue", "next_row"]


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
    """zip(iterators..., strict=): a row takes one item from each in order and stops at the first exhausted one;
    strict, it then checks the others end there too (zip_next's check in bltinmodule.c)."""

    __slots__ = ("inners", "strict")

    def __init__(self, inners, strict=False):
        super().__init__(None)
        self.inners = inners
        self.strict = strict

    def python_type(self):
        return zip

    def children(self):
        return list(self.inners)

    def next_item(self, state=None):
        row = next_row(self.inners, state, self.strict)
        return None if row is None else TupleValue(row)

    def reconstruct(self, codegen):
        strict = ", strict=True" if self.strict else ""
        return "zip(" + ", ".join(codegen.load(inner) for inner in self.inners) + strict + ")"


def next_row(inners, state, strict=False):
    """One item from each iterator (zip's and map's step), or None once any of them is exhausted; with `strict`,
    zip(strict=True)'s ValueError where they end at different rows."""
    row = []
    for inner in inners:
        item = inner.next_item(state)
        if item is None:
            if strict:
                _check_strict_end(inners, len(row), state)
            return None
        row.append(item)
    return row


def _check_strict_end(inners, ended, state):
    """zip(strict=True) found iterator `ended` exhausted: raise as CPython does if it is not the first, else take
    one more item from each later one (advancing it, as CPython does) and raise at the first that still had one."""
    def plural(i):
        return " " if i == 1 else "s 1-"
    if ended:
        raise GraphBreak.raises(ValueError, f"zip() argument {ended + 1} is shorter than argument"
                                            f"{plural(ended)}{ended}")
    for i, inner in enumerate(inners[1:], start=1):
        if inner.next_item(state) is not None:
            raise GraphBreak.raises(ValueError, f"zip() argument {i + 1} is longer than argument{plural(i)}{i}")


class MapValue(LiveIteratorValue):
    """map(fn, iterators...): a step takes one item from each iterator and calls fn on them then."""

    __slots__ = ("fn", "inners")

    def __init__(self, fn, inners):
        super().__init__(None)
        self.fn = fn
        self.inners = inners

    def python_type(self):
        return map

    def children(self):
        return [self.fn, *self.inners]

    def next_item(self, state=None):
        row = next_row(self.inners, state)
        return None if row is None else self.fn.call(state, row, {})

    def reconstruct(self, codegen):
        return f"map({codegen.load(self.fn)}, " + "".join(f"{codegen.load(inner)}, " for inner in self.inners) + ")"


class FilterValue(LiveIteratorValue):
    """filter(predicate or None, iterator): a step takes items until one passes."""

    __slots__ = ("fn",)

    def __init__(self, fn, inner):
        super().__init__(inner)
        self.fn = fn

    def python_type(self):
        return filter

    def children(self):
        return [self.fn, self.container]

    def next_item(self, state=None):
        while True:
            item = self.container.next_item(state)
            if item is None:
                return None
            test = item if self.fn.constant() is None else self.fn.call(state, [item], {})
            if test.truth(state):
                return item

    def reconstruct(self, codegen):
        return f"filter({codegen.load(self.fn)}, {codegen.load(self.container)})"


class ReversedListValue(LiveIteratorValue):
    """reversed(list): CPython's reverse iterator keeps an index from the end and reads the list at it each step,
    so items inserted before it shift what it reads, appends are not seen, and a list shorter than the index
    ends it."""

    __slots__ = ("done",)

    def __init__(self, container, state):
        super().__init__(container)
        self.position = len(container.iterate(state)) - 1
        self.done = False

    def python_type(self):
        return type(reversed([]))

    def next_item(self, state=None):
        items = self.container.iterate(state)
        if self.done or not 0 <= self.position < len(items):
            self.done = True
            return None
        self.position -= 1
        return items[self.position + 1]

    def reconstruct(self, codegen):
        if self.done:
            return "iter(())"
        resume = codegen.constant_object(reversed_list_at, "reversed_list_at")
        return f"{resume}({codegen.load(self.container)}, {self.position})"


def reversed_list_at(lst, index):
    """A reverse iterator over lst that reads index next (what a loop interrupted by a graph break holds)."""
    it = reversed(lst)
    it.__setstate__(index)
    return it
