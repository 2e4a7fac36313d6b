"""Instances of dict subclasses created inside the captured function (Hugging Face's ModelOutput, user
OrderedDict subclasses): items like a dict value, attributes like a new object, Python overrides inlined.

Such a class usually routes its attribute and item writes through each other (`__setattr__` also stores the
item, `__setitem__` also sets the attribute); both stores are modelled, so the object rebuilt after the graph
holds exactly what eager Python would have built, written through the builtin dict's own methods.
"""
from __future__ import annotations

import collections
import types

from jitcore.guards import DictKeysMatch
from jitcore.capture.breaks import GraphBreak
from jitcore.capture.sources import AttrSource
from jitcore.capture.values.base import NOT_CONSTANT, MethodCallValue
from jitcore.capture.values.constant import const
from jitcore.capture.values.mapping import AttributeDictValue, DictValue, key_source
from jitcore.capture.values.objects import ClassValue
from jitcore.capture.values.user_object import (_DunderProtocol, _class_attribute, class_lookup, relied_class_lookup,
                                                default_store, default_delete, ordinary_metaclass, _MISSING)
from jitcore.capture.values.wrapping import wrap

__all__ = ["NewDictObjectValue", "dict_constructible"]

#: builtin dict types a modelled subclass may derive from; their methods act on the item storage
BUILTIN_DICTS = (dict, collections.OrderedDict)


def dict_constructible(cls) -> bool:
    """A dict subclass whose instances NewDictObjectValue models: a Python class over dict or OrderedDict with
    the builtin __new__ and attribute lookup (Python __init__, __setattr__, __setitem__, ... are inlined)."""
    if not isinstance(cls, type) or not ordinary_metaclass(cls) or cls in BUILTIN_DICTS:
        return False
    if not issubclass(cls, dict) or "__slots__" in vars(cls):
        return False
    base = _builtin_base(cls)
    return (base is not None and cls.__new__ is base.__new__
            and cls.__getattribute__ in (object.__getattribute__, dict.__getattribute__)
            and class_lookup(cls, "__getattr__") is _MISSING
            and (cls.__setattr__ is object.__setattr__ or isinstance(cls.__setattr__, types.FunctionType)))


def _builtin_base(cls):
    for klass in cls.__mro__:
        if klass in BUILTIN_DICTS:
            return klass
        if not klass.__flags__ & (1 << 9):  # a C type other than the dicts (defaultdict, Counter's base...)
            return None
    return None


class NewDictObjectValue(_DunderProtocol, DictValue):
    __slots__ = ("attrs",)
    has_raw_setattr = True

    def __init__(self, cls):
        super().__init__({}, None, dict_type=cls)
        #: instance attribute name -> value (the object's __dict__), in assignment order
        self.attrs: dict = {}

    @property
    def kind_name(self):
        return f"new {self.dict_type.__name__} object"

    def constant(self):
        return NOT_CONSTANT

    # -- attributes: the class's Python overrides, then the instance dict, then class attributes -------------
    def getattr(self, state, name):
        cls = self.dict_type
        if name == "__class__":
            return ClassValue(cls)
        if name == "__dict__":
            return AttributeDictValue(self)
        raw = relied_class_lookup(state, cls, name)
        if isinstance(raw, property) or (raw is not _MISSING and hasattr(type(raw), "__set__")
                                         and not _is_dict_slot(raw)):
            return _class_attribute(state, self, cls, name, raw)
        if name in self.attrs:
            return self.attrs[name]
        if raw is _MISSING:
            raise GraphBreak.raises(AttributeError, f"'{cls.__name__}' object has no attribute '{name}'")
        if _is_dict_slot(raw):
            return MethodCallValue(self, name, builtin=True)
        return _class_attribute(state, self, cls, name, raw)

    def has_attr(self, state, name) -> bool:
        return name in self.attrs or class_lookup(self.dict_type, name) is not _MISSING

    def setattr(self, state, name, value):
        hook = self.dict_type.__setattr__
        if hook is object.__setattr__:
            self.raw_setattr(state, name, value)
        else:
            state.inline_call(hook, [self, const(name), value], {})

    def raw_setattr(self, state, name, value):
        default_store(state, self, self.dict_type, self.attrs, name, value)

    def delattr(self, state, name):
        default_delete(self.dict_type, self.attrs, name)

    # -- items: Python overrides (through _DunderProtocol) before the builtin storage -----------------------
    def call_method(self, state, name, args, kwargs):
        raw = relied_class_lookup(state, self.dict_type, name)
        if isinstance(raw, types.FunctionType):
            return state.inline_call(raw, [self, *args], kwargs)
        return self.builtin_call_method(state, name, args, kwargs)

    def builtin_call_method(self, state, name, args, kwargs):
        if name == "__setitem__" and len(args) == 2:
            DictValue.setitem(self, state, args[0], args[1])
            return const(None)
        if name == "__getitem__" and len(args) == 1:
            return DictValue.getitem(self, state, args[0])
        if name == "__delitem__" and len(args) == 1:
            DictValue.delitem(self, state, args[0])
            return const(None)
        if name == "__contains__" and len(args) == 1:
            return DictValue.contains(self, state, args[0])
        if name == "__len__" and not args:
            return const(len(self.items))
        if name == "__init__":
            return self.builtin_call_method(state, "update", args, kwargs)
        if name == "copy":
            return DictValue(dict(self.items))
        return DictValue.builtin_call_method(self, state, name, args, kwargs)

    # getitem/setitem/length/iterate/contains/binary_op: _DunderProtocol inlines the class's Python dunder and
    # falls back to DictValue's (next in the MRO); these two need the dict's own meaning as the fallback
    def delitem(self, state, key):
        if self._dunder(state, "__delitem__", [key]) is _MISSING:
            DictValue.delitem(self, state, key)

    def truth(self, state):
        return _DunderProtocol.truth(self, state) if _python_dunder(self.dict_type, "__bool__") or \
            _python_dunder(self.dict_type, "__len__") else bool(self.items)

    def as_fx_arg(self, state):
        raise GraphBreak("unsupported_value", f"passing a {self.kind_name} to a tensor operation")

    def as_fake(self, state):
        raise GraphBreak("unsupported_value", f"passing a {self.kind_name} to a tensor operation")

    def children(self):
        return [*self.items.values(), *self.attrs.values()]

    def reconstruct(self, codegen):
        build = codegen.constant_object(build_dict_object, "build_dict_object")
        cls = codegen.constant_object(self.dict_type, "cls")
        items = "".join(f"({key_source(codegen, k)}, {codegen.load(v)}), " for k, v in self.items.items())
        attrs = "".join(f"{name!r}: {codegen.load(v)}, " for name, v in self.attrs.items())
        return f"{build}({cls}, ({items}), {{{attrs}}})"


