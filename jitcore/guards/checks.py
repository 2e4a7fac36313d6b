"""Leaf checks of the guard tree: one small value class per fact that a cache entry relies on.

Each check states its cost, renders its test as Python source for guards/compile.py (constants go into a
guards.render.Namespace), and explains a failure as expected against got. Imports the standard library, torch,
guards.function_words and guards.render only; never jitcore or bytecode.
Entry points: Check and its subclasses TypeMatch, IdMatch, EqualsMatch, NoneMatch, NotNoneMatch, LengthMatch,
MinLengthMatch, HasAttrMatch, DictKeysMatch, SetMatch, ReduceMatch, NamespaceEntryMatch (root), ProbeMatch (root), TensorMatch,
GlobalStateMatch; relations between values: Relation and its subclasses SameObject, DistinctObjects.
"""

from __future__ import annotations

import math
import weakref


import torch

from jitcore.guards.function_words import code_defaults_view, expected_words
from jitcore.guards.render import Namespace, constant_source, distinct_type_names, literal, short_repr, type_name
from jitcore.guards.identity import address

__all__ = [
    "ABSENT",
    "Check",
    "DistinctObjects",
    "Relation",
    "SameObject",
    "DictKeysMatch",
    "EqualsMatch",
    "FunctionMatch",
    "CodeMatch",
    "HasAttrMatch",
    "IdMatch",
    "InstanceDictAbsent",
    "IntPredicateMatch",
    "LengthMatch",
    "MinLengthMatch",
    "NamespaceEntryMatch",
    "NoneMatch",
    "NotNoneMatch",
    "ProbeMatch",
    "ReduceMatch",
    "SetMatch",
    "TypeMatch",
]


class Check:
    """One test on one value. Subclasses set `cost` and implement `render`, `explain`, `describe` and `_key`.

    Invariants: `render(var, ns)` is true exactly when `explain(value)` is None; checks are immutable values
    that compare and hash by `_key()`, so a tree can drop a second identical check on one node. Being immutable,
    a check computes its key once (`_identity`): capture, the guard tree and the module-state batch hash each
    check several times, and a key over a tuple of constants walks every item.
    """

    __slots__ = ("_key_once",)
    cost: int = 5
    #: a root check that stands for many items (the module-state batch): scheduled after every per-value check,
    #: Note [Batches last] in guards/compile.py
    late: bool = False
    #: the user's name for what a root check (one that reads no value) tests, in failures
    root_name: str = "module state"

    def render(self, var: str, ns: Namespace) -> str:
        """A Python boolean expression testing the object bound to `var`; constants go into `ns`."""
        raise NotImplementedError

    def explain(self, value: object) -> str | None:
        """None when `value` passes, else what was expected and what came, in the user's terms."""
        raise NotImplementedError

    def describe(self) -> str:
        """A one-line summary for printing the tree."""
        raise NotImplementedError

    def _key(self) -> tuple:
        raise NotImplementedError

    def _identity(self) -> tuple:
        """`_key()`, computed on first use."""
        try:
            return self._key_once
        except AttributeError:
            key = self._key_once = self._key()
            return key

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash((type(self), self._identity()))

    def __repr__(self) -> str:
        return self.describe()


class TypeMatch(Check):
    """`type(v) is tp`: an exact type, so subclasses fail (a subclass may override what the graph relied on)."""

    __slots__ = ("tp",)
    cost = 1

    def __init__(self, tp: type) -> None:
        if not isinstance(tp, type):
            raise TypeError(f"TypeMatch needs a type, got {short_repr(tp)}; use IdMatch for other objects")
        self.tp = tp

    def render(self, var: str, ns: Namespace) -> str:
        return f"type({var}) is {ns.constant(self.tp, 'T')}"

    def explain(self, value: object) -> str | None:
        if type(value) is self.tp:
            return None
        expected, got = distinct_type_names(self.tp, type(value))
        return f"expected type {expected}, got {got}"

    def describe(self) -> str:
        return f"TypeMatch({type_name(self.tp)})"

    def _key(self) -> tuple:
        return (self.tp,)


