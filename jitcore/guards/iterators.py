"""What an iterator of Python's own has not produced yet, read without advancing it (the guard tree's "rest" step),
and the parts it is made of (the "iterstate" step).

A loop interrupted by a graph break hands its iterator to the resume function as a real object; capture guards and
models it through `remaining_items(it)`: a tuple of the items still to come, computed from the iterator's
`__reduce__` (its container and position), never by calling next(). The rest is read relative to where the
iterator is, so a guard on its first items holds at every position (Note [Iterators carried across a break],
capture/values/iterator_input.py). Iterators over containers that can change (a list, a dict) are read as they are
when the guard runs; capture watches their container for changes while it traces (`iterator_state` gives it: a
list iterator's list and position, a dict iterator's dict). zip, enumerate and map are read as their parts
(`iterator_state(it, i)`: the i-th argument they were made with). Imports the standard library only.
"""

from __future__ import annotations

import gc

__all__ = ["READABLE_ITERATOR_TYPES", "LIST_ITERATOR", "REVERSED_LIST_ITERATOR", "DICT_ITERATORS",
           "remaining_items", "iterator_state"]

_SEQUENCE_ITERATORS = {type(iter(())), reversed, type(iter("")), type(iter("\u00e9"))}
_RANGE_ITERATORS = {type(iter(range(0))), type(iter(range(1 << 64)))}
LIST_ITERATOR = type(iter([]))
REVERSED_LIST_ITERATOR = type(reversed([]))
DICT_ITERATORS = frozenset({type(iter({})), type(iter({}.values())), type(iter({}.items()))})
#: the iterator types remaining_items() reads
READABLE_ITERATOR_TYPES = frozenset(_SEQUENCE_ITERATORS | _RANGE_ITERATORS | DICT_ITERATORS
                                    | {zip, enumerate, LIST_ITERATOR, REVERSED_LIST_ITERATOR})


def remaining_items(it) -> tuple:
    """The items `it` will produce, in order, as a tuple; `it` itself is not advanced. TypeError for an iterator
    whose remaining items cannot be read without running code (a generator, map, a zip with strict=True...)."""
    kind = type(it)
    if kind not in READABLE_ITERATOR_TYPES:
        raise TypeError(f"the items of a {kind.__name__} cannot be read without advancing it")
    reduced = it.__reduce__()
    args = reduced[1]
    if kind in _RANGE_ITERATORS:
        return tuple(args[0])  # the range still to run
    if kind in DICT_ITERATORS:
        return tuple(args[0])  # CPython iterates a copy of the iterator (dictiter_reduce)
    if kind in _SEQUENCE_ITERATORS or kind is LIST_ITERATOR or kind is REVERSED_LIST_ITERATOR:
        seq = args[0]
        if len(reduced) < 3:
            return ()  # exhausted
        position = reduced[2]
        if reduced[0] is reversed:
            return tuple(seq[i] for i in range(min(position, len(seq) - 1), -1, -1))
        return tuple(seq[position:])
    if kind is enumerate:
        inner, start = args
        return tuple((start + i, item) for i, item in enumerate(remaining_items(inner)))
    if len(reduced) > 2:
        raise TypeError("a zip with strict=True (it raises when the lengths differ)")
    if not args:
        return ()
    return tuple(zip(*(remaining_items(inner) for inner in args)))


def iterator_state(it, part):
    """A part of `it`, read without advancing it: a list iterator's list ("seq", None once exhausted) or the index
    of its next item ("pos", -1 once exhausted); a dict iterator's dict ("dict", None once exhausted); the i-th
    argument a zip, an enumerate or a map was made with (int `part`: zip's iterators, enumerate's iterator and
    count, map's function and iterators); whether a zip is strict ("strict")."""
    if part == "dict":
        return next((d for d in gc.get_referents(it) if isinstance(d, dict)), None)
    reduced = it.__reduce__()
    if part == "strict":
        return len(reduced) > 2 and bool(reduced[2])
    if type(part) is int:
        return reduced[1][part]
    if len(reduced) < 3:
        return None if part == "seq" else -1
    return reduced[1][0] if part == "seq" else reduced[2]
