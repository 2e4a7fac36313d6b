"""Instances of user classes: objects passed in (read through guarded attribute sources) and objects created
inside the captured function (their attributes are values until the result is rebuilt).

Attribute lookup follows Python's order for the cases modelled: data descriptors (property) on the class, then
the instance dict, then class attributes (functions become bound methods). A class's own __getattribute__,
__getattr__ or __setattr__ written in Python is inlined like any method; one implemented in C is a graph break.
"""
from __future__ import annotations

import abc
import collections
import copyreg
import functools
import types

from jitcore.guards import DictKeysMatch
from jitcore.guards.tree import Held
from jitcore.capture.breaks import GraphBreak, TracedException, raises_attribute_error
from jitcore.capture.side_effects import DELETED
from jitcore.capture.sources import AttrSource, HeldSource
from jitcore.capture.values.base import Value, MethodCallValue
from jitcore.capture.values.call_rules import Meaning, first_rule
from jitcore.capture.values.constant import const
from jitcore.capture.values.function import UserMethodValue
from jitcore.capture.values.mapping import AttributeDictValue
from jitcore.capture.values.objects import ClassValue, pending_class_attribute
from jitcore.capture.values.opaque import OpaqueValue, DeferredMethodValue
from jitcore.capture.values.sequence import TupleValue
from jitcore.capture.values.wrapping import wrap

__all__ = ["UserObjectValue", "NewObjectValue", "is_plain_instance", "class_lookup", "relied_class_lookup"]

_MISSING = object()


#: C classes whose instances keep their attributes in a plain __dict__ behind CPython's generic attribute slots
#: (PyObject_GenericGetAttr / PyObject_GenericSetAttr), so they are modelled like Python classes' instances; their
#: other C dunders (`==`, repr) are not modelled (`_DunderProtocol._dunder` breaks on them)
GENERIC_C_CLASSES = frozenset({types.SimpleNamespace})
_GENERIC_SLOTS = {"__getattribute__": object.__getattribute__, "__setattr__": object.__setattr__,
                  "__delattr__": object.__delattr__}


def class_lookup(cls, name):
    for klass in cls.__mro__:
        if name in klass.__dict__:
            if klass in GENERIC_C_CLASSES and name in _GENERIC_SLOTS:
                return _GENERIC_SLOTS[name]  # the generic slot under the C class's own wrapper
            return klass.__dict__[name]
    return _MISSING


def relied_class_lookup(state, cls, name):
    """class_lookup for a result the capture relies on (a method it inlines, a property, a dunder found or not):
    what it found in the class dicts along the MRO is guarded, so replacing `Obj.w` or adding `C.__call__` later
    recompiles."""
    state.ctx.guard_class_lookup(cls, name)
    return class_lookup(cls, name)


def is_plain_instance(obj) -> bool:
    """An instance whose attribute access is the default object machinery (a __dict__ and/or __slots__)."""
    cls = type(obj)
    # Py_TPFLAGS_HEAPTYPE: a class defined in Python, not a C type
    heap_type = bool(cls.__flags__ & (1 << 9)) or cls in GENERIC_C_CLASSES
    getattribute = class_lookup(cls, "__getattribute__")
    getattr_hook = class_lookup(cls, "__getattr__")
    # a __getattribute__ / __getattr__ written in Python is inlined like any method (config objects use them)
    return (heap_type and (hasattr(obj, "__dict__") or hasattr(cls, "__slots__"))
            and (getattribute is object.__getattribute__ or isinstance(getattribute, types.FunctionType))
            and (getattr_hook is _MISSING or isinstance(getattr_hook, types.FunctionType)))


_BINARY_DUNDERS = {
    "add": "add", "sub": "sub", "mul": "mul", "truediv": "truediv", "floordiv": "floordiv", "mod": "mod",
    "pow": "pow", "matmul": "matmul", "and_": "and", "or_": "or", "xor": "xor", "lshift": "lshift",
    "rshift": "rshift"}
_COMPARE_DUNDERS = {"lt": ("lt", "gt"), "le": ("le", "ge"), "gt": ("gt", "lt"), "ge": ("ge", "le"),
                    "eq": ("eq", "eq"), "ne": ("ne", "ne")}
