"""Tuples and lists (and namedtuples / torch.return_types, which are tuples with a type).

Items are values. A list made inside the captured function is mutated in place; a list that came from outside
(it has a source) is read-only here: mutating it is a side effect the frame must run natively.
"""
from __future__ import annotations

import operator

import types

import torch

from jitcore.guards import LengthMatch
from jitcore.capture.breaks import GraphBreak
from jitcore.capture.sources import ItemSource
from jitcore.capture.values.base import Value, NOT_CONSTANT, MethodCallValue
from jitcore.capture.values.constant import ConstantValue, const, fold, register_container
from jitcore.capture.values.iterator import ListIteratorValue
from jitcore.capture.values.wrapping import wrap

__all__ = ["TupleValue", "ListValue", "SequenceValue"]


def _index(state, key):
    k = key.constant()
    if k is NOT_CONSTANT:
        if key.is_tensor():
            raise GraphBreak("data_dependent", "indexing a Python sequence with a tensor")
        raise GraphBreak("unsupported_value", f"indexing with a {key.kind_name}")
    if not isinstance(k, (int, slice)):
        raise GraphBreak("user_exception", f"sequence indices must be integers or slices, not {type(k).__name__}")
    return k


class SequenceValue(Value):
    """A tuple or list of item values. Its methods read the items through `sequence_items()`, where a list passed
    in reads (and guards) its real items the first time they are needed."""

    __slots__ = ("items",)
    container = tuple
    builtin_dunders = True
    #: method names call_method models
    methods = frozenset({"index", "count"})

    def __init__(self, items, source=None):
        super().__init__(source)
        self.items = items

    def python_type(self):
        return self.container

    def sequence_items(self):
        return self.items

    def children(self):
        return self.items

    def constant(self):
        out = []
        for item in self.sequence_items():
            c = item.constant()
            if c is NOT_CONSTANT:
                return NOT_CONSTANT
            out.append(c)
        return self.container(out)

    def truth(self, state):
        return bool(self.sequence_items())

    def length(self, state):
        return len(self.sequence_items())

    def iterate(self, state):
        return list(self.sequence_items())

    def getitem(self, state, key):
        k = _index(state, key)
        picked = fold(state, operator.getitem, self.sequence_items(), k)
        return self.make(picked) if isinstance(k, slice) else picked

    def make(self, items):
        return type(self)(list(items))

    def contains(self, state, item):
        found = self.constant()
        iv = item.constant()
        if found is NOT_CONSTANT or iv is NOT_CONSTANT:
            # item by item, identity first (PySequence_Contains -> PyObject_RichCompare's `is` shortcut): the
            # first identical item answers before a tensor item would have to be compared by value
            for v in self.sequence_items():
                if _same(v, item):
                    return const(True)
                if item.is_tensor() or v.is_tensor():
                    raise GraphBreak("data_dependent", "`in` compares tensors by value")
            return const(False)
        return const(iv in found)

    def binary_op(self, state, op, other, reflected):
        if op in ("add", "iadd") and type(other) is type(self) and not reflected:
            return self.make(self.sequence_items() + other.sequence_items())
        if op in ("mul", "imul"):
            n = other.constant()
            if type(n) is int:
                return self.make(self.sequence_items() * n)
        if op in ("eq", "ne") and isinstance(other, SequenceValue):
            mine, theirs = self.sequence_items(), other.sequence_items()  # a list passed in is read lazily
            if _holds_symbolic(mine) or _holds_symbolic(theirs):
                return _symbolic_equality(state, op, mine, theirs)
            a, b = self.constant(), other.constant()
            if a is not NOT_CONSTANT and b is not NOT_CONSTANT:
                return const(getattr(operator, op)(a, b))
        return NotImplemented

    def call_method(self, state, name, args, kwargs):
        if name in ("index", "count") and not kwargs:
            c = self.constant()
            a = [x.constant() for x in args]
            if c is not NOT_CONSTANT and NOT_CONSTANT not in a:
                return const(fold(state, getattr(c, name), *a))
        return super().call_method(state, name, args, kwargs)

    def getattr(self, state, name):
        if name in self.methods:
            return MethodCallValue(self, name)
        raise GraphBreak("unsupported_value", f"attribute {name!r} of a {self.container.__name__}")

    def as_fx_arg(self, state):
        return self.container(v.as_fx_arg(state) for v in self.sequence_items())

    def as_fake(self, state):
        return self.container(v.as_fake(state) for v in self.sequence_items())


