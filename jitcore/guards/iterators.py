"""What an iterator of Python's own has not produced yet, read without advancing it (the guard tree's "rest" step).

A loop interrupted by a graph break hands its iterator to the resume function as a real object; capture guards and
models it through `remaining_items(it)`: a tuple of the items still to come, computed from the iterator's
`__reduce__` (its container and position), never by calling next(). Only iterators over containers that cannot
change are read: over tuples, strings and ranges, reversed tuples, and zip / enumerate over such iterators. An
iterator over a list or a dict stays live in Python (an append while looping is seen, a dict's change of size
raises), which a snapshot of its rest would not be: a list iterator is read as its list and its position instead
(`list_iterator_state`, the "iterstate" step), so the list stays live. Imports the standard library only.
"""

from __future__ import annotations

__all__ = ["READABLE_ITERATOR_TYPES", "LIST_ITERATOR", "remaining_items", "list_iterator_state"]

_SEQUENCE_ITERATORS = {type(iter(())), reversed, type(iter("")), type(iter("\u00e9"))}
_RANGE_ITERATORS = {type(iter(range(0))), type(iter(range(1 << 64)))}
LIST_ITERATOR = type(iter([]))
#: the iterator types remaining_items() reads
READABLE_ITERATOR_TYPES = frozenset(_SEQUENCE_ITERATORS | _RANGE_ITERATORS | {zip, enumerate})


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
    if kind in _SEQUENCE_ITERATORS:
        seq = args[0]
        if type(seq) not in (tuple, str):
            raise TypeError(f"an iterator over a {type(seq).__name__} (it reads its container as it changes)")
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


def list_iterator_state(it, part: str):
    """A list iterator's list ("seq") or the index of its next item ("pos"), read without advancing it; an
    exhausted one has no list (None) and position -1 (it stays exhausted whatever the list does later)."""
    reduced = it.__reduce__()
    if len(reduced) < 3:
        return None if part == "seq" else -1
    return reduced[1][0] if part == "seq" else reduced[2]
