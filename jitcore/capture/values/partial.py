"""`functools.partial` objects: made inside the captured code or passed in (their function and arguments as
values)."""
from __future__ import annotations

import functools

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.base import Value, MethodCallValue
from jitcore.capture.values.mapping import DictValue
from jitcore.capture.values.objects import ClassValue
from jitcore.capture.values.sequence import TupleValue

__all__ = ["PartialValue"]


class PartialValue(Value):
    """functools.partial(fn, *args, **keywords): calling it calls fn with the stored arguments first."""

    __slots__ = ("fn", "args", "keywords", "instance_dict")

    def __init__(self, fn, args, keywords, source=None):
        super().__init__(source)
        self.fn = fn
        self.args = args
        self.keywords = keywords
        #: the partial's own __dict__ once read (a partial made inside starts with an empty one)
        self.instance_dict = None

    def python_type(self):
        return functools.partial

    def flattens(self) -> bool:
        """Whether functools.partial(self, ...) takes this partial apart, as CPython does for a partial without a
        __dict__: one made inside while nothing was written through it. One passed in is never taken apart here:
        whether CPython does depends on whether its __dict__ was ever materialised, which cannot be read without
        materialising it."""
        return self.source is None and self.instance_dict is None

    def getattr(self, state, name):
        if name in ("func", "args", "keywords") and isinstance(self.fn, PartialValue) and self.fn.source is not None:
            raise GraphBreak("unsupported_value", f"partial.{name} of a partial over a partial passed in (CPython "
                                                  "flattens it or not by the inner one's __dict__)")
        if name == "func":
            return self.fn
        if name == "args":
            return TupleValue(list(self.args))
        if name == "keywords":
            return DictValue(dict(self.keywords))
        if name == "__call__":
            return MethodCallValue(self, "__call__")
        if name == "__class__":
            return ClassValue(functools.partial)
        if self.source is None:
            # a partial made inside: its __dict__ is ours (empty until written through it); other names are
            # functools.partial's class attributes, or missing
            if name == "__dict__":
                if self.instance_dict is None:
                    self.instance_dict = DictValue({})
                return self.instance_dict
            if self.instance_dict is not None and name in self.instance_dict.items:
                return self.instance_dict.items[name]
            if not any(name in klass.__dict__ for klass in functools.partial.__mro__):
                raise GraphBreak.raises(AttributeError, f"'functools.partial' object has no attribute '{name}'")
        return super().getattr(state, name)

    def call_method(self, state, name, args, kwargs):
        if name == "__call__":
            return self.call(state, args, kwargs)
        return super().call_method(state, name, args, kwargs)

    def call(self, state, args, kwargs):
        return self.fn.call(state, [*self.args, *args], {**self.keywords, **kwargs})

    def children(self):
        return [self.fn, *self.args, *self.keywords.values()]

    def reconstruct(self, codegen):
        if self.instance_dict is not None and self.instance_dict.items:
            raise GraphBreak("unsupported_output", "rebuilding a functools.partial whose __dict__ was written")
        partial = codegen.constant_object(functools.partial, "partial")
        args = "".join(f", {codegen.load(v)}" for v in self.args)
        keywords = "".join(f", {k}={codegen.load(v)}" for k, v in self.keywords.items())
        return f"{partial}({codegen.load(self.fn)}{args}{keywords})"
