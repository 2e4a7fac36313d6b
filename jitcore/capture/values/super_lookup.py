"""`super()` attribute lookup for LOAD_SUPER_ATTR: the MRO of the instance's type, after the given class."""
from __future__ import annotations

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.user_object import _class_attribute, _MISSING

__all__ = ["super_attribute"]


def super_attribute(state, cls_value, self_value, name: str):
    cls = cls_value.constant()
    if not isinstance(cls, type):
        raise GraphBreak("unsupported_value", "super() with a class jitcore does not know")
    instance_type = self_value.python_type()
    if isinstance(instance_type, type) and issubclass(instance_type, type):
        raise GraphBreak("unsupported_value", "super() in a classmethod")
    mro = instance_type.__mro__
    if cls not in mro:
        raise GraphBreak.raises(TypeError, "super(type, obj): obj must be an instance of type")
    state.ctx.guard_class_lookup(instance_type, name, after=cls)
    for klass in mro[mro.index(cls) + 1:]:
        raw = klass.__dict__.get(name, _MISSING)
        if raw is not _MISSING:
            return _class_attribute(state, self_value, klass, name, raw)
    raise GraphBreak.raises(AttributeError, f"'super' object has no attribute '{name}'")


