"""Objects jitcore does not model yet: they can be passed around and returned, but any use is a graph break."""
from __future__ import annotations

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.base import Value, KnownObjectValue

__all__ = ["OpaqueValue", "NativeFunctionValue"]


class OpaqueValue(KnownObjectValue):
    __slots__ = ()

    @property
    def kind_name(self):
        return f"{type(self.obj).__name__} object"

    def getattr(self, state, name):
        """A method of an object jitcore does not model: read when it is called, and the call is the break,
        so it runs natively between two graphs. Other attributes break right away."""
        raw = None
        for klass in type(self.obj).__mro__:
            if name in klass.__dict__:
                raw = klass.__dict__[name]
                break
        if raw is not None and callable(raw) and not isinstance(raw, (property, type)) \
                and name not in getattr(self.obj, "__dict__", {}):
            return DeferredMethodValue(self, name)
        return super().getattr(state, name)


class NativeFunctionValue(OpaqueValue):
    """A function jitcore does not trace into (the standard library's I/O, logging, time, os...): a call to it
    is a graph break, so it runs natively between two graphs."""

    __slots__ = ("kind",)

    def __init__(self, obj, source=None, kind="unsupported_call"):
        super().__init__(obj, source)
        self.kind = kind

    def call(self, state, args, kwargs):
        name = getattr(self.obj, "__qualname__", None) or getattr(self.obj, "__name__", repr(self.obj))
        raise GraphBreak(self.kind, f"{getattr(self.obj, '__module__', '') or ''}.{name}()".lstrip("."),
                         untouched=self)


class DeferredMethodValue(Value):
    """`obj.name` for an opaque obj: calling it is a graph break, so the call runs natively."""

    __slots__ = ("owner", "name", "kind")

    def __init__(self, owner, name, kind=None):
        super().__init__(None)
        self.owner = owner
        self.name = name
        self.kind = kind

    def call(self, state, args, kwargs):
        owner_kind = self.owner.kind if isinstance(self.owner, NativeFunctionValue) else None
        kind = self.kind or owner_kind or "unsupported_call"
        raise GraphBreak(kind, f"{self.owner.python_type().__name__}.{self.name}()", untouched=self)

    def children(self):
        return [self.owner]

    def reconstruct(self, codegen):
        return f"{codegen.load(self.owner)}.{self.name}"