_UNARY_DUNDERS = {"neg": "__neg__", "pos": "__pos__", "invert": "__invert__", "abs": "__abs__"}


class _DunderProtocol:
    """Python's special-method protocol for instances of user classes: each operation inlines the class's
    Python-level dunder method; a dunder that is missing or not Python falls back to Value's default."""

    __slots__ = ()

    def _dunder(self, state, name, args):
        cls = self.python_type()
        raw = relied_class_lookup(state, cls, name)
        if not isinstance(raw, types.FunctionType):
            if cls in GENERIC_C_CLASSES and raw is not class_lookup(object, name):
                raise GraphBreak("unsupported_call", f"{cls.__name__}.{name} (a C method)")
            return _MISSING
        return state.inline_call(raw, [self, *args], {})

    def getitem(self, state, key):
        result = self._dunder(state, "__getitem__", [key])
        return super().getitem(state, key) if result is _MISSING else result

    def setitem(self, state, key, value):
        if self._dunder(state, "__setitem__", [key, value]) is _MISSING:
            super().setitem(state, key, value)

    def length(self, state):
        result = self._dunder(state, "__len__", [])
        if result is _MISSING:
            return super().length(state)
        n = result.constant()
        if type(n) is not int:
            raise GraphBreak("unsupported_value", "__len__ returned a value that is not a Python int")
        return n

    def truth(self, state):
        for name in ("__bool__", "__len__"):
            result = self._dunder(state, name, [])
            if result is not _MISSING:
                return result.truth(state)
        return True

    def iterate(self, state):
        result = self._dunder(state, "__iter__", [])
        return super().iterate(state) if result is _MISSING else result.iterate(state)

    def contains(self, state, item):
        result = self._dunder(state, "__contains__", [item])
        return super().contains(state, item) if result is _MISSING else const(result.truth(state))

    def binary_op(self, state, op, other, reflected):
        if op in _COMPARE_DUNDERS:
            names = [f"__{_COMPARE_DUNDERS[op][1 if reflected else 0]}__"]
        else:
            plain = op if op in _BINARY_DUNDERS else next(
                (k for k in (op[1:], op[1:] + "_") if op.startswith("i") and k in _BINARY_DUNDERS), None)
            if plain is None:
                return NotImplemented
            base = _BINARY_DUNDERS[plain]
            if reflected:
                names = [f"__r{base}__"]
            elif plain != op:
                names = [f"__i{base}__"]  # without one, apply_binary falls back to the plain operator
            else:
                names = [f"__{base}__"]
        for name in names:
            result = self._dunder(state, name, [other])
            if result is not _MISSING and result.constant() is not NotImplemented:
                return result
        return NotImplemented

    def unary_op(self, state, op):
        result = self._dunder(state, _UNARY_DUNDERS.get(op, ""), [])
        return super().unary_op(state, op) if result is _MISSING else result


