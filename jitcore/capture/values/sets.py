"""Sets (and frozensets) built and queried inside the captured function, and sets passed in.

Members are constants (compared by value) or objects jitcore knows by identity (modules, functions); a tensor
member hashes by identity in eager Python too. Each member is kept under the key Python would hash it by. A set of
hashable constants made inside also keeps its table's history (values/set_layout.py, Note [A set's order is its
history]), so it iterates, pops and is rebuilt in CPython's order; a set passed in records what the call does to
it and replays those operations on it after the graph, in order.
"""
from __future__ import annotations

import operator

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.base import Value, NOT_CONSTANT, MethodCallValue
from jitcore.capture.values.constant import const, fold, register_container
from jitcore.capture.values.iterator import SetIteratorValue
from jitcore.capture.values.set_layout import Layout, rebuild, stable_member
from jitcore.capture.values.mapping import IdKey
from jitcore.capture.values.object_id import ObjectIdValue
from jitcore.capture.values.objects import ClassValue
from jitcore.capture.values.sequence import ListValue, TupleValue

__all__ = ["SetValue", "construct_set"]


def member_key(state, value):
    """The key a set or dict would hash `value` by, as far as jitcore can tell without running __hash__."""
    c = value.constant()
    if c is not NOT_CONSTANT:
        try:
            hash(c)
        except TypeError as exc:
            raise GraphBreak.raises(TypeError, str(exc)) from None
        return ("value", c)
    if isinstance(value, ObjectIdValue):
        return ("id()", IdKey(value))
    real = value.identity()
    if real is not None and type(real).__hash__ is object.__hash__ or value.is_tensor():
        return ("id", id(real))
    raise GraphBreak("unsupported_value", f"a set element that is a {value.kind_name}")


