"""Sets (and frozensets) built and queried inside the captured function.

Members are constants (compared by value) or objects jitcore knows by identity (modules, functions); a tensor
member hashes by identity in eager Python too. Each member is kept under the key Python would hash it by.
"""
from __future__ import annotations

import operator

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.base import Value, NOT_CONSTANT, MethodCallValue
from jitcore.capture.values.constant import const, fold, register_container
from jitcore.capture.values.iterator import SetIteratorValue

__all__ = ["SetValue"]


def member_key(state, value):
    """The key a set or dict would hash `value` by, as far as jitcore can tell without running __hash__."""
    c = value.constant()
    if c is not NOT_CONSTANT:
        try:
            hash(c)
        except TypeError as exc:
            raise GraphBreak.raises(TypeError, str(exc)) from None
        return ("value", c)
    real = value.identity()
    if real is not None and type(real).__hash__ is object.__hash__ or value.is_tensor():
        return ("id", id(real))
    raise GraphBreak("unsupported_value", f"a set element that is a {value.kind_name}")


class SetValue(Value):
    """key -> member value, in insertion order (iteration order of small int/str sets may differ from CPython's,
    so iterating a set of non-constants is refused)."""

    __slots__ = ("members", "set_type", "popped", "order_known")
    needs_identity = True
    builtin_dunders = True

    def __init__(self, members, source=None, set_type=set, state=None):
        super().__init__(source)
        self.set_type = set_type
        #: set.pop() takes CPython's first member from a search position it keeps; after a pop and then an add,
        #: which member comes first is not known here
        self.popped = False
        self.order_known = True
        self.members = {member_key(state, m): m for m in members}

    def children(self):
        return list(self.members.values())

    def python_type(self):
        return self.set_type

    def constant(self):
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
        c = self.constant()
        if c is NOT_CONSTANT:
            raise GraphBreak("unsupported_value", "iterating a set of non-constant values (order is not known)")
        return [const(m) for m in c]

    def _changed(self, state) -> bool:
        return state.ctx.side_effects.is_mutated(self)

    def live_iterator(self, state):
        return SetIteratorValue(self, self.iterate(state))

    def getattr(self, state, name):
        if hasattr(self.set_type, name) and (not name.startswith("_") or name in _IN_PLACE_METHODS):
            return MethodCallValue(self, name)
        return super().getattr(state, name)

    def contains(self, state, item):
        return const(member_key(state, item) in self.members)

    def add(self, state, value):
        self._mutable(state, "set.add()")
        self.members.setdefault(member_key(state, value), value)
        self.order_known = self.order_known and not self.popped

    def update(self, state, iterable):
        self._mutable(state, "set.update()")
        for v in iterable.iterate(state):
            self.members.setdefault(member_key(state, v), v)
        self.order_known = self.order_known and not self.popped

    def _mutable(self, state, what):
        if self.set_type is not set:
            raise GraphBreak.raises(AttributeError, f"{what} on a frozenset")
        if self.source is not None:
            state.ctx.side_effects.container_mutated(self)

    def reconstruct_items(self, codegen) -> str:
        if not self.members:
            return "set()"
        return "{" + ", ".join(codegen.load(m) for m in self.members.values()) + "}"

    # -- write-back after the graph: members removed and added (capture/side_effects.py) ----------------------
    def snapshot(self):
        return dict(self.members)

    def changed_items(self, codegen, initial) -> str:
        removed = [m for k, m in initial.items() if k not in self.members]
        added = [m for k, m in self.members.items() if k not in initial]
        return "((" + "".join(f"{codegen.load(m)}, " for m in removed) + "), (" + \
            "".join(f"{codegen.load(m)}, " for m in added) + "))"

    def replay(self, codegen, values: str, initial) -> str:
        target = self.source.emit(codegen)
        return f"[{target}.discard(___m) for ___m in {values}[0]]; {target}.update({values}[1])"

    def binary_op(self, state, op, other, reflected):
        if op in _IN_PLACE:
            # set's in-place operators take another set and change this one (a frozenset's make a new one)
            if self.set_type is not set or not isinstance(other, SetValue) or reflected:
                return NotImplemented
            self._mutable(state, f"{_IN_PLACE[op]}=")
            self._in_place(state, op, other)
            return self
        if op in ("or_", "and_", "sub", "xor") and isinstance(other, SetValue):
            first, second = (other, self) if reflected else (self, other)
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
        else:
            for key, member in theirs.items():
                if key in self.members:
                    del self.members[key]
                else:
                    self.members[key] = member
        self.order_known = self.order_known and not (self.popped and op in ("ior", "ixor"))

    def call_method(self, state, name, args, kwargs):
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
            if not self.order_known:
                raise GraphBreak("unsupported_value", "set.pop() after members were added to a set that was popped "
                                                      "(which member CPython takes is not known)")
            first = member_key(state, self.iterate(state)[0])
            self.popped = True
            return self.members.pop(first)
        if name == "clear" and not args and not kwargs:
            self._mutable(state, "set.clear()")
            self.members.clear()
            return const(None)
        if name == "add" and len(args) == 1:
            self.add(state, args[0])
            return const(None)
        if name == "update":
            for a in args:
                self.update(state, a)
            return const(None)
        if name in ("discard", "remove") and len(args) == 1:
            self._mutable(state, f"set.{name}()")
            key = member_key(state, args[0])
            if name == "remove" and key not in self.members:
                raise GraphBreak.raises(KeyError, f"{args[0]!r}")
            self.members.pop(key, None)
            return const(None)
        if name in _UPDATE_METHODS and not kwargs and (args or name != "symmetric_difference_update"):
            # they take any iterables (the operators take sets only); never folded on a copy of the members
            if name == "symmetric_difference_update" and len(args) != 1:
                raise GraphBreak.raises(TypeError, f"set.{name}() takes exactly one argument ({len(args)} given)")
            self._mutable(state, f"set.{name}()")
            for other in args:
                as_set = other if isinstance(other, SetValue) else SetValue(other.iterate(state), state=state)
                self._in_place(state, _UPDATE_METHODS[name], as_set)
            return const(None)
        if name == "copy" and not args:
            return SetValue(list(self.members.values()), set_type=self.set_type, state=state)
        mine = self.constant()
        others = [a.constant() for a in args]
        if mine is not NOT_CONSTANT and NOT_CONSTANT not in others and hasattr(mine, name):
            return const(fold(state, getattr(mine, name), *others))
        return super().call_method(state, name, args, kwargs)

    def reconstruct(self, codegen):
        if self.set_type is frozenset:
            return f"frozenset({self.reconstruct_items(codegen)})"
        return self.reconstruct_items(codegen)


_IN_PLACE = {"ior": "|", "iand": "&", "isub": "-", "ixor": "^"}
_IN_PLACE_METHODS = {f"__{op}__": op for op in _IN_PLACE}
#: the mutating methods that do what an in-place operator does, on any iterables
_UPDATE_METHODS = {"intersection_update": "iand", "difference_update": "isub", "symmetric_difference_update": "ixor"}

for _tp in (set, frozenset):
    register_container(_tp, lambda value: SetValue([const(v) for v in value], set_type=type(value)))