def _class_attribute(state, self_value, cls, name, raw, source=None):
    """The value of class attribute `raw` (found in the MRO under `name`) read through instance `self_value`;
    `source` reloads a plain (non-function) class attribute, so its value is guarded."""
    if isinstance(raw, property):
        if raw.fget is None:
            raise GraphBreak.raises(AttributeError, f"property '{name}' has no getter")
        return state.inline_call(raw.fget, [self_value], {})
    if isinstance(raw, staticmethod):
        return wrap(state, raw.__func__, None)
    if isinstance(raw, classmethod):
        return UserMethodValue(raw.__func__, ClassValue(cls))
    if type(raw) is functools._lru_cache_wrapper:
        # binds like a function (`logger.warning_once(msg)` is the wrapper called with the logger first)
        return UserMethodValue(raw, self_value)
    if isinstance(raw, types.FunctionType):
        rule = first_rule(raw, state.ctx.rule_answers)
        if rule.meaning is Meaning.NATIVE:
            # a standard-library method (a logger's .warning): called natively at a break, never traced into
            return DeferredMethodValue(self_value, name, rule.break_kind)
        return UserMethodValue(raw, self_value)
    if isinstance(raw, (types.MethodDescriptorType, types.WrapperDescriptorType)) \
            and issubclass(raw.__objclass__, BaseException) and isinstance(self_value.python_type(), type) \
            and issubclass(self_value.python_type(), BaseException) and self_value.has_builtin_methods:
        # `super().__init__(message)` in an exception class: BaseException's own method
        return MethodCallValue(self_value, name, builtin=True)
    if raw is object.__setattr__ and self_value.has_raw_setattr:
        # `super().__setattr__(name, value)` inside a class's own __setattr__: the default store
        return _DefaultSlot(self_value, store=True)
    if isinstance(raw, (types.MethodDescriptorType, types.WrapperDescriptorType)) \
            and raw.__objclass__ in (dict, list, set, tuple, collections.OrderedDict) \
            and not self_value.has_plain_getattr:
        # super().get(...) in a dict subclass: the builtin method on the container value
        return MethodCallValue(self_value, name, builtin=True)
    if raw is object.__reduce_ex__ and isinstance(self_value, (UserObjectValue, NewObjectValue)):
        # copy.copy / copy.deepcopy / pickle of a plain instance: the protocol-2 reduction object gives
        return _DefaultReduce(self_value)
    if raw is object.__getattribute__ and self_value.has_plain_getattr:
        # `super().__getattribute__(key)` inside a class's own __getattribute__: the default lookup
        return _DefaultSlot(self_value, store=False)
    if callable(raw) and isinstance(raw, (types.MethodDescriptorType, types.WrapperDescriptorType,
                                          types.BuiltinFunctionType)):
        # a method implemented in C (inherited from a builtin base): its call runs natively at a break
        return DeferredMethodValue(self_value, name)
    if hasattr(type(raw), "__get__"):
        raise GraphBreak("unsupported_value", f"descriptor {type(raw).__name__} {cls.__name__}.{name}")
    return wrap(state, raw, source)


class _DefaultSlot(Value):
    """object.__getattribute__ / object.__setattr__ bound to an object (`super().__setattr__(k, v)` inside the
    class's own hook): the default lookup or store, without the class's hook."""

    __slots__ = ("target", "store")

    def __init__(self, target, store: bool):
        super().__init__(None)
        self.target = target
        self.store = store

    def call(self, state, args, kwargs):
        name = args[0].constant() if len(args) == 1 + self.store and not kwargs else None
        if type(name) is not str:
            which = "__setattr__" if self.store else "__getattribute__"
            raise GraphBreak("unsupported_call", f"object.{which} with a non-constant name")
        if not self.store:
            return self.target.plain_getattr(state, name)
        self.target.raw_setattr(state, name, args[1])
        return const(None)


class _DefaultReduce(Value):
    """`obj.__reduce_ex__` where it is object's (what copy.copy, copy.deepcopy and pickle call): for protocol 2 and
    up on an instance with a plain `__dict__`, `(copyreg.__newobj__, (cls,), its __dict__ or None, None, None)`,
    as typeobject.c's reduce_newobj builds it. A class that customises any step (its own __reduce__,
    __getstate__, __getnewargs__[_ex__], __slots__) is a graph break: the call runs natively."""

    __slots__ = ("owner",)

    def __init__(self, owner):
        super().__init__(None)
        self.owner = owner

    def python_type(self):
        return types.BuiltinMethodType

    def children(self):
        return [self.owner]

    def call(self, state, args, kwargs):
        cls = self.owner.python_type()
        protocol = args[0].constant() if len(args) == 1 and not kwargs else None
        if type(protocol) is not int or protocol < 2:
            raise GraphBreak("unsupported_call", f"{cls.__name__}.__reduce_ex__ with these arguments")
        custom = [name for name, default in (("__reduce__", object.__reduce__),
                                             ("__getstate__", object.__getstate__),
                                             ("__getnewargs_ex__", _MISSING), ("__getnewargs__", _MISSING))
                  if relied_class_lookup(state, cls, name) is not default]
        if custom or has_slots(cls):
            raise GraphBreak("unsupported_call", f"{cls.__name__}.__reduce_ex__ of a class with its own "
                                                 f"{', '.join(custom) or '__slots__'}")
        instance_dict = self.owner.plain_getattr(state, "__dict__")  # C reads the dict, not via __getattribute__
        state_value = instance_dict if instance_dict.truth(state) else const(None)
        return TupleValue([wrap(state, copyreg.__newobj__, None), TupleValue([ClassValue(cls)]), state_value,
                           const(None), const(None)])

    def reconstruct(self, codegen):
        return f"{codegen.load(self.owner)}.__reduce_ex__"