class SetValue(Value):
    """key -> member value, in insertion order; `layout` (a set of constants made inside) knows CPython's order,
    `writes` (a set passed in) lists the operations to replay on it after the graph."""

    __slots__ = ("members", "set_type", "popped", "order_known", "layout", "writes")
    needs_identity = True
    builtin_dunders = True

    def __init__(self, members, source=None, set_type=set, state=None, layout=None):
        super().__init__(source)
        self.set_type = set_type
        #: set.pop() takes CPython's first member from a search position it keeps; after a pop and then an add,
        #: which member comes first is not known here (sets without a layout)
        self.popped = False
        self.order_known = True
        self.members = {member_key(state, m): m for m in members}
        #: the table's history (values/set_layout.py); None for sets passed in and sets of other members
        self.layout = layout if source is None else None
        #: (method, args) applied to a set passed in, replayed on it after the graph in this order
        self.writes: list = []

    @classmethod
    def made(cls, state, set_type, origin):
        """A new set made inside by `origin` (set_layout.rebuild's form), members read from the real result."""
        layout = Layout.made_by(origin)
        return cls([const(m) for m in layout.real], set_type=set_type, state=state, layout=layout)

    def children(self):
        return list(self.members.values())

    def python_type(self):
        return self.set_type

    def constant(self):
        if self.layout is not None:
            return self.layout.real  # its own order (never mutated by a fold: the mutators are modelled here)
        values = [m.constant() for m in self.members.values()]
        if NOT_CONSTANT in values:
            return NOT_CONSTANT
        return self.set_type(values)

    def truth(self, state):
        return bool(self.members)

    def length(self, state):
        return len(self.members)

    def iterate(self, state):
        if self.source is not None and self.order_known and not self._changed(state):
            # a set passed in and not changed yet: its own iteration order (guarded by SetMatch)
            return list(self.members.values())
        if self.source is not None:
            # CPython's order after adds and removals depends on the real table's history
            raise GraphBreak("unsupported_value", "iterating a set passed in after changing it (order not known)")
        if self.layout is not None:
            return [self.members[("value", m)] for m in self.layout.real]
        c = self.constant()
        if c is NOT_CONSTANT:
            raise GraphBreak("unsupported_value", "iterating a set of non-constant values (order is not known)")
        return [const(m) for m in c]

    def _changed(self, state) -> bool:
        return state.ctx.side_effects.is_mutated(self)

    def live_iterator(self, state):
        return SetIteratorValue(self, self.iterate(state))

    def getattr(self, state, name):
        if hasattr(self.set_type, name) and (not name.startswith("_") or name in _IN_PLACE_METHODS) \
                or name == "__reduce_ex__" and self.set_type in (set, frozenset):
            return MethodCallValue(self, name)
        return super().getattr(state, name)

    def contains(self, state, item):
        return const(member_key(state, item) in self.members)

    # -- what each operation does to the history (made inside) or the write log (passed in) -------------------
    def _step(self, state, method, args=(), member=None):
        """Record `method(*args)` (values): on the layout where it is known, else in the write log."""
        if self.source is not None:
            self.writes.append((method, [("member", [member])] if member is not None else
                                [a if a is self else _write_arg(state, a) for a in args]))
            return
        if self.layout is None:
            return
        if member is not None:
            c = member.constant()
            specs = [("const", c)] if c is not NOT_CONSTANT and stable_member(c) else None
        else:
            specs = [_arg_spec(state, a, self) for a in args]
        if specs is None or None in specs:
            self.layout = None  # a member or argument whose hash or order is not known exactly
            return
        self.layout.apply(method, *specs)

    def add(self, state, value):
        self._mutable(state, "set.add()")
        self.members.setdefault(member_key(state, value), value)
        self.order_known = self.order_known and not self.popped
        self._step(state, "add", [value], member=value)

    def update(self, state, iterable):
        self._mutable(state, "set.update()")
        items = iterable.iterate(state)
        if iterable is not self:
            for v in items:
                self.members.setdefault(member_key(state, v), v)
        self.order_known = self.order_known and not self.popped
        self._step(state, "update", [iterable if not _is_iterator(iterable) else _Items(items)])

    def _mutable(self, state, what):
        if self.set_type is not set:
            raise GraphBreak.raises(AttributeError, f"{what} on a frozenset")
        if self.source is not None:
            state.ctx.side_effects.container_mutated(self)

    def reconstruct_items(self, codegen) -> str:
        if not self.members:
            return "set()"
        return "{" + ", ".join(codegen.load(m) for m in self.members.values()) + "}"

    # -- write-back after the graph: the operations in order (capture/side_effects.py) ------------------------
    def snapshot(self):
        return len(self.writes)

    def _write_values(self):
        values = []
        for _, args in self.writes:
            for arg in args:
                if arg is not self:
                    values.extend(arg[1])
        return values

    def changed_items(self, codegen, initial) -> str:
        return "(" + "".join(f"{codegen.load(v)}, " for v in self._write_values()) + ")"

    def replay(self, codegen, values: str, initial) -> str:
        target = self.source.emit(codegen)
        lines, index = [], 0
        for method, args in self.writes:
            rendered = []
            for arg in args:
                if arg is self:
                    rendered.append(target)
                    continue
                kind, members = arg[:2]
                if kind == "recipe":
                    recipe = codegen.constant_object(arg[2], "set_recipe")
                    rendered.append(f"{codegen.constant_object(rebuild, 'rebuild_set')}({recipe})")
                    continue
                items = [f"{values}[{index + i}]" for i in range(len(members))]
                index += len(members)
                if kind == "member":
                    rendered.append(items[0])
                elif kind == "iterable":
                    rendered.append("(" + "".join(f"{i}, " for i in items) + ")")
                else:
                    body = "{" + ", ".join(items) + "}" if items else "set()"
                    rendered.append(body if kind is set else f"frozenset({body})")
            lines.append(f"{target}.{method}({', '.join(rendered)})")
        return "; ".join(lines) or "pass"

    def binary_op(self, state, op, other, reflected):
        if op in _IN_PLACE:
            # set's in-place operators take another set and change this one (a frozenset's make a new one)
            if self.set_type is not set or not isinstance(other, SetValue) or reflected:
                return NotImplemented
            if other is not self:
                _from_passed_in(other)
            self._mutable(state, f"{_IN_PLACE[op]}=")
            self._in_place(state, op, other)
            self._step(state, f"__{op}__", [other])
            return self
        if op in ("or_", "and_", "sub", "xor") and isinstance(other, SetValue):
            first, second = (other, self) if reflected else (self, other)
            if op == "and_" and (first.layout is None or second.layout is None):
                return _intersection(state, first, second)
            _from_passed_in(self)
            _from_passed_in(other)
            if first.layout is not None and second.layout is not None:
                return SetValue.made(state, first.set_type, ("call", getattr(operator, op),
                                                             (first.layout.as_arg(), second.layout.as_arg())))
            result = SetValue(list(first.members.values()), set_type=first.set_type, state=state)
            result._in_place(state, "i" + op.rstrip("_"), second)
            return result
        oc = other.constant()
        mine = self.constant()
        if mine is NOT_CONSTANT or not isinstance(oc, (set, frozenset)):
            return NotImplemented
        a, b = (oc, mine) if reflected else (mine, oc)
        return const(fold(state, getattr(operator, op), a, b))

    def _in_place(self, state, op, other):
        theirs = other.members
        if op == "ior":
            for key, member in theirs.items():
                self.members.setdefault(key, member)
        elif op == "iand":
            for key in [k for k in self.members if k not in theirs]:
                del self.members[key]
        elif op == "isub":
            for key in [k for k in self.members if k in theirs]:
                del self.members[key]
        elif other is self:
            self.members.clear()
        else:
            for key, member in theirs.items():
                if key in self.members:
                    del self.members[key]
                else:
                    self.members[key] = member
        self.order_known = self.order_known and not (self.popped and op in ("ior", "ixor"))

    def call_method(self, state, name, args, kwargs):
        if name == "__reduce_ex__" and len(args) == 1 and not kwargs and self.set_type in (set, frozenset):
            # set_reduce: (type, (members in iteration order,), None), what copy.deepcopy rebuilds a set from
            return TupleValue([ClassValue(self.set_type), TupleValue([ListValue(self.iterate(state))]), const(None)])
        if name == "intersection" and len(args) == 1 and isinstance(args[0], SetValue) and not kwargs and \
                (self.layout is None or args[0].layout is None):
            return _intersection(state, self, args[0])
        if name in _NEW_SET_METHODS or name == "copy":
            _from_passed_in(self)
        if name in _NEW_SET_METHODS or name in _UPDATE_METHODS or name == "update":
            for a in args:
                if a is not self:
                    _from_passed_in(a)
        if name in _IN_PLACE_METHODS and len(args) == 1 and not kwargs:
            result = self.binary_op(state, _IN_PLACE_METHODS[name], args[0], False)
            return const(NotImplemented) if result is NotImplemented else result
        if name == "pop" and not args and not kwargs:
            if self.source is not None:
                # CPython's pop starts from a position the real set keeps between pops (its finger)
                raise GraphBreak("unsupported_value", "set.pop() on a set passed in (which member is not known)")
            self._mutable(state, "set.pop()")
            if not self.members:
                raise GraphBreak.raises(KeyError, "'pop from an empty set'")
            if self.layout is not None:
                return self.members.pop(("value", self.layout.apply("pop")))
            if not self.order_known:
                raise GraphBreak("unsupported_value", "set.pop() after members were added to a set that was popped "
                                                      "(which member CPython takes is not known)")
            first = member_key(state, self.iterate(state)[0])
            self.popped = True
            return self.members.pop(first)
        if name == "clear" and not args and not kwargs:
            self._mutable(state, "set.clear()")
            self.members.clear()
            self._step(state, "clear")
            return const(None)
        if name == "add" and len(args) == 1:
            self.add(state, args[0])
            return const(None)
        if name == "update" and not kwargs:
            for a in args:
                self.update(state, a)
            return const(None)
        if name in ("discard", "remove") and len(args) == 1:
            self._mutable(state, f"set.{name}()")
            key = member_key(state, args[0])
            if name == "remove" and key not in self.members:
                raise GraphBreak.raises(KeyError, f"{args[0]!r}")
            if key in self.members:
                self._step(state, "discard", [args[0]], member=args[0])
            self.members.pop(key, None)
            return const(None)
        if name in _UPDATE_METHODS and not kwargs and (args or name != "symmetric_difference_update"):
            # they take any iterables (the operators take sets only); never folded on a copy of the members
            if name == "symmetric_difference_update" and len(args) != 1:
                raise GraphBreak.raises(TypeError, f"set.{name}() takes exactly one argument ({len(args)} given)")
            self._mutable(state, f"set.{name}()")
            args = [a if isinstance(a, SetValue) or not _is_iterator(a) else _Items(a.iterate(state)) for a in args]
            for other in args:
                as_set = other if isinstance(other, SetValue) else SetValue(other.iterate(state), state=state)
                self._in_place(state, _UPDATE_METHODS[name], as_set)
            self._step(state, name, args)
            return const(None)
        if name == "copy" and not args:
            if self.set_type is frozenset:
                return self  # frozenset.copy() is the same object
            if self.layout is not None:
                return SetValue.made(state, self.set_type, ("call", set.copy, (self.layout.as_arg(),)))
            return SetValue(list(self.members.values()), set_type=self.set_type, state=state)
        if name in _NEW_SET_METHODS and not kwargs and self.layout is not None:
            specs = [_arg_spec(state, a, None) for a in args]
            if None not in specs:
                return SetValue.made(state, self.set_type,
                                     ("call", getattr(self.set_type, name), (self.layout.as_arg(), *specs)))
        mine = self.constant()
        others = [a.constant() for a in args]
        if mine is not NOT_CONSTANT and NOT_CONSTANT not in others and hasattr(mine, name):
            return const(fold(state, getattr(mine, name), *others))
        return super().call_method(state, name, args, kwargs)

    def reconstruct(self, codegen):
        if self.layout is not None:
            # CPython's table, not only its members (Note [A set's order is its history])
            recipe = codegen.constant_object(self.layout.recipe(), "set_recipe")
            return f"{codegen.constant_object(rebuild, 'rebuild_set')}({recipe})"
        if self.set_type is frozenset:
            return f"frozenset({self.reconstruct_items(codegen)})"
        return self.reconstruct_items(codegen)


