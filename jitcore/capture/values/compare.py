"""Python's rich comparisons of containers over values: lists and tuples compare lexicographically, dicts by
keys and values, each pair of items compared as Python does (identity first, then `==`, then the ordering).

Mirrors Objects/listobject.c `list_richcompare` (and tuplerichcompare, dict_equal): the first index where the
items differ decides; when one sequence is a prefix of the other, the lengths decide. Ordering a list against a
tuple (or a dict against anything) raises TypeError. Items are compared by the operator protocol handed in
(`binary`, builtins.apply_binary), so a tensor item makes the comparison data-dependent, a break.
Entry point: `compare_containers(state, op, a, b, binary)`, NotImplemented when neither side is a container here.
"""
from __future__ import annotations

import collections

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.constant import const
from jitcore.capture.values.mapping import DictValue
from jitcore.capture.values.sequence import SequenceValue

__all__ = ["compare_containers", "ORDERINGS"]

ORDERINGS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_LENGTHS = {"lt": int.__lt__, "le": int.__le__, "gt": int.__gt__, "ge": int.__ge__, "eq": int.__eq__,
            "ne": int.__ne__}


def _family(value):
    """list or tuple for a sequence value, dict for a dict value, else None."""
    if isinstance(value, SequenceValue):
        return value.container  # tuple, list or deque: each compares only with its own kind
    if isinstance(value, DictValue):
        return dict
    return None


def _same_object(a, b) -> bool:
    """Python's identity shortcut (PyObject_RichCompare is skipped for `x is y`), where jitcore knows it."""
    if a is b:
        return True
    ia, ib = _identity(a), _identity(b)
    return ia is not None and ia is ib


def _identity(value):
    getter = getattr(type(value), "identity", None)
    return getter(value) if getter is not None else None


def items_equal(state, a, b, binary) -> bool:
    """`a == b` for two items inside containers, as a Python bool (identity, then ==)."""
    if _same_object(a, b):
        return True
    return binary(state, "eq", a, b).truth(state)


def compare_containers(state, op: str, a, b, binary):
    """`a <op> b` when a or b is a list, tuple or dict value; NotImplemented otherwise."""
    fa, fb = _family(a), _family(b)
    if fa is None or fb is None:
        return NotImplemented
    if fa is not fb:
        if op in ("eq", "ne"):
            return const(op == "ne")
        raise GraphBreak.raises(TypeError, f"'{ORDERINGS[op]}' not supported between instances of "
                                           f"'{a.python_type().__name__}' and '{b.python_type().__name__}'")
    if fa is dict:
        if op not in ("eq", "ne"):
            raise GraphBreak.raises(TypeError, f"'{ORDERINGS[op]}' not supported between instances of "
                                               f"'{a.python_type().__name__}' and '{b.python_type().__name__}'")
        equal = _dicts_equal(state, a, b, binary)
        if equal and _ordered(a) and _ordered(b):
            equal = list(a.items) == list(b.items)  # OrderedDict == OrderedDict also compares the order
        return const(equal == (op == "eq"))
    left, right = a.sequence_items(), b.sequence_items()
    if op in ("eq", "ne") and len(left) != len(right):
        return const(op == "ne")
    for x, y in zip(left, right):
        if not items_equal(state, x, y, binary):
            if op in ("eq", "ne"):
                return const(op == "ne")
            return binary(state, op, x, y)
    return const(_LENGTHS[op](len(left), len(right)))


def _ordered(value) -> bool:
    return issubclass(value.python_type(), collections.OrderedDict)


def _dicts_equal(state, a, b, binary) -> bool:
    if len(a.items) != len(b.items):
        return False
    for key, value in a.items.items():
        if key not in b.items:
            return False
        if not items_equal(state, value, b.items[key], binary):
            return False
    return True

