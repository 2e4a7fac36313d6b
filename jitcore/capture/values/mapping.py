"""Dicts with constant keys (str, int, tuples of them, ...), in insertion order like Python's.

A dict made inside the function is mutated in place; a dict passed in (it has a source) is read-only here.
"""
from __future__ import annotations

import collections
import operator
import types

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.base import Value, NOT_CONSTANT, MethodCallValue
from jitcore.capture.values.constant import const, fold, register_container
from jitcore.capture.values.function import UserMethodValue
from jitcore.capture.values.iterator import DictIteratorValue
from jitcore.capture.values.object_id import ObjectIdValue
from jitcore.capture.values.sequence import ListValue, TupleValue

__all__ = ["DictValue", "AttributeDictValue", "DictViewValue", "mapping_entries", "pairs_entries", "IdentityKey", "IdKey", "key_value", "key_source"]


class IdentityKey:
    """A dict key that hashes by identity in Python (a tensor): equal to another exactly when both stand for the
    same object. Holds the key's value, which iteration and reconstruction give back."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __hash__(self):
        return id(self.value.identity())

    def __eq__(self, other):
        return isinstance(other, IdentityKey) and other.value.identity() is self.value.identity()

    def __repr__(self):
        return f"<{self.value.kind_name}>"


class IdKey(IdentityKey):
    """A dict key that is an id() token (values/object_id.py): equal to another exactly when both name the same
    object (a graph break where that is not known)."""

    __slots__ = ()

    def __hash__(self):
        return self.value.key_hash()

    def __eq__(self, other):
        return isinstance(other, IdKey) and self.value.same_as(other.value)


def key_value(k) -> Value:
    """The value of a dict key as stored by `_key`."""
    return k.value if isinstance(k, IdentityKey) else const(k)


def key_source(codegen, k) -> str:
    """An expression for a dict key as stored by `_key`."""
    return codegen.load(k.value) if isinstance(k, IdentityKey) else codegen.constant(k)


def _key_error(k) -> GraphBreak:
    """The KeyError Python raises for missing key k; for a tensor key (whose message prints its data) a break."""
    if isinstance(k, IdKey):
        return GraphBreak.raises(KeyError)  # its argument, the number, is not known here (str(e) breaks)
    if isinstance(k, IdentityKey):
        return GraphBreak("unsupported_value", "a KeyError whose key is a tensor")
    return GraphBreak.raises(KeyError, f"{k!r}", args=(k,))


def _key(state, key):
    k = key.constant()
    if k is NOT_CONSTANT:
        if isinstance(key, ObjectIdValue):
            return IdKey(key)
        if key.is_tensor() and key.identity() is not None:
            # a tensor hashes by id(): two keys are one entry exactly when they are the same tensor
            return IdentityKey(key)
        raise GraphBreak("unsupported_value", f"a dict key that is a {key.kind_name}")
    try:
        hash(k)
    except TypeError as exc:
        raise GraphBreak.raises(TypeError, str(exc)) from None
    return k


def mapping_entries(state, value):
    """key -> value of what dict(value), dict.update(value) and `**value` read: a dict value's own items, else
    through value.keys() and value[key] as Python does for any other object with a keys() method; None when value
    has no keys() (an iterable of pairs)."""
    if isinstance(value, DictValue) and value._override("keys") is None and value._override("__getitem__") is None:
        return dict(value.items)
    try:
        if not hasattr(value.python_type(), "keys"):
            return None
    except GraphBreak:
        pass
    try:
        keys = value.getattr(state, "keys")
    except GraphBreak as brk:
        if brk.exc_type is not None and issubclass(brk.exc_type, AttributeError):
            return None
        raise
    entries = {}
    for key in keys.call(state, [], {}).iterate(state):
        entries[_key(state, key)] = value.getitem(state, key)
    return entries


_DICT_METHODS = frozenset({"keys", "values", "items", "get", "copy", "update", "pop", "setdefault", "clear",
                           "popitem", "__ior__"})


class DictValue(Value):
    __slots__ = ("items", "dict_type")
    needs_identity = True
    has_builtin_methods = True
    builtin_dunders = True

    def __init__(self, items: dict, source=None, dict_type=dict):
        super().__init__(source)
        #: constant key -> value
        self.items = items
        self.dict_type = dict_type

    def python_type(self):
        return self.dict_type

    def children(self):
        return list(self.items.values())

    def constant(self):
        out = {}
        for k, v in self.items.items():
            c = NOT_CONSTANT if isinstance(k, IdentityKey) else v.constant()
            if c is NOT_CONSTANT:
                return NOT_CONSTANT
            out[k] = c
        # an OrderedDict compares with another by order too
        return collections.OrderedDict(out) if issubclass(self.dict_type, collections.OrderedDict) else out

    def truth(self, state):
        return bool(self.items)

    def getattr(self, state, name):
        override = self._override(name)
        if override is not None:
            return UserMethodValue(override, self)
        if name in _DICT_METHODS:
            return MethodCallValue(self, name)
        return super().getattr(state, name)

    def _override(self, name):
        """A dict subclass's own Python method for `name` (it replaces dict's), else None."""
        if self.dict_type is dict:
            return None
        for klass in self.dict_type.__mro__:
            if klass is dict:
                return None
            found = klass.__dict__.get(name)
            if found is not None:
                return found if isinstance(found, types.FunctionType) else None
        return None

    def length(self, state):
        return len(self.items)

    def iterate(self, state):
        return [key_value(k) for k in self.items]

    def live_iterator(self, state):
        if self._override("__iter__") is not None:
            return None
        return DictIteratorValue(self, "keys")

    def view_item(self, mode, key):
        """The item a keys / values / items view yields for `key`."""
        if mode == "keys":
            return key_value(key)
        if mode == "values":
            return self.items[key]
        return TupleValue([key_value(key), self.items[key]])

    def getitem(self, state, key):
        k = _key(state, key)
        if k not in self.items:
            missing = self._missing_hook()
            if missing is not None:
                # dict_subscript: a subclass's __missing__ answers a missing key (Counter's 0)
                return state.inline_call(missing, [self, key], {})
            raise _key_error(k)
        return self.items[k]

    def _missing_hook(self):
        """A dict subclass's Python __missing__, else None."""
        if self.dict_type is dict:
            return None
        for klass in self.dict_type.__mro__:
            found = klass.__dict__.get("__missing__")
            if found is not None:
                return found if isinstance(found, types.FunctionType) else None
        return None

    def contains(self, state, item):
        return const(_key(state, item) in self.items)

    def _mutable(self, state, what):
        if self.source is not None:
            if self.dict_type is not dict and not _dict_protocol(self.dict_type):
                raise GraphBreak("side_effect", f"{what} on a {self.dict_type.__name__} passed into the function")
            state.ctx.side_effects.container_mutated(self)

    # -- write-back after the graph: per-key deltas (capture/side_effects.py, Note [Write-back is a delta]) ----
    def snapshot(self):
        return dict(self.items)

    def _delta(self, initial):
        """(keys to remove, keys to set in order): survivors that kept their place are set only when their value
        changed; a key deleted and added again is removed and set, so it moves to the end as in Python."""
        final = list(self.items)
        order = {k: i for i, k in enumerate(initial)}
        j, last = 0, -1
        while j < len(final) and order.get(final[j], -1) > last:
            last = order[final[j]]
            j += 1
        kept = set(final[:j])
        removed = [k for k in initial if k not in kept]
        changed = [k for k in final[:j] if initial[k] is not self.items[k]]
        return removed, changed + final[j:]

    def changed_items(self, codegen, initial) -> str:
        _, written = self._delta(initial)
        return "(" + "".join(f"{codegen.load(self.items[k])}, " for k in written) + ")"

    def replay(self, codegen, values: str, initial) -> str:
        target = self.source.emit(codegen)
        removed, written = self._delta(initial)
        lines = [f"{target}.pop({key_source(codegen, k)}, None)" for k in removed]
        lines += [f"{target}[{key_source(codegen, k)}] = {values}[{i}]" for i, k in enumerate(written)]
        return "; ".join(lines) or "pass"

    def setitem(self, state, key, value):
        self._mutable(state, "item assignment")
        self.items[_key(state, key)] = value

    def delitem(self, state, key):
        self._mutable(state, "del")
        k = _key(state, key)
        if k not in self.items:
            raise _key_error(k)
        del self.items[k]

    def binary_op(self, state, op, other, reflected):
        if op in ("or_", "ior") and isinstance(other, DictValue):
            if op == "ior":
                self._mutable(state, "|=")
                self.items.update(other.items)
                return self
            first, second = (other, self) if reflected else (self, other)
            return DictValue({**first.items, **second.items})
        return NotImplemented

    def call_method(self, state, name, args, kwargs):
        override = self._override(name)
        if override is not None:
            return state.inline_call(override, [self, *args], kwargs)
        return self.builtin_call_method(state, name, args, kwargs)

    def builtin_call_method(self, state, name, args, kwargs):
        """dict's own method, whatever a subclass overrides (what `super().name(...)` reaches)."""
        items = self.items
        if name in ("keys", "values", "items") and not args and not kwargs:
            return DictViewValue(self, name)
        if name == "get" and 1 <= len(args) <= 2:
            return items.get(_key(state, args[0]), args[1] if len(args) == 2 else const(None))
        if name == "copy" and not args:
            return DictValue(dict(items))
        if name == "__ior__" and len(args) == 1 and not kwargs:
            result = self.binary_op(state, "ior", args[0], False)
            return const(NotImplemented) if result is NotImplemented else result
        if name in ("update", "pop", "setdefault", "clear", "popitem"):
            self._mutable(state, f"dict.{name}()")
            if name == "update":
                if len(args) > 1:
                    raise GraphBreak.raises(TypeError, f"update expected at most 1 argument, got {len(args)}")
                for a in args:
                    entries = mapping_entries(state, a)
                    if entries is None:
                        entries = pairs_entries(state, a)
                    items.update(entries)
                items.update(kwargs)
                return const(None)
            if name == "pop":
                k = _key(state, args[0])
                if k in items:
                    return items.pop(k)
                if len(args) == 2:
                    return args[1]
                raise _key_error(k)
            if name == "setdefault":
                return items.setdefault(_key(state, args[0]), args[1] if len(args) > 1 else const(None))
            if name == "clear":
                items.clear()
                return const(None)
            if name == "popitem":
                if not items:
                    raise GraphBreak.raises(KeyError, "popitem(): dictionary is empty")
                k, v = items.popitem()
                return TupleValue([key_value(k), v])
        return super().call_method(state, name, args, kwargs)

    def as_fx_arg(self, state):
        if any(isinstance(k, IdentityKey) for k in self.items):
            raise GraphBreak("unsupported_value", "passing a dict keyed by tensors to a tensor operation")
        return {k: v.as_fx_arg(state) for k, v in self.items.items()}

    def as_fake(self, state):
        return {k: v.as_fake(state) for k, v in self.items.items()}

    def reconstruct(self, codegen):
        body = "".join(f"{key_source(codegen, k)}: {codegen.load(v)}, " for k, v in self.items.items())
        return "{" + body + "}" if self.dict_type is dict else codegen.build_typed_dict(self.dict_type, body)