class _Items(Value):
    """The items an iterator gave, as the argument of a recorded step (the iterator itself is spent)."""

    __slots__ = ("items",)

    def __init__(self, items):
        super().__init__(None)
        self.items = list(items)

    def python_type(self):
        return tuple

    def iterate(self, state):
        return list(self.items)

    def constant(self):
        return NOT_CONSTANT


def _is_iterator(value) -> bool:
    """A value iterating which uses it up (a generator, map, an iterator): read once, then kept as its items."""
    return not isinstance(value, (SetValue, _Items)) and hasattr(value.python_type(), "__next__")


def _arg_spec(state, other, owner):
    """`other` as the argument of a step of `owner`'s layout (set_layout's forms: "self" for owner itself), or None
    where its members or its order are not known exactly."""
    if other is owner:
        return "self", None
    if isinstance(other, SetValue):
        if other.layout is not None:
            return other.layout.as_arg()
        _from_passed_in(other)
        return None
    if other.python_type() is dict:
        keys = [k.constant() for k in other.iterate(state)]  # CPython's own path for an exact dict
        return ("dict", tuple(keys)) if NOT_CONSTANT not in keys and all(map(stable_member, keys)) else None
    items = [v.constant() for v in other.iterate(state)]
    if NOT_CONSTANT in items or not all(stable_member(v) for v in items):
        return None
    return "const", tuple(items)


