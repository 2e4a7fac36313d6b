"""Formatting values into text the way CPython does: one field (an f-string's FORMAT_VALUE, a `str.format`
replacement field) and whole `str.format` templates whose arguments are not all constants, such as
`"{t.shape[0]} {t.dtype}".format(t=x)` or `"{name}[{dim}]".format(**cfg)`. A field is resolved through the
values' own attribute and item reads, so what it reads is guarded as any read in the function is.
Entry points: `format_field`, `format_template`."""
from __future__ import annotations

import _string
import string

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.base import NOT_CONSTANT
from jitcore.capture.values.constant import const, fold

__all__ = ["format_field", "format_template"]

_CONVERT = {"s": str, "r": repr, "a": ascii}


def format_field(state, value, conversion: str | None, spec):
    """format(value!conversion, spec) as a constant string value: conversion is None, "s", "r" or "a"."""
    v = value.constant()
    if v is NOT_CONSTANT and spec == "" and (conversion in ("s", "r") or
                                             value.python_type().__format__ is object.__format__):
        # f"{e}", f"{e!r}" of a value that knows its text (object.__format__ with no spec is str())
        return value.text(state, "repr" if conversion == "r" else "str")
    if v is NOT_CONSTANT or spec is NOT_CONSTANT:
        raise GraphBreak("unsupported_value", f"formatting a {value.kind_name} into a string")
    if conversion is not None:
        v = fold(state, _CONVERT[conversion], v)
    return const(fold(state, format, v, spec))


def format_template(state, template: str, args: list, kwargs: dict):
    """template.format(*args, **kwargs) field by field, with CPython's errors for a bad index, key or numbering."""
    pieces, auto = [], 0
    for literal, field, spec, conversion in fold(state, lambda: list(string.Formatter().parse(template))):
        pieces.append(literal)
        if field is None:
            continue
        if "{" in spec:
            raise GraphBreak("unsupported_value", "str.format with a nested replacement field in a format spec")
        first, rest = fold(state, _string.formatter_field_name_split, field)
        if first == "":
            if auto is None:
                raise GraphBreak.raises(ValueError, "cannot switch from manual field specification to automatic "
                                                    "field numbering")
            first, auto = auto, auto + 1
        elif isinstance(first, int):
            if auto:
                raise GraphBreak.raises(ValueError, "cannot switch from automatic field numbering to manual field "
                                                    "specification")
            auto = None
        value = _argument(first, args, kwargs)
        for is_attribute, key in rest:
            value = value.getattr(state, key) if is_attribute else value.getitem(state, const(key))
        text = format_field(state, value, conversion, spec).constant()
        if not isinstance(text, str):
            raise GraphBreak("unsupported_value", "str.format of a value whose text is not known at capture time")
        pieces.append(text)
    return const("".join(pieces))


def _argument(first, args: list, kwargs: dict):
    if isinstance(first, int):
        if first >= len(args):
            raise GraphBreak.raises(IndexError, f"Replacement index {first} out of range for positional args tuple")
        return args[first]
    if first not in kwargs:
        raise GraphBreak.raises(KeyError, repr(first))
    return kwargs[first]
