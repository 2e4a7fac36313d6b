"""`id(obj)` of a value: an identity token that compares and hashes by the object it names.

Note [id() while tracing]. A number that `id()` returns is the address of an object in this very call: the same
program run again gets other numbers for the objects it makes, and an object passed in may be another one next
time. So `id(x)` is not folded to the capture-time number. It is a token over x's value that answers what
programs ask of ids, by identity: `id(a) == id(b)`, its truth (never 0) and its use as a dict key (copy.deepcopy's
memo, a `seen` set keyed by id). Two tokens are the same object when:
- both values stand for real objects jitcore knows (`identity()`): those objects are the same (the capture guards
  that a mutable object reached from two sources is one value and the others distinct, and a known object is
  pinned);
- both are mutable objects (lists, dicts, sets, new objects) made during the call or passed in: the same value
  (wrap() makes one value per object passed in and guards the others distinct; a fresh object is never a
  pre-existing one, known or not);
- a value that holds a singleton constant (None, True, False, Ellipsis, NotImplemented): the same constant.
Otherwise (two equal ints or strings, a tuple read from an input: whether Python shares them is not ours to know)
the comparison is a graph break, never a guess. Anything that reads the number itself (arithmetic, ordering,
printing, passing it to a tensor operation) folds it where the object is pinned: a known object without a
source, or one with a source once it is guarded by identity (what torch.compile does); else a graph break. A
token that leaves the graph is rebuilt as `id(<the object as rebuilt>)`, which is the number the program would
have seen.
"""
from __future__ import annotations

from jitcore.guards import IdMatch
from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.base import Value, NOT_CONSTANT
from jitcore.capture.values.constant import ConstantValue, const

__all__ = ["ObjectIdValue", "object_id", "same_object"]

#: constants of which Python has exactly one object
_SINGLETONS = (type(None), bool, type(Ellipsis), type(NotImplemented))


def _anchor(value: Value):
    """(how the token compares, what it compares by): "real" + the object, "object" + the value (a mutable
    object: one value per object), or "opaque" + the value (equal only to itself)."""
    real = value.identity()
    if real is not None:
        return "real", real
    if isinstance(value, ConstantValue):
        if type(value.value) in _SINGLETONS:
            return "real", value.value
        return "opaque", value
    if value.needs_identity:
        # made in the call, or a mutable object passed in (wrap() makes one value per object and guards the
        # others distinct)
        return "object", value
    return "opaque", value


def same_object(a: Value, b: Value) -> bool:
    """`id(a) == id(b)`, or a graph break where the answer is not known."""
    (kind_a, anchor_a), (kind_b, anchor_b) = _anchor(a), _anchor(b)
    if anchor_a is anchor_b:
        return True
    if isinstance(a, ConstantValue) and isinstance(b, ConstantValue) and a.value is b.value:
        return True  # one object at capture (a code constant loaded twice): so in every call
    passed_in = (kind_a == "object" and a.source is not None) or (kind_b == "object" and b.source is not None)
    if "opaque" in (kind_a, kind_b) or {kind_a, kind_b} == {"real", "object"} and passed_in:
        # an object known by identity and a container passed in that holds no identity (a dict that contains
        # itself reaches the capture as both): they may be one object
        raise GraphBreak("unsupported_value", f"comparing id() of a {a.kind_name} and a {b.kind_name} (whether "
                                              "Python shares such objects is not known)")
    return False


class ObjectIdValue(Value):
    """`id(target)` (Note [id() while tracing])."""

    __slots__ = ("target",)

    def __init__(self, target: Value):
        super().__init__(None)
        self.target = target

    def python_type(self):
        return int

    def children(self):
        return [self.target]

    def truth(self, state):
        return True  # no object lives at address 0

    def key_hash(self) -> int:
        """A hash consistent with `same_as` (a dict or set keyed by ids: mapping.IdKey)."""
        return id(_anchor(self.target)[1])

    def same_as(self, other: "ObjectIdValue") -> bool:
        return same_object(self.target, other.target)

    def pinned(self, state):
        """The number itself where the object is pinned (guarded by identity when read from a source), else a
        graph break."""
        real = self.target.identity()
        if real is None:
            c = self.target.constant()
            if c is not NOT_CONSTANT and type(c) in _SINGLETONS:
                return const(id(c))
            raise GraphBreak("unsupported_value", f"the number id() gives for a {self.target.kind_name} (another "
                                                  "object on every call)")
        if self.target.source is not None:
            if self.target.is_tensor():
                # a tensor argument is a new object on most calls: pinning it would recompile on each
                raise GraphBreak("unsupported_value", "the number id() gives for a tensor passed in")
            state.ctx.guard(self.target.source, IdMatch(real))
        return const(id(real))

    def binary_op(self, state, op, other, reflected):
        if op in ("eq", "ne") and isinstance(other, ObjectIdValue):
            return const(same_object(self.target, other.target) == (op == "eq"))
        if op in ("eq", "ne") and other.constant() is not NOT_CONSTANT and type(other.constant()) is not int:
            return const(op == "ne")  # an id is an int: never equal to a str, None, ...
        return self.pinned(state).binary_op(state, op, other, reflected)

    def unary_op(self, state, op):
        return self.pinned(state).unary_op(state, op)

    def text(self, state, conversion):
        return const(str(self.pinned(state).constant()))

    def as_fx_arg(self, state):
        return self.pinned(state).as_fx_arg(state)

    def as_fake(self, state):
        return self.pinned(state).as_fake(state)

    def reconstruct(self, codegen):
        return f"{codegen.constant(id)}({codegen.load(self.target)})"

    def __repr__(self):
        return f"id({self.target!r})"


def object_id(state, value: Value) -> Value:
    """The builtin id() of a value."""
    return ObjectIdValue(value)