def _is_dict_slot(raw) -> bool:
    """A method of the builtin dict types (dict.__setitem__, OrderedDict.keys ...): it acts on the items."""
    return isinstance(raw, (types.MethodDescriptorType, types.WrapperDescriptorType,
                            types.ClassMethodDescriptorType)) and raw.__objclass__ in BUILTIN_DICTS


def _python_dunder(cls, name) -> bool:
    return isinstance(class_lookup(cls, name), types.FunctionType)


def build_dict_object(cls, items, attrs):
    """The object eager Python would have built: items stored through the builtin dict's own __setitem__ (the
    subclass's overrides already ran while tracing), attributes straight into __dict__."""
    obj = cls.__new__(cls)
    store = _builtin_base(cls).__setitem__
    for key, value in items:
        store(obj, key, value)
    obj.__dict__.update(attrs)
    return obj


class DictObjectValue(DictValue):
    """A dict-subclass instance passed in that also carries attributes (a ModelOutput returned by a model):
    items like any dict value, attributes read from its guarded __dict__ or its class."""

    __slots__ = ("obj",)

    def __init__(self, obj, items, source):
        super().__init__(items, source, dict_type=type(obj))
        self.obj = obj

    def identity(self):
        return self.obj

    def getattr(self, state, name):
        cls = self.dict_type
        d = self.obj.__dict__
        if name == "__class__":
            return ClassValue(cls)
        raw = relied_class_lookup(state, cls, name)
        if isinstance(raw, property) or (raw is not _MISSING and hasattr(type(raw), "__set__")
                                         and not _is_dict_slot(raw) and name != "__dict__"):
            return _class_attribute(state, self, cls, name, raw)
        state.ctx.guard(AttrSource(self.source, "__dict__"), DictKeysMatch(tuple(d)))
        if name in d:
            return wrap(state, d[name], AttrSource(self.source, name))
        if raw is _MISSING or name == "__dict__":
            return super().getattr(state, name)
        if _is_dict_slot(raw) or self._override(name) is not None or name in ("keys", "values", "items", "get"):
            return super().getattr(state, name)
        return _class_attribute(state, self, cls, name, raw)

    def has_attr(self, state, name) -> bool:
        state.ctx.guard(AttrSource(self.source, "__dict__"), DictKeysMatch(tuple(self.obj.__dict__)))
        return hasattr(self.obj, name)

    def getitem(self, state, key):
        override = self._override("__getitem__")
        if override is not None:
            return state.inline_call(override, [self, key], {})
        return super().getitem(state, key)

    def iterate(self, state):
        override = self._override("__iter__")
        if override is not None:
            return state.inline_call(override, [self], {}).iterate(state)
        return super().iterate(state)

    def builtin_call_method(self, state, name, args, kwargs):
        if name == "__getitem__" and len(args) == 1:
            return DictValue.getitem(self, state, args[0])
        if name == "__contains__" and len(args) == 1:
            return DictValue.contains(self, state, args[0])
        if name == "__len__" and not args:
            return const(len(self.items))
        return super().builtin_call_method(state, name, args, kwargs)

    def setattr(self, state, name, value):
        raise GraphBreak("side_effect", f"setting {name!r} on a {self.dict_type.__name__} passed into the function")

    def reconstruct(self, codegen):
        return self.source.emit(codegen)