class UserObjectValue(_DunderProtocol, OpaqueValue):
    """An instance of a user class that existed before the call (guarded by type; attributes by source)."""

    __slots__ = ()
    has_plain_getattr = True

    def getattr(self, state, name):
        state.ctx.guard_class_lookup(type(self.obj), "__getattribute__")
        getattribute = type(self.obj).__getattribute__
        if getattribute is not object.__getattribute__:
            return state.inline_call(getattribute, [self, const(name)], {})
        return self.plain_getattr(state, name)

    def plain_getattr(self, state, name):
        """object.__getattribute__(obj, name), then the class's Python __getattr__ when that fails."""
        try:
            return self._plain_getattr(state, name)
        except GraphBreak as brk:
            hook = relied_class_lookup(state, type(self.obj), "__getattr__")
            if hook is _MISSING or brk.exc_type is None \
                    or not issubclass(brk.exc_type, AttributeError):
                raise
            return state.inline_call(hook, [self, const(name)], {})

    def _instance_dict(self, state):
        """The value of this object's __dict__ once the traced code has read it (`o.__dict__`, `vars(o)`): from
        then on the instance's attributes are that dict's items, so each form of access sees the others' writes."""
        if self.source is None:
            return None
        return state.ctx.wrapped.get(AttrSource(self.source, "__dict__"))

    def _plain_getattr(self, state, name):
        own = self._instance_dict(state)
        assigned = state.ctx.side_effects.load_attr(self.obj, name) if own is None else None
        if assigned is not None and assigned is not DELETED:
            return assigned
        cls = type(self.obj)
        if name == "__class__":
            return ClassValue(cls)
        if name == "__dict__" and type(getattr(self.obj, "__dict__", None)) is dict:
            if self.source is None:
                return wrap(state, self.obj.__dict__, None)
            return self._read_instance_dict(state)
        raw = class_lookup(cls, name)
        d = getattr(self.obj, "__dict__", {})
        if raw is not _MISSING or name not in d:
            # an attribute of the instance's own dict is reloaded through getattr, which sees a class
            # attribute added later; what is found on the class is relied on here
            state.ctx.guard_class_lookup(cls, name)
        if isinstance(raw, property) or (raw is not _MISSING and hasattr(type(raw), "__set__")
                                         and not isinstance(raw, types.MemberDescriptorType)):
            return _class_attribute(state, self, cls, name, raw)
        if isinstance(raw, types.MemberDescriptorType):
            # a __slots__ attribute: read it like an instance attribute
            try:
                value = raw.__get__(self.obj, cls)
            except AttributeError as exc:
                raise GraphBreak.raises(AttributeError, str(exc)) from None
            return wrap(state, value, AttrSource(self.source, name) if self.source is not None else None)
        if own is not None:
            if name in own.items:
                return own.items[name]
        elif assigned is None:
            d = getattr(self.obj, "__dict__", {})
            if name in d:
                return wrap(state, d[name], AttrSource(self.source, name) if self.source is not None else None)
        pending = pending_class_attribute(state, cls, name)
        if pending is DELETED:
            raise GraphBreak("side_effect", f"reading {cls.__name__}.{name} after deleting it in the call")
        if pending is not None:
            self._guard_instance_keys(state)
            return pending  # `Cls.attr = v` earlier in the call (a plain value: no descriptor to bind)
        if raw is _MISSING:
            raise GraphBreak.raises(AttributeError, f"'{cls.__name__}' object has no attribute '{name}'")
        # found on the class: it stays so only while the instance does not get an attribute of that name
        self._guard_instance_keys(state)
        source = AttrSource(AttrSource(self.source, "__class__"), name) if self.source is not None else None
        return _class_attribute(state, self, cls, name, raw, source)

    def _read_instance_dict(self, state):
        """o.__dict__ read for the first time: the real dict with the attributes written or deleted so far."""
        own = self._instance_dict(state)
        if own is not None:
            return own
        own = wrap(state, self.obj.__dict__, AttrSource(self.source, "__dict__"))
        for name in list(own.items) + [n for n in self._pending_names(state) if n not in own.items]:
            pending = state.ctx.side_effects.load_attr(self.obj, name)
            if pending is DELETED:
                own.delitem(state, const(name))
            elif pending is not None:
                own.setitem(state, const(name), pending)
        state.ctx.side_effects.forget_attrs(self.obj)
        return own

    def _pending_names(self, state):
        return state.ctx.side_effects.attr_names(self.obj)

    def _guard_instance_keys(self, state):
        d = getattr(self.obj, "__dict__", None)
        if self.source is not None and type(d) is dict:
            state.ctx.guard(AttrSource(self.source, "__dict__"), DictKeysMatch(tuple(d)))

    def has_attr(self, state, name) -> bool:
        own = self._instance_dict(state)
        pending = state.ctx.side_effects.load_attr(self.obj, name) if own is None else None
        if own is not None and name in own.items or pending is not None and pending is not DELETED:
            return True
        if own is not None or pending is DELETED:
            # not in the instance dict: the class decides, or its __getattr__
            try:
                self.getattr(state, name)
                return True
            except (GraphBreak, TracedException) as exc:
                if raises_attribute_error(exc):
                    return False
                raise
        self._guard_instance_keys(state)
        return hasattr(self.obj, name)

    def _instance_store(self, state, name, what):
        """Whether `name` may be stored into / deleted from the instance dict while tracing (else a break); a
        property's Python setter or deleter is returned, to be inlined instead (None: the instance dict)."""
        cls = type(self.obj)
        hook = class_lookup(cls, "__setattr__" if what == "setting" else "__delattr__")
        default = object.__setattr__ if what == "setting" else object.__delattr__
        if self.source is None or hook is not default or type(getattr(self.obj, "__dict__", None)) is not dict:
            raise GraphBreak("side_effect", f"{what} {name!r} on a {cls.__name__} object")
        raw = relied_class_lookup(state, cls, name)
        if isinstance(raw, property):
            accessor = raw.fset if what == "setting" else raw.fdel
            if isinstance(accessor, types.FunctionType):
                return accessor
        if raw is not _MISSING and hasattr(type(raw), "__set__"):
            raise GraphBreak("side_effect", f"{what} descriptor {cls.__name__}.{name}")
        return None

    def setattr(self, state, name, value):
        accessor = self._instance_store(state, name, "setting")
        if accessor is not None:
            state.inline_call(accessor, [self, value], {})
            return
        own = self._instance_dict(state)
        if own is not None:
            own.setitem(state, const(name), value)
            return
        state.ctx.side_effects.store_attr(self, self.obj, name, value)

    def delattr(self, state, name):
        accessor = self._instance_store(state, name, "deleting")
        if accessor is not None:
            state.inline_call(accessor, [self], {})
            return
        missing = GraphBreak.raises(AttributeError, f"'{type(self.obj).__name__}' object has no attribute '{name}'")
        own = self._instance_dict(state)
        if own is not None:
            if name not in own.items:
                raise missing
            own.delitem(state, const(name))
            return
        pending = state.ctx.side_effects.load_attr(self.obj, name)
        if pending is DELETED or pending is None and name not in self.obj.__dict__:
            raise missing
        if pending is None:
            # the attribute is relied on being there
            self._guard_instance_keys(state)
        state.ctx.side_effects.delete_attr(self, self.obj, name)

    def call(self, state, args, kwargs):
        method = relied_class_lookup(state, type(self.obj), "__call__")
        if not isinstance(method, types.FunctionType):
            raise GraphBreak("unsupported_call", f"calling a {type(self.obj).__name__} object")
        return state.inline_call(method, [self, *args], kwargs)



