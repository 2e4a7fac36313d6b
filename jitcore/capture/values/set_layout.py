"""The history of a set's hash table, so that sets made inside iterate, pop and come back in CPython's order.

Note [A set's order is its history]: CPython iterates a set in the order of its hash table's slots, and where a
member lands depends on everything the table went through: the order of adds, the dummies a discard leaves, when
and to what size it resized (an add resizes to 4x, a bulk update first to twice the sum), and the fast path that
copies another set's table slot for slot. Two sets with the same members in the same order can still order a new
member differently. So a set of hashable constants made inside keeps a `Layout`: `real`, a private set object to
which every operation is applied as eager Python applies it (the same method, an argument of the same kind: a set
rebuilt from its own history, a dict, or a tuple for any other iterable), and `recipe`, how to make that object
again at run time (an origin and the steps since). Iteration and `pop()` read `real`; a set returned or live at a
break is rebuilt by `rebuild(recipe)`, so it has CPython's order and table, not only its members.
Sets passed in are the caller's objects: their history is unknown (never mutated while tracing); what the call did
to one is replayed on it after the graph as the same operations in the same order (SetValue.replay).
"""
from __future__ import annotations

__all__ = ["Layout", "rebuild", "stable_member"]

#: member types whose hash is a function of the value (the same on every call of the process)
_STABLE = frozenset({int, float, bool, str, bytes, type(None), complex})


def stable_member(value) -> bool:
    """A set member whose hash and equality a private set reproduces exactly."""
    tp = type(value)
    if tp in _STABLE:
        return True
    if tp in (tuple, frozenset):
        return all(stable_member(v) for v in value)
    return False


def _arg_object(spec, obj=None):
    kind, payload = spec
    if kind == "self":
        return obj  # `s |= s`: CPython's own shortcuts for the same object
    if kind == "set":
        return rebuild(payload)
    if kind == "dict":
        return dict.fromkeys(payload)
    return payload  # "const": a tuple (any other iterable takes the same generic path) or a member


def rebuild(recipe):
    """Make the set `recipe` describes: its origin, then each step, as eager Python made them."""
    origin, steps = recipe
    kind = origin[0]
    if kind == "object":
        obj = origin[1]  # an immutable frozenset (a code constant)
    elif kind == "call":
        obj = origin[1](*(_arg_object(a) for a in origin[2]))
    else:  # "new"
        obj = origin[1]()
    for method, args in steps:
        getattr(obj, method)(*(_arg_object(a, obj) for a in args))
    return obj


class Layout:
    """A private set that went through what the modelled set went through, and how to make it again."""

    __slots__ = ("real", "origin", "steps")

    def __init__(self, real, origin):
        self.real = real
        self.origin = origin
        self.steps: list = []

    @classmethod
    def made_by(cls, origin) -> Layout:
        return cls(rebuild((origin, ())), origin)

    def recipe(self) -> tuple:
        return self.origin, tuple(self.steps)

    def as_arg(self) -> tuple:
        """This set as the argument of another set's step (its history up to now)."""
        return "set", self.recipe()

    def apply(self, method: str, *specs):
        """Apply `method` to the real set, with arguments given as specs; recorded for the rebuild."""
        result = getattr(self.real, method)(*(_arg_object(s, self.real) for s in specs))
        self.steps.append((method, specs))
        return result

    def order(self) -> list:
        return list(self.real)
