"""Objects jitcore does not model yet: they can be passed around and returned, but any use is a graph break."""
from __future__ import annotations

from jitcore.capture.values.base import Value

__all__ = ["OpaqueValue"]


class OpaqueValue(Value):
    __slots__ = ("obj",)

    def __init__(self, obj, source=None):
        super().__init__(source)
        self.obj = obj

    @property
    def kind_name(self):
        return f"{type(self.obj).__name__} object"

    def python_type(self):
        return type(self.obj)

    def identity(self):
        return self.obj