class NewObjectValue(_DunderProtocol, Value):
    """An object of a plain user class created inside the captured function; rebuilt at the end if returned."""

    __slots__ = ("cls", "attrs")
    needs_identity = True
    has_raw_setattr = True
    has_plain_getattr = True

    def __init__(self, cls):
        super().__init__(None)
        self.cls = cls
        #: attribute name -> value, in assignment order
        self.attrs: dict = {}

    @property
    def kind_name(self):
        return f"new {self.cls.__name__} object"

    def python_type(self):
        return self.cls

    def getattr(self, state, name):
        hook = relied_class_lookup(state, self.cls, "__getattribute__")
        try:
            if hook is not object.__getattribute__:
                # a class's Python __getattribute__ (config objects map names through one): inlined like any method
                return state.inline_call(hook, [self, const(name)], {})
            return self._plain_getattr(state, name)
        except (GraphBreak, TracedException) as exc:
            # the lookup raised AttributeError: the class's Python __getattr__ answers, as in Python
            if not raises_attribute_error(exc):
                raise
            fallback = relied_class_lookup(state, self.cls, "__getattr__")
            if not isinstance(fallback, types.FunctionType):
                raise
            return state.inline_call(fallback, [self, const(name)], {})

    def plain_getattr(self, state, name):
        """object.__getattribute__(obj, name) (without the class's __getattr__, which only getattr adds)."""
        return self._plain_getattr(state, name)

    def _plain_getattr(self, state, name):
        if name == "__class__":
            return ClassValue(self.cls)
        if name == "__dict__" and _has_instance_dict(self.cls):
            if has_slots(self.cls):
                # `attrs` holds the slots too, which the real instance dict does not
                raise GraphBreak("unsupported_value", f"__dict__ of a {self.cls.__name__} object with __slots__")
            # the instance dict: a live view of the attributes
            return AttributeDictValue(self)
        raw = relied_class_lookup(state, self.cls, name)
        if isinstance(raw, types.MemberDescriptorType):
            # a __slots__ attribute: stored with the others, unset until assigned
            if name in self.attrs:
                return self.attrs[name]
            raise GraphBreak.raises(AttributeError, f"'{self.cls.__name__}' object has no attribute '{name}'")
        if isinstance(raw, property) or (raw is not _MISSING and hasattr(type(raw), "__set__")):
            return _class_attribute(state, self, self.cls, name, raw)
        if name in self.attrs:
            return self.attrs[name]
        pending = pending_class_attribute(state, self.cls, name)
        if pending is DELETED:
            raise GraphBreak("side_effect", f"reading {self.cls.__name__}.{name} after deleting it in the call")
        if pending is not None:
            return pending
        if raw is _MISSING:
            raise GraphBreak.raises(AttributeError, f"'{self.cls.__name__}' object has no attribute '{name}'")
        # a plain class attribute (a list of names, a dict of defaults) is read from the class the entry holds,
        # guarded and reloaded like any input
        source = AttrSource(HeldSource(Held(self.cls), self.cls.__qualname__), name)
        return _class_attribute(state, self, self.cls, name, raw, source)

    def has_attr(self, state, name) -> bool:
        try:
            self.getattr(state, name)
            return True
        except (GraphBreak, TracedException) as exc:
            if raises_attribute_error(exc):
                return False
            raise

    def setattr(self, state, name, value):
        hook = relied_class_lookup(state, self.cls, "__setattr__")
        if hook is not object.__setattr__:
            if not isinstance(hook, types.FunctionType):
                raise GraphBreak("unsupported_call", f"{self.cls.__name__}.__setattr__")
            # a class's Python __setattr__ (validation, bookkeeping; a frozen dataclass's raises
            # FrozenInstanceError): traced, so `except` sees what it raises; super().__setattr__ stores
            state.inline_call(hook, [self, const(name), value], {})
            return
        self.raw_setattr(state, name, value)

    def children(self):
        return list(self.attrs.values())

    def raw_setattr(self, state, name, value):
        """object.__setattr__(self, name, value): what __init__ of a frozen dataclass uses."""
        default_store(state, self, self.cls, self.attrs, name, value)

    def delattr(self, state, name):
        default_delete(self.cls, self.attrs, name)

    def call(self, state, args, kwargs):
        method = relied_class_lookup(state, self.cls, "__call__")
        if not isinstance(method, types.FunctionType):
            raise GraphBreak("unsupported_call", f"calling a {self.cls.__name__} object")
        return state.inline_call(method, [self, *args], kwargs)


    def reconstruct(self, codegen):
        build = codegen.constant_object(_build_object, "build_object")
        cls = codegen.constant_object(self.cls, "cls")
        body = "".join(f"{name!r}: {codegen.load(v)}, " for name, v in self.attrs.items())
        return f"{build}({cls}, {{{body}}})"