class IdMatch(Check):
    """`v is obj`. The object is held through a weak reference where it allows one, so guards never keep user
    objects alive; once it dies the check fails for good (its id may be reused by a new object, which must not
    pass). The rendered test `ref() is v is not None` reads the weak reference once and rejects a dead one.

    A bound method or method-wrapper read from an instance is a new object on every read, so IdMatch on one
    only ever passes where the path reads a stored object (a global, a dict entry); elsewhere guard __func__
    and __self__ instead.
    """

    __slots__ = ("_ref", "_strong", "_id", "_text")
    cost = 2

    def __init__(self, obj: object) -> None:
        self._id = address(obj)
        self._text = short_repr(obj)
        try:
            self._ref = weakref.ref(obj)
            self._strong = None
        except TypeError:  # ints, strings, tuples, None: not weak-referenceable, and cheap to keep
            self._ref = None
            self._strong = obj

    @property
    def target(self) -> object | None:
        """The object this check wants, or None once it has died."""
        return self._strong if self._ref is None else self._ref()

    def render(self, var: str, ns: Namespace) -> str:
        if self._ref is None:
            if self._strong is None:
                return f"{var} is None"
            return f"{var} is {ns.constant(self._strong, 'o')}"
        # Chained comparison: `a is b is not None` evaluates the weakref call once.
        return f"{ns.constant(self._ref, 'r')}() is {var} is not None"

    def explain(self, value: object) -> str | None:
        target = self.target
        if self._ref is not None and target is None:
            return f"the object it was compiled for ({self._text}) no longer exists"
        if value is target:
            return None
        return f"expected the object {self._text}, got {short_repr(value)}"

    def describe(self) -> str:
        return f"IdMatch({self._text})"

    def _key(self) -> tuple:
        # Never the object or the weakref itself: comparing or hashing those runs the user's __eq__/__hash__.
        # weakref.ref(obj) without a callback is one shared object per referent, and we hold it, so its id
        # tells a dead object from a new one that reused the same id.
        return (self._id, None if self._ref is None else address(self._ref))


# Types whose values compare by value with no user code involved; EqualsMatch dedupes them by value.
_PLAIN_CONSTANT_TYPES = (
    type(None), bool, int, float, complex, str, bytes, range, slice, type(Ellipsis), type(NotImplemented),
    torch.dtype, torch.device, torch.Size, torch.layout, torch.memory_format,
)
# Values of these types are singletons: identity is equality and implies the type.
_SINGLETON_TYPES = (type(None), bool, type(Ellipsis), type(NotImplemented), torch.dtype, torch.layout,
                    torch.memory_format)
# A tuple with more leaves than this is compared by one helper call instead of an unrolled chain.
_MAX_UNROLLED_LEAVES = 8


def _is_special_float(value: object) -> bool:
    """NaN never equals itself and 0.0 == -0.0, so plain `==` would get these wrong."""
    return type(value) is float and (value != value or value == 0.0)


def _has_special_float(value: object) -> bool:
    if type(value) is tuple:
        return any(_has_special_float(item) for item in value)
    return _is_special_float(value)


def _leaf_count(value: object) -> int:
    return sum(_leaf_count(item) for item in value) if type(value) is tuple else 1


def same_value(expected: object, got: object) -> bool:
    """EqualsMatch's meaning: the same exact type at every level and an equal value, NaN equal to NaN, 0.0 not
    equal to -0.0. The rendered code computes exactly this; explain() and large tuples call it directly."""
    if type(got) is not type(expected):
        return False
    if type(expected) is float:
        if expected != expected:
            return got != got
        return got == expected and math.copysign(1.0, got) == math.copysign(1.0, expected)
    if type(expected) is tuple:
        return len(got) == len(expected) and all(_same_item(e, g) for e, g in zip(expected, got))
    return bool(got == expected)


def _same_item(expected: object, got: object) -> bool:
    # Tuple comparison tries `is` before `==` for each item (PyObject_RichCompare in tuplerichcompare); mirror it.
    if type(expected) is float or type(expected) is tuple:
        return same_value(expected, got)
    return type(got) is type(expected) and (got is expected or bool(got == expected))


def _value_key(value: object) -> object:
    """A hashable identity for EqualsMatch: by value for plain constants, by object identity otherwise (hashing
    or comparing a user object could run user code, which may raise)."""
    kind = type(value)
    if kind is float or kind is complex:
        return (kind, repr(value))  # tells NaN, 0.0 and -0.0 apart; hash(nan) is per-object since 3.10
    if kind is tuple:
        return (kind, tuple(_value_key(item) for item in value))
    if kind in _PLAIN_CONSTANT_TYPES:
        return (kind, value)
    return (kind, "id", address(value))