def _intersection(state, first, second):
    """`first & second` where one is a set passed in: CPython iterates the smaller one (the second at equal sizes)
    and adds, in that order, the members the other holds to a new set of the first's type; an iteration order
    the guards pin (or a layout's) is all it needs."""
    iterated, other = (first, second) if len(second.members) > len(first.members) else (second, first)
    try:
        order = iterated.iterate(state)
    except GraphBreak:
        raise GraphBreak("unsupported_value", "`&` of sets whose order is not known") from None
    common = [m for m in order if member_key(state, m) in other.members]
    consts = tuple(m.constant() for m in common)
    if NOT_CONSTANT in consts or not all(map(stable_member, consts)):
        return SetValue(common, set_type=first.set_type, state=state)
    return SetValue.made(state, first.set_type, ("call", first.set_type, (("const", consts),)))


def _from_passed_in(value) -> None:
    """A set made from a set passed in (a copy, `|`, `&`, `-`, `^`, union() ...) takes its order from the real
    set's table, which the guards do not pin (only its members and their order): the operation runs in Python."""
    if isinstance(value, SetValue) and value.source is not None and value.layout is None:
        raise GraphBreak("unsupported_value", "a set made from a set passed in (its order comes from that set's "
                                              "table, which is not known)")


def _write_arg(state, arg):
    """An argument of an operation on a set passed in, for the write-back: (kind, member values[, recipe])."""
    if isinstance(arg, SetValue):
        if arg.layout is not None:
            return "recipe", [], arg.layout.recipe()
        return arg.set_type, list(arg.members.values())
    return "iterable", list(arg.iterate(state))


