"""Python modules (torch, math, a user's helper module) and classes.

A module's attributes are guarded on their own sources (`torch.relu` by identity), so a module attribute rebound or
a namespace passed in place of a module recompiles; a user module is also guarded by identity, torch and the
standard library by type.
"""
from __future__ import annotations

import enum
import sys
import types

import torch

from jitcore.guards import HasAttrMatch

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.side_effects import DELETED
from jitcore.capture.sources import AttrSource, GlobalSource, ModuleGlobalSource
from jitcore.capture.values.base import Value, NOT_CONSTANT
from jitcore.capture.values.call_rules import call
from jitcore.capture.values.constant import const, fold
from jitcore.capture.values.wrapping import wrap

__all__ = ["PythonModuleValue", "ClassValue", "is_trusted_module", "pending_class_attribute"]

_TRUSTED_ROOTS = frozenset({"torch", "math", "operator", "functools", "itertools", "collections", "builtins",
                            "typing", "numbers", "enum", "dataclasses", "abc", "warnings", "inspect", "types"})


def is_trusted_module(name: str | None) -> bool:
    return bool(name) and name.split(".", 1)[0] in _TRUSTED_ROOTS


class PythonModuleValue(Value):
    __slots__ = ("module",)

    def __init__(self, module, source=None):
        super().__init__(source)
        self.module = module

    def python_type(self):
        return types.ModuleType

    def identity(self):
        return self.module

    def global_source(self, state, name):
        """The source of `module.name` as a global (what `global name; name = ...` in the module writes), for a
        module whose globals jitcore reloads; None for others."""
        if vars(self.module) is state.ctx.globals:
            return GlobalSource(name)
        module_name = getattr(self.module, "__name__", None)
        if sys.modules.get(module_name) is self.module and not is_trusted_module(module_name):
            return ModuleGlobalSource(module_name, name)
        return None

    def has_attr(self, state, name) -> bool:
        source = self.global_source(state, name)
        if source is not None and state.ctx.side_effects.load_source(source) is not None:
            return True
        present = hasattr(self.module, name)
        if self.source is not None and not is_trusted_module(self.module.__name__):
            state.ctx.guard(self.source, HasAttrMatch(name, present))
        return present

    def setattr(self, state, name, value):
        source = self.global_source(state, name)
        if source is None:
            raise GraphBreak("side_effect", f"setting attribute {name!r} of module {self.module.__name__}")
        state.ctx.side_effects.store_source(source, value)

    def getattr(self, state, name):
        source = self.global_source(state, name)
        assigned = state.ctx.side_effects.load_source(source) if source is not None else None
        if assigned is not None:
            return assigned
        try:
            attr = getattr(self.module, name)
        except AttributeError as exc:
            raise GraphBreak.raises(AttributeError, str(exc)) from None
        # torch's and the standard library's attributes too: the result is guarded where it was read
        return wrap(state, attr, AttrSource(self.source, name) if self.source is not None else None)