class EqualsMatch(Check):
    """`type(v) is type(value) and v == value` for a constant the graph baked in.

    Meaning: see same_value(). Tuples also check the exact type of each element (`(1, 2) == (True, 2.0)`).
    Mutable containers and tensors are refused: a stored list would alias the user's list, and tensor `==` is
    elementwise.
    """

    __slots__ = ("value",)
    cost = 2

    def __init__(self, value: object) -> None:
        if isinstance(value, (list, dict, set, bytearray, torch.Tensor)):
            raise TypeError(
                f"EqualsMatch needs an immutable constant, got {type_name(type(value))} {short_repr(value)}; "
                "guard its type, length and items (or TensorMatch for a tensor) instead"
            )
        self.value = value

    def render(self, var: str, ns: Namespace) -> str:
        test = " and ".join(_equals_terms(var, self.value, ns))
        if type(self.value) is tuple:
            # the tuple this check holds is the one a function's __defaults__ keeps: the same object is equal
            return f"{var} is {ns.constant(self.value, 'tuple')} or ({test})"
        return test

    def explain(self, value: object) -> str | None:
        if same_value(self.value, value):
            return None
        if type(value) is not type(self.value):
            return (f"expected {short_repr(self.value)} ({type_name(type(self.value))}), "
                    f"got {short_repr(value)} ({type_name(type(value))})")
        return f"changed {short_repr(self.value)} -> {short_repr(value)}"

    def describe(self) -> str:
        return f"EqualsMatch({short_repr(self.value)})"

    def _key(self) -> tuple:
        return (_value_key(self.value),)


_IMMUTABLE_CONSTANTS = frozenset({int, float, bool, str, bytes, complex, type(None)})


def immutable_constant(value: object) -> bool:
    """Is `value` a plain constant or a tuple of them: a value that cannot change, which its EqualsMatch pins
    entirely (the same object passes without looking inside)."""
    kind = type(value)
    return kind in _IMMUTABLE_CONSTANTS or (kind is tuple and all(map(immutable_constant, value)))


def _equals_terms(expr: str, value: object, ns: Namespace) -> list[str]:
    """The conjuncts that test `expr` against `value` with same_value()'s meaning."""
    kind = type(value)
    if kind in _SINGLETON_TYPES:
        return [f"{expr} is {constant_source(value, ns)}"]
    if _is_special_float(value):
        if value != value:
            return [f"type({expr}) is float", f"{expr} != {expr}"]
        sign = repr(math.copysign(1.0, value))
        return [f"type({expr}) is float", f"{expr} == 0.0", f"{ns.constant(math.copysign, 'copysign')}(1.0, {expr}) == {sign}"]
    type_term = f"type({expr}) is {_type_source(kind, ns)}"
    if kind is torch.Size:  # Size == tuple compares the same and a literal tuple is cheaper (147 against 239 ns)
        return [type_term, f"{expr} == {literal(tuple(value))}"]
    if kind is not tuple:
        return [type_term, f"{expr} == {constant_source(value, ns)}"]
    if _leaf_count(value) > _MAX_UNROLLED_LEAVES:
        return [f"{ns.constant(same_value, 'same_value')}({ns.constant(value)}, {expr})"]
    if _has_special_float(value):
        terms = [type_term, f"len({expr}) == {len(value)}"]
        for index, item in enumerate(value):
            terms += _equals_terms(f"{expr}[{index}]", item, ns)
        return terms
    # One C-level tuple comparison for the values, then the element types it cannot see.
    terms = [type_term, f"{expr} == {constant_source(value, ns)}"]
    terms += _element_type_terms(expr, value, ns)
    return terms


def _element_type_terms(expr: str, value: tuple, ns: Namespace) -> list[str]:
    terms = []
    for index, item in enumerate(value):
        item_expr = f"{expr}[{index}]"
        if type(item) in _SINGLETON_TYPES:
            terms.append(f"{item_expr} is {constant_source(item, ns)}")
        else:
            terms.append(f"type({item_expr}) is {_type_source(type(item), ns)}")
            if type(item) is tuple:
                terms += _element_type_terms(item_expr, item, ns)
    return terms


_BUILTIN_TYPE_NAMES = {kind: kind.__name__ for kind in (int, float, complex, str, bytes, tuple)}


