"""A dict read from a source that jitcore does not model item by item (a registry: keys that are functions or
classes of their own metaclass, often hundreds of them): only lookups are modelled, each answered now and guarded
on its one entry. Imports only capture's values and guards; entry point: `RegistryDictValue`, made by `wrap`.

Note [Lookups in a registry dict]
torch.utils._pytree.SUPPORTED_NODES maps node types to their NodeDef; tree_flatten asks `type in SUPPORTED_NODES`
and reads `SUPPORTED_NODES[type]` for every node it visits. Its keys include collections.namedtuple (a function)
and transformers' output classes, which the item-by-item model of dicts does not take as constant keys, and a guard
on all 150 keys and items would cost every call. A lookup with a key whose hashing and comparison run no user code
(a class whose metaclass keeps type's __eq__ and __hash__, a function, a constant string or number) is answered
at capture time, and NamespaceEntryMatch re-checks that one entry on each call (`dict[key] is entry`, or `key not
in dict`); the dict's identity is guarded on its source. An entry read out becomes a value only when it cannot be
mutated (a tuple of functions, classes and constants, such as a NodeDef): a list or dict read from the registry
and mutated here would have no source to write back to. Everything else is a graph break, as for any object jitcore
does not model.
"""
from __future__ import annotations

import types

from jitcore.guards import ABSENT, IdMatch, NamespaceEntryMatch
from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.base import MethodCallValue, NOT_CONSTANT
from jitcore.capture.values.constant import const
from jitcore.capture.values.opaque import OpaqueValue
from jitcore.capture.values.wrapping import wrap

__all__ = ["RegistryDictValue", "identity_class", "identity_hashed"]

_CONSTANT_KEYS = (str, int, bool, type(None))
_LOOKUPS = ("get", "__contains__", "__getitem__")


def identity_class(key) -> bool:
    """A class whose metaclass keeps type's __eq__ and __hash__ (ABCMeta does): it compares by identity."""
    meta = type(key)
    return isinstance(key, type) and meta.__eq__ is type.__eq__ and meta.__hash__ is type.__hash__


def identity_hashed(key) -> bool:
    """`key`'s hash and == are object's or type's: looking it up in a dict runs no user code."""
    return identity_class(key) or type(key) in (types.FunctionType, types.BuiltinFunctionType)


def _immutable_entry(value) -> bool:
    if type(value) in _CONSTANT_KEYS or type(value) is float or identity_hashed(value):
        return True
    return isinstance(value, tuple) and all(_immutable_entry(v) for v in value)


class RegistryDictValue(OpaqueValue):
    """A plain dict from a source whose keys are not modelled as constants: lookups only."""

    __slots__ = ()

    def _entry(self, state, key_value):
        """The entry under the key (ABSENT if none), guarded; a break if the key cannot be looked up safely."""
        key = key_value.constant()
        if key is NOT_CONSTANT:
            key = key_value.identity()
        if not (type(key) in _CONSTANT_KEYS or identity_hashed(key)):
            raise GraphBreak("unsupported_value", f"looking up a {key_value.kind_name} in a {self.kind_name}")
        d = self.obj
        entry = d.get(key, ABSENT)
        if self.source is not None:
            state.ctx.guard(self.source, IdMatch(d))
        label = f"{self.source.user_name if self.source is not None else 'dict'}[{getattr(key, '__name__', key)!r}]"
        state.ctx.guard(None, NamespaceEntryMatch(d, key, entry, label))
        return entry

    def contains(self, state, item):
        return const(self._entry(state, item) is not ABSENT)

    def getitem(self, state, key):
        entry = self._entry(state, key)
        if entry is ABSENT:
            raise GraphBreak.raises(KeyError, repr(key.constant() if key.constant() is not NOT_CONSTANT
                                                   else key.identity()))
        return self._read(state, entry)

    def _read(self, state, entry):
        if not _immutable_entry(entry):
            raise GraphBreak("unsupported_value", f"an entry of a {self.kind_name} that may be mutated")
        return wrap(state, entry, None)

    def getattr(self, state, name):
        if name in _LOOKUPS:
            return MethodCallValue(self, name)
        return super().getattr(state, name)

    def call_method(self, state, name, args, kwargs):
        if name == "get" and not kwargs and len(args) in (1, 2):
            entry = self._entry(state, args[0])
            if entry is ABSENT:
                return args[1] if len(args) == 2 else const(None)
            return self._read(state, entry)
        if name == "__contains__" and not kwargs and len(args) == 1:
            return self.contains(state, args[0])
        if name == "__getitem__" and not kwargs and len(args) == 1:
            return self.getitem(state, args[0])
        return super().call_method(state, name, args, kwargs)