class ClassValue(Value):
    """A class object (torch.Tensor, a user class, int): isinstance targets, constructors of constants."""

    __slots__ = ("cls",)

    def __init__(self, cls, source=None):
        super().__init__(source)
        self.cls = cls

    def python_type(self):
        return type(self.cls)

    def identity(self):
        return self.cls

    def constant(self):
        return self.cls

    def getattr(self, state, name):
        if state.ctx.standin_value(self.cls) is not None and not _in_class_dicts(self.cls, name):
            # Note [Classes made inside]: the stand-in's own type attributes (__dict__, __mro__, __bases__) would
            # hand out the stand-in itself, not the class the entry makes
            raise GraphBreak("unsupported_value", f"{self.cls.__name__}.{name} of a class made inside")
        if self._writable(name):
            pending = pending_class_attribute(state, self.cls, name)
            if pending is DELETED:
                raise GraphBreak("side_effect", f"reading {self.cls.__name__}.{name} after deleting it in the call")
            if pending is not None:
                return pending
        try:
            attr = getattr(self.cls, name)
        except AttributeError as exc:
            raise GraphBreak.raises(AttributeError, str(exc)) from None
        if isinstance(attr, (staticmethod, classmethod)):
            attr = getattr(self.cls, name)
        if self.source is None and isinstance(self.cls, type):
            # `type(o).w`, `o.__class__.k`: no source to guard the result on, so guard the class dicts it came from
            state.ctx.guard_class_lookup(self.cls, name)
        source = AttrSource(self.source, name) if self.source is not None else None
        return wrap(state, attr, source)

    def _writable(self, name) -> bool:
        """A class whose attributes the capture writes (and reads back) itself: a class of Python code with
        type's own setattr, not a module class (modules read their class attributes on other paths), not a
        dunder (a slot), not over a descriptor of the metaclass."""
        cls = self.cls
        return (isinstance(cls, type) and bool(cls.__flags__ & _HEAP_TYPE) and type(cls).__setattr__ is
                type.__setattr__ and type(cls).__delattr__ is type.__delattr__ and not issubclass(cls, _MODULE)
                and not (name.startswith("__") and name.endswith("__"))
                and not hasattr(type(vars(type(cls)).get(name)), "__set__"))

    def setattr(self, state, name, value):
        """`Cls.attr = v` on a class that existed before the call: kept pending (later reads through the class or
        its instances see it) and written back after the graph. A value that binds (a function, a descriptor)
        would change how instances read it: not modelled."""
        raw = self.cls.__dict__.get(name) if isinstance(self.cls, type) else None
        if state.ctx.standin_value(self.cls) is not None:
            raise GraphBreak("side_effect", f"setting attribute {name!r} of a class made inside")
        if not self._writable(name) or _binds(value) or _binds_raw(raw):
            raise GraphBreak("side_effect", f"setting attribute {name!r} of a class")
        state.ctx.side_effects.store_attr(self, self.cls, name, value)

    def delattr(self, state, name):
        raw = self.cls.__dict__.get(name, _ABSENT) if isinstance(self.cls, type) else _ABSENT
        pending = state.ctx.side_effects.load_attr(self.cls, name)
        if state.ctx.standin_value(self.cls) is not None:
            raise GraphBreak("side_effect", f"deleting attribute {name!r} of a class made inside")
        if not self._writable(name) or _binds_raw(raw) or (pending is not None and _binds(pending)):
            raise GraphBreak("side_effect", f"deleting attribute {name!r} of a class")
        if pending is DELETED or (pending is None and raw is _ABSENT):
            raise GraphBreak.raises(AttributeError, f"type object '{self.cls.__name__}' has no attribute '{name}'")
        if pending is None:
            state.ctx.guard_class_lookup(self.cls, name)  # the replayed `del` relies on it being there
        state.ctx.side_effects.delete_attr(self, self.cls, name)

    def getitem(self, state, key):
        k = key.constant()
        if isinstance(self.cls, enum.EnumMeta) and k is not NOT_CONSTANT:
            return const(fold(state, self.cls.__getitem__, k))
        if k is not NOT_CONSTANT and isinstance(self.cls, type):
            return ClassValue(fold(state, self.cls.__class_getitem__, k)) if hasattr(self.cls, "__class_getitem__") \
                else super().getitem(state, key)
        return super().getitem(state, key)

    def truth(self, state):
        """A class is true unless its metaclass says otherwise (an Enum class by its number of members)."""
        if type(self.cls) is type or isinstance(self.cls, enum.EnumMeta):
            return bool(self.cls)
        return super().truth(state)

    def iterate(self, state):
        if isinstance(self.cls, enum.EnumMeta):
            return [const(member) for member in self.cls]
        return super().iterate(state)

    def length(self, state):
        if isinstance(self.cls, enum.EnumMeta):
            return len(self.cls)
        return super().length(state)

    def call(self, state, args, kwargs):
        return call(state, self.cls, args, kwargs)

    def as_fx_arg(self, state):
        return self.cls

    def as_fake(self, state):
        return self.cls

    def reconstruct(self, codegen):
        return codegen.constant(self.cls)


_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement, whose dict can change
_MODULE = torch.nn.Module
_ABSENT = object()


def pending_class_attribute(state, cls, name):
    """The value class attribute `name` of cls (or of a class on its MRO) was set to earlier in the call, DELETED
    when deleted from cls itself, or None when the class dicts as they are answer the lookup."""
    for klass in cls.__mro__:
        pending = state.ctx.side_effects.load_attr(klass, name)
        if pending is not None and (pending is not DELETED or klass is cls):
            return pending
        if name in klass.__dict__ and pending is None:
            return None
    return None


def _in_class_dicts(cls, name) -> bool:
    return name in ("__name__", "__qualname__") or any(name in vars(klass) for klass in cls.__mro__
                                                        if klass is not object)


def _binds(value) -> bool:
    """A value that a class attribute would bind to instances (a function, a descriptor): not a plain value."""
    try:
        kind = value.python_type()
    except GraphBreak:
        return True
    return hasattr(kind, "__get__") or callable(value.constant()) and value.constant() is not NOT_CONSTANT


def _binds_raw(raw) -> bool:
    return raw is not None and raw is not _ABSENT and hasattr(type(raw), "__get__")