def default_store(state, obj, cls, attrs: dict, name: str, value) -> None:
    """object.__setattr__ on an object made while tracing: a property's setter runs, a __slots__ attribute is
    stored, other data descriptors are not modelled, anything else lands in its attribute dict (an object without
    one raises AttributeError, as Python does)."""
    raw = class_lookup(cls, name)
    if isinstance(raw, types.MemberDescriptorType):
        attrs[name] = value
        return
    if raw is _MISSING and not _has_instance_dict(cls):
        raise GraphBreak.raises(AttributeError, f"'{cls.__name__}' object has no attribute '{name}'")
    if raw is not _MISSING and hasattr(type(raw), "__set__"):
        if isinstance(raw, property) and raw.fset is not None:
            state.inline_call(raw.fset, [obj, value], {})
            return
        raise GraphBreak("unsupported_value", f"assigning descriptor {cls.__name__}.{name}")
    attrs[name] = value


def default_delete(cls, attrs: dict, name: str) -> None:
    """`del obj.name` on an object made while tracing, whose class keeps object's __delattr__."""
    if class_lookup(cls, "__delattr__") is not object.__delattr__:
        raise GraphBreak("unsupported_call", f"{cls.__name__}.__delattr__")
    if name not in attrs:
        raise GraphBreak.raises(AttributeError, f"'{cls.__name__}' object has no attribute '{name}'")
    del attrs[name]