def _holds_symbolic(items) -> bool:
    return any(item.is_symbolic_number() for item in items)


def _symbolic_equality(state, op, left, right):
    """`x.shape == y.shape` item by item, as Python compares: each symbolic pair decides through its own
    comparison (a relation guard on the sizes), so no size is specialised."""
    if len(left) != len(right):
        return const(op == "ne")
    for a, b in zip(left, right):
        result = a.binary_op(state, "eq", b, False)
        if result is NotImplemented:
            result = b.binary_op(state, "eq", a, True)
        if result is NotImplemented:
            return NotImplemented
        if not result.truth(state):
            return const(op == "ne")
    return const(op == "eq")


def _same(a, b) -> bool:
    if a is b:
        return True
    ca, cb = a.constant(), b.constant()
    return ca is not NOT_CONSTANT and cb is not NOT_CONSTANT and ca == cb


class TupleValue(SequenceValue):
    __slots__ = ("tuple_type",)
    container = tuple

    def __init__(self, items, source=None, tuple_type=None):
        super().__init__(list(items), source)
        #: None for a plain tuple; the namedtuple / structseq class otherwise
        self.tuple_type = tuple_type

    def python_type(self):
        return self.tuple_type or tuple

    def constant(self):
        c = super().constant()
        if c is NOT_CONSTANT or self.tuple_type is None:
            return c
        return _build_typed(self.tuple_type, c)

    def make(self, items):
        # torch.Size's slices, concatenations and repeats are Sizes; a namedtuple's or structseq's are plain tuples
        return TupleValue(items, tuple_type=torch.Size if self.tuple_type is torch.Size else None)

    def binary_op(self, state, op, other, reflected):
        if (op in ("add", "iadd") and isinstance(other, TupleValue) and other.tuple_type is torch.Size
                and self.tuple_type is not torch.Size):
            # a tuple plus a Size is a Size: Python asks the subclass's __radd__ first
            mine, theirs = self.sequence_items(), other.sequence_items()
            return TupleValue(theirs + mine if reflected else mine + theirs, tuple_type=torch.Size)
        return super().binary_op(state, op, other, reflected)

    def getattr(self, state, name):
        fields = getattr(self.tuple_type, "_fields", None) or _structseq_fields(self.tuple_type)
        if fields and name in fields:
            return self.items[fields.index(name)]
        if fields and name == "_fields":
            return const(tuple(fields))
        if hasattr(self.tuple_type, "_fields") and name in ("_replace", "_asdict"):
            return MethodCallValue(self, name)
        if self.tuple_type is torch.Size and name == "numel":
            return MethodCallValue(self, name)
        method = self._user_method(state, name)
        if method is not None:
            return method
        return super().getattr(state, name)

    def _user_method(self, state, name):
        """A method, property, staticmethod or classmethod that a namedtuple class or its subclass defines
        (`typing.NamedTuple` with methods, `_make`), bound to this tuple; None for anything else. The lookup is
        guarded."""
        cls = self.tuple_type
        if cls is None or not hasattr(cls, "_fields") or name in tuple.__dict__:
            return None
        # lazy: user_object builds on this module
        from jitcore.capture.values.user_object import _class_attribute, relied_class_lookup
        if not any(name in klass.__dict__ for klass in cls.__mro__[:cls.__mro__.index(tuple)]):
            return None
        raw = relied_class_lookup(state, cls, name)
        if isinstance(raw, (types.FunctionType, property, staticmethod, classmethod)):
            return _class_attribute(state, self, cls, name, raw)
        return None

    def call_method(self, state, name, args, kwargs):
        fields = getattr(self.tuple_type, "_fields", None)
        if fields and name == "_replace" and not args:
            items = list(self.items)
            for key, value in kwargs.items():
                if key not in fields:
                    raise GraphBreak.raises(ValueError, f"Got unexpected field names: [{key!r}]")
                items[fields.index(key)] = value
            return TupleValue(items, tuple_type=self.tuple_type)
        if fields and name == "_asdict" and not args and not kwargs:
            # the dict kind builds on this module: const() makes an empty one (mapping.py registers dict there)
            result = const({})
            for field, value in zip(fields, self.items):
                result.setitem(state, const(field), value)
            return result
        if self.tuple_type is torch.Size and name == "numel" and not args and not kwargs:
            # the product of symbolic sizes stays symbolic (guarded by the ShapeEnv like any size arithmetic)
            from jitcore.capture.values.builtins import product  # lazy: builtins imports this module
            return product(state, self.items)
        return super().call_method(state, name, args, kwargs)

    def reconstruct(self, codegen):
        inner = "".join(f"{codegen.load(v)}, " for v in self.items)
        if self.tuple_type is None:
            return f"({inner})"
        return codegen.build_typed_tuple(self.tuple_type, f"({inner})")


