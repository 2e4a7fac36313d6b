"""`functools.partial` objects: made inside the captured code or passed in (their function and arguments as
values)."""
from __future__ import annotations

import functools

from jitcore.capture.values.base import Value
from jitcore.capture.values.mapping import DictValue
from jitcore.capture.values.sequence import TupleValue

__all__ = ["PartialValue"]


class PartialValue(Value):
    """functools.partial(fn, *args, **keywords): calling it calls fn with the stored arguments first."""

    __slots__ = ("fn", "args", "keywords")

    def __init__(self, fn, args, keywords, source=None):
        super().__init__(source)
        self.fn = fn
        self.args = args
        self.keywords = keywords

    def python_type(self):
        return functools.partial

    def getattr(self, state, name):
        if name == "func":
            return self.fn
        if name == "args":
            return TupleValue(list(self.args))
        if name == "keywords":
            return DictValue(dict(self.keywords))
        return super().getattr(state, name)

    def call(self, state, args, kwargs):
        return self.fn.call(state, [*self.args, *args], {**self.keywords, **kwargs})

    def children(self):
        return [self.fn, *self.args, *self.keywords.values()]

    def reconstruct(self, codegen):
        partial = codegen.constant_object(functools.partial, "partial")
        args = "".join(f", {codegen.load(v)}" for v in self.args)
        keywords = "".join(f", {k}={codegen.load(v)}" for k, v in self.keywords.items())
        return f"{partial}({codegen.load(self.fn)}{args}{keywords})"