def _type_source(kind: type, ns: Namespace) -> str:
    # compile.py renames any parameter that shadows a builtin, so these names always mean the builtins.
    return _BUILTIN_TYPE_NAMES.get(kind) or ns.constant(kind, "T")


class NoneMatch(Check):
    """`v is None`."""

    __slots__ = ()
    cost = 1

    def render(self, var: str, ns: Namespace) -> str:
        return f"{var} is None"

    def explain(self, value: object) -> str | None:
        return None if value is None else f"expected None, got {short_repr(value)}"

    def describe(self) -> str:
        return "NoneMatch()"

    def _key(self) -> tuple:
        return ()


class NotNoneMatch(Check):
    """`v is not None`."""

    __slots__ = ()
    cost = 1

    def render(self, var: str, ns: Namespace) -> str:
        return f"{var} is not None"

    def explain(self, value: object) -> str | None:
        return None if value is not None else "expected a value other than None, got None"

    def describe(self) -> str:
        return "NotNoneMatch()"

    def _key(self) -> tuple:
        return ()


class SetMatch(Check):
    """`type(v) is T and tuple(v) == members`, each member of the same type: a set or frozenset with the same
    members in the same iteration order (capture iterates it in that order, and 1 == True must not pass)."""

    __slots__ = ("set_type", "members")
    cost = 4

    def __init__(self, value: set | frozenset) -> None:
        if type(value) not in (set, frozenset):
            raise TypeError(f"SetMatch needs a set or frozenset, got {type_name(type(value))}")
        self.set_type = type(value)
        self.members = tuple(value)

    def render(self, var: str, ns: Namespace) -> str:
        return f"type({var}) is {self.set_type.__name__} and " + " and ".join(
            _equals_terms(f"tuple({var})", self.members, ns))

    def explain(self, value: object) -> str | None:
        if type(value) is not self.set_type:
            return f"expected a {self.set_type.__name__}, got {type_name(type(value))}"
        if same_value(self.members, tuple(value)):
            return None
        return f"changed {short_repr(set(self.members))} -> {short_repr(value)}"

    def describe(self) -> str:
        return f"SetMatch({short_repr(self.members)})"

    def _key(self) -> tuple:
        return (self.set_type, _value_key(self.members))


class ReduceMatch(Check):
    """`type(v) is T and v.__reduce__()[1] == args`, args of the same types: an immutable object rebuilt from
    its type and constant arguments (operator.itemgetter(1), attrgetter("a.b"), methodcaller("mul", 4)) is the
    same behaviour whichever object it is, so a new one made for each call matches."""

    __slots__ = ("obj_type", "args")
    cost = 4

    def __init__(self, obj_type: type, args: tuple) -> None:
        self.obj_type = obj_type
        self.args = tuple(args)

    def render(self, var: str, ns: Namespace) -> str:
        kind = constant_source(self.obj_type, ns, "t")
        return f"type({var}) is {kind} and " + " and ".join(_equals_terms(f"{var}.__reduce__()[1]", self.args, ns))

    def explain(self, value: object) -> str | None:
        if type(value) is not self.obj_type:
            return f"expected a {type_name(self.obj_type)}, got {type_name(type(value))}"
        got = value.__reduce__()[1]
        return None if same_value(self.args, got) else f"changed {short_repr(self.args)} -> {short_repr(got)}"

    def describe(self) -> str:
        return f"ReduceMatch({type_name(self.obj_type)}{short_repr(self.args)})"

    def _key(self) -> tuple:
        return (self.obj_type, _value_key(self.args))


class _LengthBound(Check):
    """`len(v) <op> n`, whatever the type: the shared body of LengthMatch and MinLengthMatch."""

    __slots__ = ("length",)
    cost = 3
    #: the comparison as rendered, as worded in failures, and the smallest length it takes
    _op = "=="
    _wording = ""
    _least = 0

    def __init__(self, length: int) -> None:
        if type(length) is not int or length < self._least:
            raise ValueError(f"{type(self).__name__} needs a length >= {self._least}, got {length!r}")
        self.length = length

    def _holds(self, got: int) -> bool:
        raise NotImplementedError

    def render(self, var: str, ns: Namespace) -> str:
        return f"len({var}) {self._op} {self.length}"

    def explain(self, value: object) -> str | None:
        try:
            got = len(value)
        except TypeError:
            return f"expected length {self._wording}{self.length}, got {type_name(type(value))} without a length"
        return None if self._holds(got) else f"expected length {self._wording}{self.length}, got {got}"

    def describe(self) -> str:
        return f"{type(self).__name__}({self.length})"

    def _key(self) -> tuple:
        return (self.length,)


