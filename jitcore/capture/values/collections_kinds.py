"""collections.OrderedDict, defaultdict and deque as values, and the C helpers Counter's Python code calls.

OrderedDict and defaultdict are dicts (mapping.DictValue) with their own methods: move_to_end and popitem(last=)
(Objects/odictobject.c), and a default_factory that a missing key calls and stores (defaultdict.__missing__,
Modules/_collectionsmodule.c). Made inside the function or passed in; one passed in replays its mutations like a
dict (clear + update keep its type, its factory and, for OrderedDict, the new order). A deque made inside the
function is a list with a maxlen and the deque methods. Counter is a Python class over dict (inlined like any dict
subclass); its C helper `_count_elements` is a rule here. `__reduce_ex__` of the three is modelled, so
copy.deepcopy of them is traced.
"""
from __future__ import annotations

import collections
import operator

from jitcore.guards import EqualsMatch, LengthMatch

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.sources import AttrSource, ItemSource
from jitcore.capture.values.base import NOT_CONSTANT, MethodCallValue
from jitcore.capture.values.call_rules import CallRule, Meaning, KNOWN_CALLABLE, register_callable, call
from jitcore.capture.values.constant import const
from jitcore.capture.values.mapping import DictValue
from jitcore.capture.values.sequence import ListValue, TupleValue
from jitcore.capture.values.wrapping import wrap

__all__ = ["OrderedDictValue", "DefaultDictValue", "DequeValue", "dict_items_from"]


def _reduce_ex(state, cls, new_args: list, items, dict_items: bool, args, kwargs):
    """`__reduce_ex__(protocol)` of an exact deque, OrderedDict or defaultdict, as its C `__reduce__` builds it
    (deque_reduce, odict_reduce, defdict_reduce) for every protocol: (type, constructor arguments, no state, then the
    items as an iterator: a deque's in the list-items slot, a dict's pairs in the dict-items slot). What
    copy.deepcopy and copy.copy rebuild it from (copy._reconstruct)."""
    if len(args) != 1 or kwargs or type(args[0].constant()) is not int:
        raise GraphBreak("unsupported_call", f"{cls.__name__}.__reduce_ex__ with these arguments")
    iterator = call(state, iter, [items], {})
    tail = [const(None), iterator] if dict_items else [iterator]
    return TupleValue([wrap(state, cls, None), TupleValue(new_args), const(None), *tail])


class _TypedDictValue(DictValue):
    """A dict of a builtin dict subclass whose passed-in instances replay mutations as dicts do."""

    __slots__ = ()

    def _mutable(self, state, what):
        if self.source is not None:
            state.ctx.side_effects.container_mutated(self)

    def _constructor_args(self) -> list:
        return []

    def getattr(self, state, name):
        if name == "__reduce_ex__":
            return MethodCallValue(self, name, builtin=True)
        return super().getattr(state, name)

    def builtin_call_method(self, state, name, args, kwargs):
        if name == "__reduce_ex__":
            pairs = super().builtin_call_method(state, "items", [], {})
            return _reduce_ex(state, self.python_type(), self._constructor_args(), pairs, True, args, kwargs)
        return super().builtin_call_method(state, name, args, kwargs)


class OrderedDictValue(_TypedDictValue):
    __slots__ = ()

    def __init__(self, items, source=None):
        super().__init__(items, source, dict_type=collections.OrderedDict)

    def getattr(self, state, name):
        if name == "move_to_end":
            return MethodCallValue(self, name)
        return super().getattr(state, name)

    def builtin_call_method(self, state, name, args, kwargs):
        if name == "move_to_end" and 1 <= len(args) <= 2 and set(kwargs) <= {"last"}:
            last = _flag(args[1] if len(args) == 2 else kwargs.get("last"))
            k = args[0].constant()
            if k not in self.items:
                raise GraphBreak.raises(KeyError, f"{k!r}", args=(k,))
            self._mutable(state, "OrderedDict.move_to_end()")
            value = self.items.pop(k)
            self.items = {**self.items, k: value} if last else {k: value, **self.items}
            return const(None)
        if name == "popitem" and len(args) <= 1 and set(kwargs) <= {"last"}:
            last = _flag(args[0] if args else kwargs.get("last"))
            if not self.items:
                raise GraphBreak.raises(KeyError, "'dictionary is empty'")
            self._mutable(state, "OrderedDict.popitem()")
            k = next(reversed(self.items)) if last else next(iter(self.items))
            return TupleValue([const(k), self.items.pop(k)])
        if name == "copy" and not args and not kwargs:
            return OrderedDictValue(dict(self.items))
        return super().builtin_call_method(state, name, args, kwargs)


def _flag(value) -> bool:
    """An optional `last=` argument: True when absent."""
    if value is None:
        return True
    c = value.constant()
    if c is NOT_CONSTANT:
        raise GraphBreak("unsupported_value", "an OrderedDict `last` argument that is not a constant")
    return bool(c)