def _build_object(cls, attrs):
    obj = cls() if cls in GENERIC_C_CLASSES else object.__new__(cls)
    for name, value in attrs.items():
        object.__setattr__(obj, name, value)  # __slots__ attributes too
    return obj


def _has_instance_dict(cls) -> bool:
    return "__dict__" in {name for klass in cls.__mro__ for name in vars(klass)} or not all(
        "__slots__" in vars(klass) for klass in cls.__mro__ if klass is not object)


#: what a metaclass may override and still make, find and check instances as `type` does
_METACLASS_SLOTS = ("__call__", "__getattribute__", "__getattr__", "__instancecheck__", "__subclasscheck__")


def ordinary_metaclass(cls) -> bool:
    """cls is a class whose metaclass is type or ABCMeta, or a Python subclass of them that leaves calling the
    class, reading its attributes and isinstance to them (one that only hooks class creation or class attribute
    writes, such as a wrapper put on each `__init__` the class is given: writes are checked on their own path,
    `ClassValue._writable`)."""
    meta = type(cls)
    if meta in (type, abc.ABCMeta):
        return True
    if not issubclass(meta, type) or not meta.__flags__ & (1 << 9):  # Py_TPFLAGS_HEAPTYPE: a Python class
        return False
    base = abc.ABCMeta if issubclass(meta, abc.ABCMeta) else type
    return all(getattr(meta, name, None) is getattr(base, name, None) for name in _METACLASS_SLOTS)


def constructible(cls) -> bool:
    """A class whose instances NewObjectValue can model: default __new__, a Python class layout; attribute hooks
    (`__getattribute__`, `__getattr__`, `__setattr__`) object's or Python functions (inlined; a frozen dataclass's
    generated __init__ assigns through object.__setattr__, which the builtin rules model).
    """
    if not isinstance(cls, type) or not ordinary_metaclass(cls) or cls.__module__ == "builtins":
        return False
    hooks_ok = all(class_lookup(cls, name) in (default, _MISSING) or isinstance(class_lookup(cls, name),
                                                                              types.FunctionType)
                   for name, default in (("__setattr__", object.__setattr__),
                                         ("__getattribute__", object.__getattribute__), ("__getattr__", _MISSING)))
    # __slots__ are stored like other attributes (`_build_object` sets them through object.__setattr__); a
    # builtin base's layout is not modelled: every class on the MRO but object is a Python class
    return (cls.__new__ is object.__new__ and hooks_ok
            and all(klass is object or klass.__flags__ & (1 << 9) for klass in cls.__mro__))


def has_slots(cls) -> bool:
    """Some class in cls's MRO declares non-empty __slots__ (instance state outside __dict__)."""
    return any(vars(klass).get("__slots__") for klass in cls.__mro__[:-1])