class LengthMatch(_LengthBound):
    """`len(v) == n`, whatever the type (pair it with TypeMatch where the type matters)."""

    __slots__ = ()

    def _holds(self, got: int) -> bool:
        return got == self.length


class MinLengthMatch(_LengthBound):
    """`len(v) >= n`: an iterator's rest has at least the items a trace took from it (a loop carried across a
    graph break guards only what it consumed, so the guard holds at every position of the loop)."""

    __slots__ = ()
    _op = ">="
    _wording = ">= "
    _least = 1

    def _holds(self, got: int) -> bool:
        return got >= self.length


class HasAttrMatch(Check):
    """`hasattr(v, name) is present`: an attribute the traced code probed (hasattr, getattr with a default)."""

    __slots__ = ("name", "present")
    cost = 3

    def __init__(self, name: str, present: bool) -> None:
        if type(name) is not str or type(present) is not bool:
            raise ValueError(f"HasAttrMatch needs a str name and a bool, got {name!r}, {present!r}")
        self.name = name
        self.present = present

    def render(self, var: str, ns: Namespace) -> str:
        return f"hasattr({var}, {self.name!r}) is {self.present}"

    def explain(self, value: object) -> str | None:
        if hasattr(value, self.name) is self.present:
            return None
        return f"expected {'an' if self.present else 'no'} attribute {self.name!r}, got " \
               f"{'none' if self.present else 'one'}"

    def describe(self) -> str:
        return f"HasAttrMatch({self.name!r}, {self.present})"

    def _key(self) -> tuple:
        return (self.name, self.present)


class IntPredicateMatch(Check):
    """A relation a number must keep, such as `v + 1 < 10` for a loop counter: `template` is a Python expression
    over `{v}` made only of number literals and operators (built by jitcore from a traced comparison), and
    `expected` is the truth value it had. Keeps a loop's resume function valid for every iteration. `kind` is
    the exact type the value must have (int, or float)."""

    __slots__ = ("template", "expected", "kind")
    cost = 3

    def __init__(self, template: str, expected: bool, kind: type = int) -> None:
        if "{v}" not in template or type(expected) is not bool or kind not in (int, float):
            raise ValueError(f"IntPredicateMatch needs a template over {{v}}, a bool and int/float, got "
                             f"{template!r}, {expected!r}, {kind!r}")
        self.template = template
        self.expected = expected
        self.kind = kind

    def render(self, var: str, ns: Namespace) -> str:
        return f"type({var}) is {self.kind.__name__} and ({self.template.format(v=var)}) is {self.expected}"

    def explain(self, value: object) -> str | None:
        if type(value) is not self.kind:
            return f"expected {self.kind.__name__}, got {type_name(type(value))}"
        got = bool(eval(self.template.format(v=repr(value)), {"__builtins__": {}}))
        if got is self.expected:
            return None
        return f"{self.template.format(v=repr(value))} changed {self.expected} -> {got}"

    def describe(self) -> str:
        return f"IntPredicateMatch({self.template.format(v='v')} is {self.expected})"

    def _key(self) -> tuple:
        return (self.template, self.expected, self.kind)


class DictKeysMatch(Check):
    """`tuple(v.keys()) == keys`: the same keys in the same order (iteration order is baked into a graph)."""

    __slots__ = ("keys",)
    cost = 5

    def __init__(self, keys: tuple) -> None:
        self.keys = tuple(keys)

    def render(self, var: str, ns: Namespace) -> str:
        return f"tuple({var}.keys()) == {constant_source(self.keys, ns, 'k')}"

    def explain(self, value: object) -> str | None:
        got = tuple(value.keys())
        return None if got == self.keys else f"expected keys {self.keys!r}, got {got!r}"

    def describe(self) -> str:
        return f"DictKeysMatch({self.keys!r})"

    def _key(self) -> tuple:
        return (_value_key(self.keys),)


ABSENT = type("Absent", (), {"__repr__": lambda self: "<absent>", "__slots__": ()})()