class DefaultDictValue(_TypedDictValue):
    """A defaultdict: `factory` is the default_factory's value (None: missing keys raise KeyError)."""

    __slots__ = ("factory",)

    def __init__(self, items, factory, source=None):
        super().__init__(items, source, dict_type=collections.defaultdict)
        self.factory = factory

    def getattr(self, state, name):
        if name == "default_factory":
            return self.factory if self.factory is not None else const(None)
        return super().getattr(state, name)

    def _constructor_args(self) -> list:
        return [self.factory] if self.factory is not None else []

    def getitem(self, state, key):
        if self.factory is None or self.contains(state, key).constant():
            return super().getitem(state, key)
        # defaultdict.__missing__: call the factory with no arguments, store and return its result
        value = self.factory.call(state, [], {})
        self.setitem(state, key, value)
        return value

    def children(self):
        return list(self.items.values()) + ([self.factory] if self.factory is not None else [])

    def reconstruct(self, codegen):
        body = "".join(f"{codegen.constant(k)}: {codegen.load(v)}, " for k, v in self.items.items())
        factory = codegen.load(self.factory) if self.factory is not None else "None"
        return f"{codegen.constant_object(collections.defaultdict, 'type')}({factory}, {{{body}}})"


def dict_items_from(state, args, kwargs) -> dict:
    """The items dict(*args, **kwargs) would hold: from a dict value or an iterable of pairs, then keywords."""
    items = {}
    if args:
        source = args[0]
        if isinstance(source, DictValue):
            items.update(source.items)
        else:
            for pair in source.iterate(state):
                k, v = pair.iterate(state)
                kc = k.constant()
                if not isinstance(kc, (str, int, float, bool, tuple, type(None))):
                    raise GraphBreak("unsupported_value", "a dict key that is not a constant")
                items[kc] = v
    items.update(kwargs)
    return items


def _ordered_dict(state, cls, args, kwargs):
    if len(args) > 1:
        return NotImplemented
    return OrderedDictValue(dict_items_from(state, args, kwargs))


def _defaultdict(state, cls, args, kwargs):
    factory = args[0] if args else None
    if factory is not None and factory.constant() is None:
        factory = None
    return DefaultDictValue(dict_items_from(state, args[1:], kwargs), factory)


def _fromkeys(state, fn, args, kwargs):
    """dict.fromkeys(iterable, value=None) on dict, OrderedDict or defaultdict (every key shares the value)."""
    cls = fn.__self__
    if kwargs or not 1 <= len(args) <= 2 or cls not in _FROMKEYS:
        return NotImplemented
    value = args[1] if len(args) == 2 else const(None)
    keys = {}
    for key in call(state, iter, [args[0]], {}).iterate(state):
        k = key.constant()
        if k is NOT_CONSTANT:
            raise GraphBreak("unsupported_value", f"a dict key that is a {key.kind_name}")
        keys[k] = value
    return _FROMKEYS[cls](keys)


_FROMKEYS = {dict: DictValue, collections.OrderedDict: OrderedDictValue,
             collections.defaultdict: lambda items: DefaultDictValue(items, None)}
for _cls in (dict, collections.OrderedDict):
    register_callable(vars(_cls)["fromkeys"], KNOWN_CALLABLE, CallRule(f"{_cls.__name__}.fromkeys", Meaning.BUILTIN,
                                                                       _fromkeys))

register_callable(collections.OrderedDict, KNOWN_CALLABLE,
                  CallRule("collections.OrderedDict", Meaning.CONSTRUCT, _ordered_dict))
register_callable(collections.defaultdict, KNOWN_CALLABLE,
                  CallRule("collections.defaultdict", Meaning.CONSTRUCT, _defaultdict))