def pairs_entries(state, iterable) -> dict:
    """The entries of an iterable of key-value pairs (dict(pairs), dict.update(pairs))."""
    entries = {}
    for index, pair in enumerate(iterable.iterate(state)):
        kv = pair.iterate(state)
        if len(kv) != 2:
            raise GraphBreak.raises(ValueError, f"dictionary update sequence element #{index} has length "
                                                f"{len(kv)}; 2 is required")
        entries[_key(state, kv[0])] = kv[1]
    return entries


_VIEW_TYPES = {"keys": type({}.keys()), "values": type({}.values()), "items": type({}.items())}


class AttributeDictValue(DictValue):
    """`obj.__dict__` of an object made while tracing (its `attrs`: name -> value): reads and writes through it
    are the object's attributes, as in Python."""

    __slots__ = ("owner",)

    def __init__(self, owner):
        super().__init__(owner.attrs, None)
        self.owner = owner

    def children(self):
        return [self.owner, *super().children()]

    def reconstruct(self, codegen):
        return f"{codegen.load(self.owner)}.__dict__"


class DictViewValue(Value):
    """d.keys(), d.values(), d.items(): a live view of the dict value (what it holds when asked, not when the view
    was made). Keys and items views are set-like: their operators run on real views over the constant entries."""

    __slots__ = ("mapping", "mode")

    def __init__(self, mapping, mode):
        super().__init__(None)
        self.mapping = mapping
        self.mode = mode

    def python_type(self):
        return _VIEW_TYPES[self.mode]

    def children(self):
        return [self.mapping]

    def truth(self, state):
        return bool(self.mapping.items)

    def length(self, state):
        return len(self.mapping.items)

    def iterate(self, state):
        return [self.mapping.view_item(self.mode, k) for k in self.mapping.items]

    def live_iterator(self, state):
        return DictIteratorValue(self.mapping, self.mode)

    def contains(self, state, item):
        if self.mode == "keys":
            return self.mapping.contains(state, item)
        if self.mode == "values":
            return ListValue(list(self.mapping.items.values())).contains(state, item)
        if item.python_type() is not tuple or item.length(state) != 2:
            return const(False)
        key, value = item.iterate(state)
        if not self.mapping.contains(state, key).constant():
            return const(False)
        return ListValue([self.mapping.items[_key(state, key)]]).contains(state, value)

    def real_view(self):
        """A real view with the same entries, when every entry it shows is a constant (else NOT_CONSTANT)."""
        if self.mode == "keys":
            if any(isinstance(k, IdentityKey) for k in self.mapping.items):
                return NOT_CONSTANT
            return dict.fromkeys(self.mapping.items).keys()
        entries = self.mapping.constant()
        return NOT_CONSTANT if entries is NOT_CONSTANT else getattr(entries, self.mode)()

    def binary_op(self, state, op, other, reflected):
        if self.mode == "values" or op not in ("and_", "or_", "sub", "xor", "eq", "ne", "lt", "le", "gt", "ge"):
            return NotImplemented
        mine = self.real_view()
        theirs = other.real_view() if isinstance(other, DictViewValue) else other.constant()
        if mine is NOT_CONSTANT or theirs is NOT_CONSTANT:
            raise GraphBreak("unsupported_value", f"a set operation on a dict view of non-constant entries")
        a, b = (theirs, mine) if reflected else (mine, theirs)
        return const(fold(state, getattr(operator, op), a, b))

    def call_method(self, state, name, args, kwargs):
        if name == "isdisjoint" and len(args) == 1 and not kwargs and self.mode != "values":
            mine, theirs = self.real_view(), args[0].constant()
            if mine is not NOT_CONSTANT and theirs is not NOT_CONSTANT:
                return const(fold(state, mine.isdisjoint, theirs))
        return super().call_method(state, name, args, kwargs)

    def getattr(self, state, name):
        if name == "isdisjoint" and self.mode != "values":
            return MethodCallValue(self, name)
        return super().getattr(state, name)

    def reconstruct(self, codegen):
        return f"{codegen.load(self.mapping)}.{self.mode}()"


register_container(dict, lambda value: DictValue({k: const(v) for k, v in value.items()}))


def _dict_protocol(dict_type) -> bool:
    """A dict subclass whose writes the replay (`d[k] = v`, `d.pop(k, None)`) makes as dict makes them
    (collections.Counter): its own item store and pop are dict's."""
    return (issubclass(dict_type, dict) and dict_type.__setitem__ is dict.__setitem__
            and dict_type.pop is dict.pop and not issubclass(dict_type, collections.OrderedDict))