class NamespaceEntryMatch(Check):
    """A root check on one entry of a namespace held by the check: a module's globals dict or a class's
    `__dict__` (a read-only proxy that stays live). `namespace[key] is expected`, or `key not in namespace` when
    `expected` is ABSENT. Stands for a fact of name resolution capture relied on: a builtin not shadowed by a
    global, a method or property found on the class that defines it and absent from the classes before it in the
    MRO. `label` is the user's name of the entry (`G.len`, `Obj.w`), shown in failures.

    The namespace is held strongly (a module's or a class's dict lives as long as its owner, like TypeMatch's
    class); the expected object through a weak reference where it allows one, as IdMatch does.
    """

    __slots__ = ("namespace", "key", "label", "_owner_id", "_ref", "_strong", "_id", "_text")
    cost = 2

    def __init__(self, namespace, key: str, expected: object = ABSENT, label: str | None = None,
                 owner: object = None) -> None:
        self.namespace = namespace
        # a class's __dict__ is a new proxy on every read: checks on one class compare equal through its owner
        self._owner_id = address(namespace if owner is None else owner)
        self.key = key
        self.label = label or key
        self._id = None if expected is ABSENT else address(expected)
        self._text = short_repr(expected)
        self._ref = self._strong = None
        if expected is not ABSENT:
            try:
                self._ref = weakref.ref(expected)
            except TypeError:
                self._strong = expected

    @property
    def root_name(self) -> str:
        return self.label

    @property
    def expects_absent(self) -> bool:
        return self._id is None

    def render(self, var: str, ns: Namespace) -> str:
        d = ns.constant(self.namespace, "ns")
        key = constant_source(self.key, ns, "key")
        if self.expects_absent:
            return f"{key} not in {d}"
        if self._ref is not None:
            return f"{ns.constant(self._ref, 'r')}() is {d}[{key}] is not None"
        return f"{d}[{key}] is {ns.constant(self._strong, 'o')}"

    def explain(self, value: object = None) -> str | None:
        present = self.key in self.namespace
        if self.expects_absent:
            if not present:
                return None
            return f"now set to {short_repr(self.namespace[self.key])} (it was not there when compiled)"
        if not present:
            return f"was deleted (it was {self._text})"
        now = self.namespace[self.key]
        if self._ref is None:
            # held strongly (None, an int, a tuple...): the check is `is` on that very object, None included
            if now is self._strong:
                return None
        elif now is self._ref() is not None:
            return None
        return f"was replaced ({self._text} -> {short_repr(now)})"

    def describe(self) -> str:
        return f"NamespaceEntryMatch({self.label}: {'absent' if self.expects_absent else self._text})"

    def _key(self) -> tuple:
        return (self._owner_id, self.key, self._id, None if self._ref is None else address(self._ref))


class Relation(Check):
    """A check relating the value at its own node to the values at `other_paths` (aliasing between inputs).

    The generated function reads the other paths too and calls `render_relation(var, other_vars, ns)`;
    `explain` receives the tuple (own value, *other values). A relation runs late (high cost), after the checks
    that make its reads safe. `other_names` are the user's names of the other values, for failures.
    """

    __slots__ = ("other_paths", "other_names")
    cost = 40

    def __init__(self, other_paths, other_names) -> None:
        self.other_paths = tuple(other_paths)
        self.other_names = tuple(other_names)

    def render(self, var: str, ns: Namespace) -> str:
        raise TypeError("a Relation renders through render_relation(var, other_vars, ns)")

    def render_relation(self, var: str, others: list, ns: Namespace) -> str:
        raise NotImplementedError

    def _key(self) -> tuple:
        return (self.other_paths,)


class SameObject(Relation):
    """`v is other`: the object reached from two places when compiled (`f(x, l, l)`) is still one object, so the
    capture's single value for it (one list, one graph input) still stands for both."""

    __slots__ = ()
    cost = 3

    def __init__(self, other_path: tuple, other_name: str) -> None:
        super().__init__((other_path,), (other_name,))

    def render_relation(self, var: str, others: list, ns: Namespace) -> str:
        return f"{var} is {others[0]}"

    def explain(self, value: object) -> str | None:
        own, other = value
        return None if own is other else f"is no longer the same object as {self.other_names[0]}"

    def describe(self) -> str:
        return f"SameObject({self.other_names[0]})"


#: up to this many pairs, one `a is not b` test each (~10 ns); beyond, one set of the values' ids, which costs
#: an `id()` call per value: ~0.06 us, but ~0.65 us under an audit hook (Note [Facts implied by other checks])
_MAX_PAIRWISE = 200