def construct_set(state, set_type, args, kwargs):
    """`set(iterable)` / `frozenset(iterable)` of constants: made as CPython makes it, its table's history kept;
    NotImplemented otherwise (the builtin's own rule folds or breaks)."""
    if kwargs or len(args) > 1:
        return NotImplemented
    if not args:
        return SetValue.made(state, set_type, ("new", set_type))
    arg = args[0]
    if set_type is frozenset and isinstance(arg, SetValue) and arg.set_type is frozenset:
        return arg  # frozenset(a frozenset) is that object
    if _is_iterator(arg):
        arg = _Items(arg.iterate(state))
    spec = _arg_spec(state, arg, None)
    if spec is None:
        if isinstance(arg, _Items):
            raise GraphBreak("unsupported_value", f"{set_type.__name__}() of an iterator over values that are "
                                                  f"not constants")
        return NotImplemented
    return SetValue.made(state, set_type, ("call", set_type, (spec,)))


_IN_PLACE = {"ior": "|", "iand": "&", "isub": "-", "ixor": "^"}
_IN_PLACE_METHODS = {f"__{op}__": op for op in _IN_PLACE}
#: the mutating methods that do what an in-place operator does, on any iterables
_UPDATE_METHODS = {"intersection_update": "iand", "difference_update": "isub", "symmetric_difference_update": "ixor"}
#: methods that make a new set from this one and any iterables
_NEW_SET_METHODS = frozenset({"union", "intersection", "difference", "symmetric_difference"})


def _from_object(value):
    """const(a set or frozenset computed at capture time): a frozenset is immutable, so it is its own origin; a
    set is a new object made from its members in its order."""
    if not all(stable_member(m) for m in value):
        return SetValue([const(v) for v in value], set_type=type(value))
    if type(value) is frozenset:
        return SetValue([const(v) for v in value], set_type=frozenset, layout=Layout(value, ("object", value)))
    return SetValue.made(None, type(value), ("call", type(value), (("const", tuple(value)),)))


for _tp in (set, frozenset):
    register_container(_tp, _from_object)