def _structseq_fields(tp):
    # structseqs (torch.return_types.*) name their fields in __match_args__
    if tp is None or not hasattr(tp, "n_fields"):
        return None
    return list(getattr(tp, "__match_args__", ())) or None


def _build_typed(tp, items):
    if hasattr(tp, "_fields"):
        return tuple.__new__(tp, items)  # Note [Rebuilding a namedtuple] in codegen/transform.py
    return tp(items)


class ListValue(SequenceValue):
    """A list. One passed into the function is read lazily: until its items are needed, only appends are
    recorded (replayed as `lst.extend(...)`), so a list that a loop keeps appending to is not guarded on its
    length (a resume function called once per iteration would otherwise see a new length every time)."""

    __slots__ = ("_lazy", "_appended")
    container = list
    needs_identity = True
    methods = frozenset({"index", "count", "copy", "append", "extend", "insert", "pop", "clear", "reverse",
                         "remove", "sort", "__iadd__", "__imul__"})

    def __init__(self, items, source=None, lazy=None):
        super().__init__(items, source)
        #: (state, the real list) while the items have not been read
        self._lazy = lazy
        self._appended = []

    @classmethod
    def lazy(cls, state, real: list, source):
        return cls(None, source, (state, real))

    def realize(self) -> list:
        """The item values. A list passed in reads its real items the first time: their number is relied on from
        then on, so it is guarded here (the one place a list's length guard comes from)."""
        if self._lazy is not None:
            state, real = self._lazy
            self._lazy = None
            state.ctx.guard(self.source, LengthMatch(len(real)))
            self.items = [wrap(state, item, ItemSource(self.source, i)) for i, item in enumerate(real)]
            state.ctx.side_effects.realized(self, self.items)
            self.items.extend(self._appended)
            self._appended = []
        return self.items

    def sequence_items(self):
        return self.realize()

    def children(self):
        return self._appended if self._lazy is not None else self.items

    def make(self, items):
        return ListValue(list(items))

    def live_iterator(self, state):
        return ListIteratorValue(self)

    def _mutable(self, state, what):
        if self.source is not None:
            state.ctx.side_effects.container_mutated(self)

    # -- write-back after the graph: appends, removals at the end, changed positions or one changed run ------
    def snapshot(self):
        """The items at the first mutation; None while they are not read (the real list's, read at _realize)."""
        return None if self._lazy is not None else list(self.items)

    def _delta(self, initial):
        """('extend', new items) | ('truncate', kept length) | ('positions', [(index, value)]) | ('splice',
        (start, stop, items)): the initial items start:stop become items, those around them are kept (an insert, a
        pop or a remove away from the end: only the run between the unchanged head and tail is written)."""
        if self._lazy is not None:
            return "extend", self._appended
        final, n, m = self.items, len(initial), len(self.items)
        if all(a is b for a, b in zip(initial, final)):
            return ("extend", final[n:]) if m >= n else ("truncate", m)
        if m == n:
            return "positions", [(i, v) for i, v in enumerate(final) if v is not initial[i]]
        head = 0
        while initial[head] is final[head]:  # stops before min(n, m): the lists differ within it
            head += 1
        tail = 0
        while tail < min(n, m) - head and initial[n - 1 - tail] is final[m - 1 - tail]:
            tail += 1
        return "splice", (head, n - tail, final[head:m - tail])

    def changed_items(self, codegen, initial) -> str:
        kind, delta = self._delta(initial)
        values = [] if kind == "truncate" else [v for _, v in delta] if kind == "positions" \
            else delta[2] if kind == "splice" else delta
        return "[" + "".join(f"{codegen.load(v)}, " for v in values) + "]"

    def replay(self, codegen, values: str, initial) -> str:
        target = self.source.emit(codegen)
        kind, delta = self._delta(initial)
        if kind == "extend":
            return f"{target}.extend({values})"
        if kind == "truncate":
            return f"del {target}[{delta}:{len(initial)}]"
        if kind == "positions":
            return "; ".join(f"{target}[{i}] = {values}[{j}]" for j, (i, _) in enumerate(delta)) or "pass"
        start, stop, _ = delta
        return f"{target}[{start}:{stop}] = {values}"

    def setitem(self, state, key, value):
        self._mutable(state, "item assignment")
        k = _index(state, key)
        if isinstance(k, slice):
            fold(state, operator.setitem, self.realize(), k, value.iterate(state))
        else:
            fold(state, operator.setitem, self.realize(), k, value)

    def delitem(self, state, key):
        self._mutable(state, "del")
        fold(state, operator.delitem, self.realize(), _index(state, key))

    def binary_op(self, state, op, other, reflected):
        if op == "iadd" and not reflected:
            self._mutable(state, "+=")
            self.realize().extend(other.iterate(state))
            return self
        if op == "imul" and not reflected:
            # list.__imul__ repeats the list in place (listobject.c list_inplace_repeat) and returns it
            n = other.constant()
            if type(n) not in (int, bool):
                return NotImplemented
            self._mutable(state, "*=")
            items = self.realize()
            items[:] = items * n
            return self
        return super().binary_op(state, op, other, reflected)

    def call_method(self, state, name, args, kwargs):
        if name in ("__iadd__", "__imul__") and len(args) == 1 and not kwargs:
            result = self.binary_op(state, name[2:-2], args[0], False)
            if result is NotImplemented:
                raise GraphBreak.raises(TypeError, f"can't multiply sequence by non-int of type "
                                                         f"'{args[0].python_type().__name__}'")
            return result
        if self._lazy is not None and name in ("append", "extend") and not kwargs and len(args) == 1:
            self._mutable(state, f"list.{name}()")
            self._appended.extend(args if name == "append" else args[0].iterate(state))
            return const(None)
        items = self.realize()
        if name in _LIST_MUTATORS:
            self._mutable(state, f"list.{name}()")
            if kwargs and name != "sort":
                raise GraphBreak("user_exception", f"list.{name}() takes no keyword arguments")
            if name == "append":
                items.append(*args)
            elif name == "extend":
                items.extend(args[0].iterate(state))
            elif name == "insert":
                items.insert(_index(state, args[0]), args[1])
            elif name == "pop":
                return fold(state, items.pop, *(_index(state, a) for a in args))
            elif name == "clear":
                items.clear()
            elif name == "reverse":
                items.reverse()
            elif name == "remove":
                for i, v in enumerate(items):
                    if _same(v, args[0]):
                        del items[i]
                        break
                else:
                    raise GraphBreak("user_exception", "list.remove(x): x not in list")
            elif name == "sort":
                key = kwargs.get("key")
                reverse = kwargs["reverse"].constant() if "reverse" in kwargs else False
                if key is not None and key.constant() is not None:
                    # the key is called once per item, in order; the items move by their keys (stable, as timsort)
                    keys = [key.call(state, [item], {}).constant() for item in items]
                    if NOT_CONSTANT in keys or type(reverse) is not bool:
                        raise GraphBreak("unsupported_value", "sorting by keys that are not Python constants")
                    order = fold(state, sorted, range(len(items)), key=keys.__getitem__, reverse=reverse)
                    items[:] = [items[i] for i in order]
                    return const(None)
                c = self.constant()
                if c is NOT_CONSTANT:
                    raise GraphBreak("unsupported_value", "sorting a list of non-constants")
                items[:] = [const(v) for v in sorted(c, reverse=reverse)]
            return const(None)
        if name == "copy" and not args:
            return ListValue(list(items))
        return super().call_method(state, name, args, kwargs)

    def reconstruct(self, codegen):
        return "[" + "".join(f"{codegen.load(v)}, " for v in self.realize()) + "]"


_LIST_MUTATORS = frozenset({"append", "extend", "insert", "pop", "clear", "reverse", "remove", "sort"})


register_container(tuple, lambda value: TupleValue([const(v) for v in value],
                                                   tuple_type=None if type(value) is tuple else type(value)))
register_container(list, lambda value: ListValue([const(v) for v in value]))