class DistinctObjects(Relation):
    """The value and every other value are pairwise different objects, as they were when compiled: capture
    modelled them as separate objects (mutating one does not change another; separate graph inputs)."""

    __slots__ = ()

    def render_relation(self, var: str, others: list, ns: Namespace) -> str:
        names = [*others, var]
        return self.render_pairs(names, [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))])

    @staticmethod
    def render_pairs(names: list, pairs: list) -> str:
        """The test that the values named `names[i]`, `names[j]` are different objects for each (i, j) in `pairs`
        (the pairs the guard's other checks do not already tell apart: guards/implied.py)."""
        if not pairs:
            return "True"
        if len(pairs) <= _MAX_PAIRWISE:
            # `is not` needs no call; `id()` is an audited builtin (Note [Facts implied by other checks])
            return " and ".join(f"{names[i]} is not {names[j]}" for i, j in pairs)
        involved = sorted({index for pair in pairs for index in pair})
        ids = ", ".join(f"id({names[i]})" for i in involved)
        return f"len({{{ids}}}) == {len(involved)}"

    def explain(self, value: object) -> str | None:
        own, *others = value
        for name, other in zip(self.other_names, others):
            if other is own:
                return f"is now the same object as {name}"
        for i, (name_a, a) in enumerate(zip(self.other_names, others)):
            for name_b, b in zip(self.other_names[i + 1:], others[i + 1:]):
                if a is b:
                    return f"{name_a} is now the same object as {name_b}"
        return None

    def describe(self) -> str:
        return f"DistinctObjects(from {', '.join(self.other_names)})"


class FunctionMatch(Check):
    """A root check on a function capture inlined without a source to guard it on (a method found in a class
    dict, a property's getter): its `__code__` and `__defaults__` are still the objects it was traced with. The
    function is held through a weak reference (a dead one fails).

    `body_of(code)`, when given, maps a code to the body it runs (a dispatch prologue installed in place runs the
    function's own body after dispatching: Note [Prologues run the same body] in `CodeMatch`); the check holds the
    body, so installing or removing such a prologue keeps it true."""

    __slots__ = ("_ref", "code", "defaults", "label", "body_of", "_view")
    cost = 3

    def __init__(self, fn, label: str | None = None, body_of=None) -> None:
        self._ref = weakref.ref(fn)
        self.body_of = body_of
        self.code = fn.__code__ if body_of is None else body_of(fn.__code__)
        self.defaults = fn.__defaults__
        self.label = label or getattr(fn, "__qualname__", "function")
        # the getters are audited: the fast test compares the stored addresses (Note [Audited reads])
        self._view = code_defaults_view(fn)

    @property
    def root_name(self) -> str:
        return self.label

    def render(self, var: str, ns: Namespace) -> str:
        fn = f"{ns.constant(self._ref, 'fn')}()"
        defaults = "None" if self.defaults is None else ns.constant(self.defaults, "defaults")
        code = ns.constant(self.code, "code")
        same = f"{fn}.__code__ is {code}"
        if self.body_of is not None:
            same = f"({same} or {ns.constant(self.body_of, 'body_of')}({fn}.__code__) is {code})"
        slow = f"{same} and {fn}.__defaults__ is {defaults}"
        if self._view is None:
            return slow
        # the local keeps the function alive while its words are read; the check holds code and defaults, so
        # their addresses stand for them
        alive = ns.temp("f")
        words = ns.constant(expected_words(self.code, self.defaults), "words")
        return f"(({alive} := {ns.constant(self._ref, 'fn')}()) is not None and {ns.constant(self._view, 'view')}[:] == {words}) or ({slow})"

    def explain(self, value: object = None) -> str | None:
        fn = self._ref()
        if fn is None:
            return "the function it was compiled for no longer exists"
        if fn.__code__ is not self.code and (self.body_of is None or self.body_of(fn.__code__) is not self.code):
            return "__code__ was replaced"
        if fn.__defaults__ is not self.defaults:
            return f"__defaults__ changed {short_repr(self.defaults)} -> {short_repr(fn.__defaults__)}"
        return None

    def describe(self) -> str:
        return f"FunctionMatch({self.label})"

    def _key(self) -> tuple:
        return (address(self._ref), address(self.code), address(self.defaults), address(self.body_of))


