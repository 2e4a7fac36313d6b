"""Formatting values into text the way CPython does: one field (an f-string's FORMAT_VALUE, a `str.format`
replacement field), the pieces of an f-string, and whole `str.format` templates whose arguments are not all
constants, such as `"{t.shape[0]} {t.dtype}".format(t=x)` or `"{name}[{dim}]".format(**cfg)`. A field is resolved
through the values' own attribute and item reads, so what it reads is guarded as any read in the function is.

Note [Text of a symbolic number]: a dynamic size or number formatted into a string (`f"{x.shape[0]} rows"`,
`"{}".format(n)`) does not pin it. The string is a `DeferredTextValue`: the entry formats it after the graph runs,
from the numbers the graph hands back, as torch.compile's deferred str.format does. Only a use of its text while
tracing (comparing it, a method, hashing it as a key) pins the numbers, with their guards; from then on it is the
constant it formats to.
Entry points: `format_field`, `format_template`, `join_text`, `DeferredTextValue`."""
from __future__ import annotations

import _string
import string

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.base import NOT_CONSTANT, Value
from jitcore.capture.values.constant import ConstantValue, const, fold

__all__ = ["DeferredTextValue", "format_field", "format_template", "join_text"]

_CONVERT = {"s": str, "r": repr, "a": ascii}


class DeferredTextValue(ConstantValue):
    """A string with symbolic numbers in it (Note [Text of a symbolic number]). `parts` are literal strings and
    (number value, conversion, spec) fields. Reading `value` (any use as a constant) pins the numbers."""

    __slots__ = ("parts", "_text")

    def __init__(self, parts):
        Value.__init__(self, None)
        self.parts = parts
        self._text = None

    @property
    def value(self):
        if self._text is None:
            self._text = "".join(p if isinstance(p, str) else _formatted(p[0].constant(), p[1], p[2])
                                 for p in self.parts)
        return self._text

    def python_type(self):
        return str

    def pending(self) -> bool:
        """Not yet pinned: the text is still the entry's to make."""
        return self._text is None

    def children(self):
        return [p[0] for p in self.parts if not isinstance(p, str)]

    def reconstruct(self, codegen):
        if self._text is not None:
            return codegen.constant(self._text)
        template, fields = [], []
        for p in self.parts:
            if isinstance(p, str):
                template.append(p.replace("{", "{{").replace("}", "}}"))
            else:
                template.append("{" + ("" if p[1] is None else "!" + p[1]) + (":" + p[2] if p[2] else "") + "}")
                fields.append(codegen.load(p[0]))
        return f"{codegen.constant(''.join(template))}.format({', '.join(fields)})"

    def __repr__(self):
        return f"DeferredText({self.parts!r})"


def _formatted(v, conversion, spec):
    return format(v if conversion is None else _CONVERT[conversion](v), spec)


def join_text(parts: list):
    """The string of these parts (strings, constant-string values, deferred texts): a constant when no part
    defers, else one DeferredTextValue."""
    flat = []
    for part in parts:
        if isinstance(part, DeferredTextValue) and part.pending():
            flat.extend(part.parts)
        else:
            text = part if isinstance(part, str) else part.constant()
            if not isinstance(text, str):
                raise GraphBreak("unsupported_value", "joining text that is not known at capture time")
            flat.append(text)
    if all(isinstance(p, str) for p in flat):
        return const("".join(flat))
    return DeferredTextValue(flat)


def _defers(state, value, conversion, spec) -> bool:
    """A symbolic number formatted with a spec that formats every number of its type (tried on one now, so a bad
    spec raises the program's own error here): left to the entry."""
    if not value.is_symbolic_number() or conversion not in (None, "s", "r") or type(spec) is not str:
        return False
    kind = value.python_type()
    if kind not in (int, float):
        return False
    fold(state, _formatted, kind(1), conversion, spec)
    return True


def format_field(state, value, conversion: str | None, spec):
    """format(value!conversion, spec) as a string value: conversion is None, "s", "r" or "a"."""
    if _defers(state, value, conversion, spec):
        return DeferredTextValue([(value, conversion, spec)])
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
        pieces.append(format_field(state, value, conversion, spec))
    return join_text(pieces)


def _argument(first, args: list, kwargs: dict):
    if isinstance(first, int):
        if first >= len(args):
            raise GraphBreak.raises(IndexError, f"Replacement index {first} out of range for positional args tuple")
        return args[first]
    if first not in kwargs:
        raise GraphBreak.raises(KeyError, repr(first))
    return kwargs[first]