class DequeValue(ListValue):
    """A deque made inside the function: its items, and `maxlen` (None: unbounded) trimming the other end."""

    __slots__ = ("maxlen",)
    container = collections.deque
    methods = frozenset({"index", "count", "copy", "append", "extend", "insert", "pop", "clear", "reverse", "remove",
                         "appendleft", "popleft", "extendleft", "rotate", "maxlen"})

    def __init__(self, items, maxlen=None, source=None):
        super().__init__(list(items), source)
        self.maxlen = maxlen
        self._trim(left=True)

    @classmethod
    def passed_in(cls, state, real, source):
        """A deque passed in: its length and maxlen guarded, each item read with its own source (d[i])."""
        state.ctx.guard(source, LengthMatch(len(real)))
        state.ctx.guard(AttrSource(source, "maxlen"), EqualsMatch(real.maxlen))
        items = [wrap(state, item, ItemSource(source, i)) for i, item in enumerate(real)]
        return cls(items, real.maxlen, source)

    # -- write-back of a deque passed in: appends as extend, else the whole contents ------------------------
    def replay(self, codegen, values: str, initial) -> str:
        kind, _ = self._delta(initial)
        if kind in ("extend", "positions"):
            return super().replay(codegen, values, initial)
        target = self.source.emit(codegen)
        return f"{target}.clear(); {target}.extend({values})"

    def changed_items(self, codegen, initial) -> str:
        kind, _ = self._delta(initial)
        if kind in ("extend", "positions"):
            return super().changed_items(codegen, initial)
        return "[" + "".join(f"{codegen.load(v)}, " for v in self.items) + "]"

    def python_type(self):
        return collections.deque

    def make(self, items):
        return DequeValue(items, self.maxlen)

    def getattr(self, state, name):
        if name == "maxlen":
            return const(self.maxlen)
        if name == "__reduce_ex__":
            return MethodCallValue(self, name)
        return super().getattr(state, name)

    def getitem(self, state, key):
        if isinstance(key.constant(), slice):
            raise GraphBreak.raises(TypeError, "sequence index must be integer, not 'slice'")
        return super().getitem(state, key)

    def binary_op(self, state, op, other, reflected):
        if op in ("add", "iadd") and not isinstance(other, DequeValue):
            return NotImplemented  # deque + list is a TypeError in Python; apply_binary breaks
        result = super().binary_op(state, op, other, reflected)
        if op == "iadd" and result is self:
            self._trim(left=True)
        return result

    def _trim(self, left):
        """A full deque drops from the other end (deque_append drops the leftmost item)."""
        if self.maxlen is not None:
            while len(self.items) > self.maxlen:
                self.items.pop(0 if left else -1)

    def call_method(self, state, name, args, kwargs):
        items = self.items
        if name in _DEQUE_MUTATORS:
            self._mutable(state, f"deque.{name}()")
        if name == "appendleft" and len(args) == 1:
            items.insert(0, args[0])
            self._trim(left=False)
            return const(None)
        if name == "extendleft" and len(args) == 1:
            for item in args[0].iterate(state):
                items.insert(0, item)
                self._trim(left=False)
            return const(None)
        if name == "popleft" and not args:
            if not items:
                raise GraphBreak.raises(IndexError, "pop from an empty deque")
            return items.pop(0)
        if name == "pop" and not args:
            if not items:
                raise GraphBreak.raises(IndexError, "pop from an empty deque")
            return items.pop()
        if name == "rotate" and len(args) <= 1:
            n = args[0].constant() if args else 1
            if type(n) is not int:
                return super().call_method(state, name, args, kwargs)
            if items:
                n %= len(items)
                items[:] = items[-n:] + items[:-n] if n else items
            return const(None)
        if name == "copy" and not args:
            return DequeValue(items, self.maxlen)
        if name == "__reduce_ex__":
            new_args = [] if self.maxlen is None else [TupleValue([]), const(self.maxlen)]
            return _reduce_ex(state, collections.deque, new_args, self, False, args, kwargs)
        result = super().call_method(state, name, args, kwargs)
        if name in ("append", "extend", "insert"):
            self._trim(left=True)
        return result

    def reconstruct(self, codegen):
        if self.source is not None:
            return self.source.emit(codegen)
        items = "[" + "".join(f"{codegen.load(v)}, " for v in self.items) + "]"
        return f"{codegen.constant_object(collections.deque, 'type')}({items}, {self.maxlen!r})"


#: deque's own mutating methods (list's are recorded by ListValue)
_DEQUE_MUTATORS = frozenset({"appendleft", "extendleft", "popleft", "pop", "rotate"})


def _deque(state, cls, args, kwargs):
    iterable = args[0] if args else kwargs.get("iterable")
    maxlen = args[1] if len(args) > 1 else kwargs.get("maxlen")
    bound = None if maxlen is None else maxlen.constant()
    if bound is not None and type(bound) is not int:
        return NotImplemented
    return DequeValue([] if iterable is None else iterable.iterate(state), bound)


register_callable(collections.deque, KNOWN_CALLABLE, CallRule("collections.deque", Meaning.CONSTRUCT, _deque))


def _count_elements(state, fn, args, kwargs):
    """collections._count_elements(mapping, iterable): mapping[e] = mapping.get(e, 0) + 1 for each element."""
    if len(args) != 2 or kwargs:
        return NotImplemented
    mapping, iterable = args
    for element in call(state, iter, [iterable], {}).iterate(state):
        current = mapping.call_method(state, "get", [element, const(0)], {})
        mapping.setitem(state, element, call(state, operator.add, [current, const(1)], {}))
    return const(None)


if hasattr(collections, "_count_elements"):
    register_callable(collections._count_elements, KNOWN_CALLABLE,
                      CallRule("collections._count_elements", Meaning.BUILTIN, _count_elements))