class CodeMatch(Check):
    """`body_of(v) is code` for a function's `__code__`: the function still runs the body it was traced with.

    Note [Prologues run the same body]: jitcore installs dispatch prologues in place (`enabled()`, JITCORE=1): the
    function's `__code__` becomes a prologue that dispatches, then runs the original body. A caller that inlined
    the function computes the same thing either way, so a prologue installed or removed after the caller was
    captured must not fail its guard (it recompiled the caller every time a callee got compiled on its own).
    `body_of` (capture's `prologues.unwrapped`) maps a prologue to the code it wraps and any other code to itself."""

    __slots__ = ("code", "body_of")
    cost = 2

    def __init__(self, code, body_of) -> None:
        self.code = body_of(code)
        self.body_of = body_of

    def render(self, var: str, ns: Namespace) -> str:
        code = ns.constant(self.code, "code")
        return f"({var} is {code} or {ns.constant(self.body_of, 'body_of')}({var}) is {code})"

    def explain(self, value: object) -> str | None:
        if value is self.code or self.body_of(value) is self.code:
            return None
        return f"__code__ was replaced (expected the code of {self.code.co_qualname}, got {short_repr(value)})"

    def describe(self) -> str:
        return f"CodeMatch({self.code.co_qualname})"

    def _key(self) -> tuple:
        return (address(self.code), address(self.body_of))


class InstanceDictAbsent(Check):
    """A root check: the object's own `__dict__` still lacks `key` (a module whose forward or method capture
    found on its class: assigning `m.forward = ...` later must recompile). The object is held through a weak
    reference (a dead one fails). `label` is the user's name (`self.fc.forward`)."""

    __slots__ = ("_ref", "key", "label")
    cost = 3

    def __init__(self, obj, key: str, label: str) -> None:
        self._ref = weakref.ref(obj)
        self.key = key
        self.label = label

    @property
    def obj(self):
        return self._ref()

    @property
    def root_name(self) -> str:
        return self.label

    def render(self, var: str, ns: Namespace) -> str:
        return f"{constant_source(self.key, ns, 'key')} not in {ns.constant(self._ref, 'r')}().__dict__"

    def explain(self, value: object = None) -> str | None:
        obj = self._ref()
        if obj is None:
            return "the object it was compiled for no longer exists"
        if self.key in obj.__dict__:
            return f"was set on the instance ({short_repr(obj.__dict__[self.key])})"
        return None

    def describe(self) -> str:
        return f"InstanceDictAbsent({self.label})"

    def _key(self) -> tuple:
        return (address(self._ref), self.key)


class ProbeMatch(Check):
    """A root check: `probe(*args)` still answers `expected`. A probe is a function without effects that reads
    process state capture folded into a constant: the length of torch's dispatch-mode stack, an environment
    variable (`os.environ.get(key)`), torch's tracing state. `label` is how the user wrote it (`os.environ['K']`),
    shown in failures. The answer is compared as EqualsMatch compares (exact type, equal value)."""

    __slots__ = ("probe", "args", "expected", "label")
    cost = 2

    def __init__(self, probe, args: tuple, expected: object, label: str) -> None:
        if isinstance(expected, (list, dict, set, bytearray, torch.Tensor)):
            raise TypeError(f"ProbeMatch needs an immutable answer, got {type_name(type(expected))}")
        self.probe = probe
        self.args = tuple(args)
        self.expected = expected
        self.label = label

    @property
    def root_name(self) -> str:
        return self.label

    def render(self, var: str, ns: Namespace) -> str:
        args = ", ".join(constant_source(arg, ns, "a") for arg in self.args)
        call = f"{ns.constant(self.probe, 'probe')}({args})"
        if type(self.expected) in _SINGLETON_TYPES:
            return f"{call} is {constant_source(self.expected, ns)}"
        return f"{ns.constant(same_value, 'same_value')}({constant_source(self.expected, ns)}, {call})"

    def explain(self, value: object = None) -> str | None:
        now = self.probe(*self.args)
        if same_value(self.expected, now):
            return None
        return f"changed {short_repr(self.expected)} -> {short_repr(now)}"

    def describe(self) -> str:
        return f"ProbeMatch({self.label} == {short_repr(self.expected)})"

    def _key(self) -> tuple:
        return (address(self.probe), tuple(_value_key(arg) for arg in self.args), _value_key(self.expected))
