"""Leaf checks of the guard tree: one small value class per fact that a cache entry relies on.

Each check states its cost, renders its test as Python source for guards/compile.py (constants go into a
guards.render.Namespace), and explains a failure as expected against got. Imports the standard library, torch
and guards.render only; never jitcore or bytecode.
Entry points: Check and its subclasses TypeMatch, IdMatch, EqualsMatch, NoneMatch, NotNoneMatch, LengthMatch,
DictKeysMatch, TensorMatch, GlobalStateMatch.
"""

from __future__ import annotations

import math
import operator as _operator
import weakref


import torch

from guards.render import Namespace, constant_source, distinct_type_names, literal, short_repr, type_name

__all__ = [
    "Check",
    "BatchIdentityMatch",
    "DictKeysMatch",
    "EqualsMatch",
    "GlobalStateMatch",
    "IdMatch",
    "IntPredicateMatch",
    "LengthMatch",
    "NoneMatch",
    "NotNoneMatch",
    "TensorMatch",
    "TypeMatch",
]


class Check:
    """One test on one value. Subclasses set `cost` and implement `render`, `explain`, `describe` and `_key`.

    Invariants: `render(var, ns)` is true exactly when `explain(value)` is None; checks are immutable values
    that compare and hash by `_key()`, so a tree can drop a second identical check on one node.
    """

    __slots__ = ()
    cost: int = 5

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

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash((type(self), self._key()))

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
        self._id = id(obj)
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
        return (self._id, None if self._ref is None else id(self._ref))


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
    return (kind, "id", id(value))


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
        return " and ".join(_equals_terms(var, self.value, ns))

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


class LengthMatch(Check):
    """`len(v) == n`, whatever the type (pair it with TypeMatch where the type matters)."""

    __slots__ = ("length",)
    cost = 3

    def __init__(self, length: int) -> None:
        if type(length) is not int or length < 0:
            raise ValueError(f"LengthMatch needs a length >= 0, got {length!r}")
        self.length = length

    def render(self, var: str, ns: Namespace) -> str:
        return f"len({var}) == {self.length}"

    def explain(self, value: object) -> str | None:
        try:
            got = len(value)
        except TypeError:
            return f"expected length {self.length}, got {type_name(type(value))} without a length"
        return None if got == self.length else f"expected length {self.length}, got {got}"

    def describe(self) -> str:
        return f"LengthMatch({self.length})"

    def _key(self) -> tuple:
        return (self.length,)


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


class BatchIdentityMatch(Check):
    """A root check standing for many per-item checks on module state: each `containers[i][keys[i]]` is still the
    object it was (parameters, buffers, submodules, `training` flags), the first `n_grads` of those objects keep
    their requires_grad, and every dict in `empty` is still empty (hook dicts).

    It is one check however many items it covers: the items are read with C-level `map`, so a model with
    hundreds of parameters costs microseconds, not one Python-level check per parameter. The containers are the
    modules' own dicts captured at compile time (nn.Module never replaces them). `names[i]` is the user's name
    of item i, for failures.
    """

    __slots__ = ("containers", "keys", "ids", "n_grads", "grads", "empty", "names", "empty_names", "_objects",
                 "__weakref__")
    cost = 4

    def __init__(self, containers, keys, objects, n_grads, empty, names, empty_names, owners=()) -> None:
        self.containers = tuple(containers)
        self.keys = tuple(keys)
        self._objects = tuple(objects)
        self.ids = [id(o) for o in objects]
        self.n_grads = n_grads
        self.grads = [o.requires_grad for o in objects[:n_grads]]
        self.empty = tuple(empty)
        self.names = tuple(names)
        self.empty_names = tuple(empty_names)
        # the containers are the owners' own dicts, which hold the parameters: when an owner (a module) dies,
        # let go of everything, so this check never keeps a dropped model's tensors alive; it fails from then on
        this = weakref.ref(self)
        for owner in {id(o): o for o in owners}.values():
            weakref.finalize(owner, _release_batch, this)

    def _read(self):
        return list(map(_dict_getitem, self.containers, self.keys))

    def holds(self) -> bool:
        values = list(map(_dict_getitem, self.containers, self.keys))
        return (list(map(id, values)) == self.ids
                and list(map(_requires_grad, values[:self.n_grads])) == self.grads
                and not any(map(len, self.empty)))

    def render(self, var: str, ns: Namespace) -> str:
        return f"{ns.constant(self.holds, 'module_state')}()"

    def explain(self, value: object = None) -> str | None:
        try:
            values = self._read()
        except Exception as error:
            return f"module state could not be read ({type(error).__name__}: {error})"
        for name, old, new in zip(self.names, self._objects, values):
            if new is not old:
                if isinstance(old, (bool, int, float, str, type(None))):
                    return f"{name} changed {short_repr(old)} -> {short_repr(new)}"
                return f"{name} was replaced ({short_repr(old)} -> {short_repr(new)})"
        for name, old, new in zip(self.names, self.grads, values):
            if new.requires_grad is not old:
                return f"{name}.requires_grad changed {old} -> {new.requires_grad}"
        for name, hooks in zip(self.empty_names, self.empty):
            if len(hooks):
                return f"{name} is no longer empty (a hook was added)"
        return None

    def describe(self) -> str:
        return (f"BatchIdentityMatch({len(self.keys)} module items, {self.n_grads} with requires_grad, "
                f"{len(self.empty)} empty hook dicts)")

    def _key(self) -> tuple:
        return (tuple(map(id, self.containers)), self.keys, tuple(self.ids), tuple(self.grads),
                tuple(map(id, self.empty)))


_dict_getitem = dict.__getitem__
_requires_grad = _operator.attrgetter("requires_grad")


def _release_batch(ref) -> None:
    check = ref()
    if check is not None:
        check.containers, check.keys, check._objects, check.empty = (), (), (), ()
        check.ids = [None]  # matches no list of ids: the check fails from now on


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


def _native_tensor_check(example):
    """torch._C._dynamo.guards.TensorGuards(example).check, or None where this torch does not have it.

    It stores the example's metadata, not the tensor. Used only when it accepts the example itself (a cheap
    self-check against a changed signature)."""
    try:
        from torch._C._dynamo.guards import TensorGuards
        if _any_autocast is None or _any_autocast():
            # autocast lives in the dispatch-key TLS that TensorGuards records: a check made inside an autocast
            # region would fail outside it
            return None
        guard = TensorGuards(example, dynamic_dims_sizes=[list(example.size())],
                             dynamic_dims_strides=[list(example.stride())])
        if not guard.check(example):
            return None
        return guard.check
    except Exception:
        return None


def _format_dims(values: tuple) -> str:
    """`(2, 3)`, with `*` for a dynamic dim: `(*, 3)`."""
    parts = ["*" if item is None else str(item) for item in values]
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


class TensorMatch(Check):
    """The tensor metadata a graph was specialised on: exact type, dtype, device, requires_grad, layout, ndim, and
    sizes and strides except the dims in `dynamic_dims`.

    Only metadata is stored, never the example tensor. `sizes`/`strides` hold None at dynamic dims; `strides` is
    None for layouts without strides. The rendered test reads as few attributes as possible (see Note [Fast tensor
    test]).
    """

    __slots__ = ("tensor_type", "dtype", "device", "requires_grad", "layout", "sizes", "strides", "dynamic_dims",
                 "_native")
    cost = 10

    def __init__(self, example: torch.Tensor, dynamic_dims: frozenset[int] = frozenset()) -> None:
        if not isinstance(example, torch.Tensor):
            raise TypeError(f"TensorMatch needs a tensor, got {type_name(type(example))}; use EqualsMatch or TypeMatch")
        if isinstance(example, torch._subclasses.FakeTensor):
            raise TypeError("TensorMatch needs the real tensor the function was called with, not its fake tensor")
        ndim = example.dim()
        dynamic_dims = frozenset(dynamic_dims)
        if any(type(dim) is not int or not 0 <= dim < ndim for dim in dynamic_dims):
            raise ValueError(f"dynamic_dims must be dims of a {ndim}-d tensor (0..{ndim - 1}), got {sorted(dynamic_dims)}")
        self.tensor_type = type(example)
        self.dtype = example.dtype
        self.device = example.device
        self.requires_grad = example.requires_grad
        self.layout = example.layout
        self.dynamic_dims = dynamic_dims
        self.sizes = tuple(None if dim in dynamic_dims else size for dim, size in enumerate(example.size()))
        self.strides = None
        if self.layout is torch.strided:
            self.strides = tuple(None if dim in dynamic_dims else s for dim, s in enumerate(example.stride()))
        self._native = _native_tensor_check(example) if not dynamic_dims and self.strides is not None else None

    # Note [Fast tensor test]
    # Measured on CPython 3.12.1 / torch 2.14 (ns per term): `type(v) is T` 15, `v.dtype is D` 55 (dtypes are
    # singletons), `v.is_cpu` 45 against `v.device == dev` 73 (a new device object per read), `v.size() == (2, 3)`
    # 147 against `v.shape == ...` 181 and `v.dim()` 102, `v.size(i)` 368 (argument parsing). So: compare whole
    # size()/stride() tuples against literal tuples (co_consts, no allocation); with dynamic dims read size() once
    # into a local and index it. Exact sizes imply ndim.
    def render(self, var: str, ns: Namespace) -> str:
        if self._native is not None:
            # torch's own C++ tensor check: the same facts (exact type, dtype, device, requires_grad, sizes,
            # strides, plus dispatch keys) at a fraction of the attribute reads' cost
            return f"{ns.constant(self._native, 'tensor_check')}({var})"
        terms = [f"type({var}) is {ns.constant(self.tensor_type, 'T')}", f"{var}.dtype is {ns.constant(self.dtype, 'dtype')}"]
        if self.device.type == "cpu":
            terms.append(f"{var}.is_cpu")
        else:
            terms.append(f"{var}.device == {ns.constant(self.device, 'device')}")
        terms.append(f"{var}.requires_grad" if self.requires_grad else f"not {var}.requires_grad")
        if self.layout is not torch.strided:
            terms.append(f"{var}.layout is {ns.constant(self.layout, 'layout')}")
        terms += self._dims_terms(f"{var}.size()", self.sizes, ns, check_ndim=True)
        if self.strides is not None:
            terms += self._dims_terms(f"{var}.stride()", self.strides, ns, check_ndim=False)
        return " and ".join(terms)

    def _dims_terms(self, read: str, expected: tuple, ns: Namespace, check_ndim: bool) -> list[str]:
        if not self.dynamic_dims:
            return [f"{read} == {literal(expected)}"]
        static = [(dim, value) for dim, value in enumerate(expected) if value is not None]
        if not static:
            return [f"len({read}) == {len(expected)}"] if check_ndim else []
        if not check_ndim and len(static) == 1:
            dim, value = static[0]
            return [f"{read}[{dim}] == {value}"]
        local = ns.temp("dims")  # read once, index many times
        if check_ndim:
            terms = [f"len({local} := {read}) == {len(expected)}"]
        else:
            dim, value = static.pop(0)
            terms = [f"({local} := {read})[{dim}] == {value}"]
        terms += [f"{local}[{dim}] == {value}" for dim, value in static]
        return terms

    def explain(self, value: object) -> str | None:
        if type(value) is not self.tensor_type:
            expected, got = distinct_type_names(self.tensor_type, type(value))
            return f"type changed {expected} -> {got}"
        if value.dtype is not self.dtype:
            return f"dtype changed {self.dtype} -> {value.dtype}"
        if value.device != self.device:
            return f"device changed {self.device} -> {value.device}"
        if value.requires_grad != self.requires_grad:
            return f"requires_grad changed {self.requires_grad} -> {value.requires_grad}"
        if value.layout is not self.layout:
            return f"layout changed {self.layout} -> {value.layout}"
        sizes = tuple(value.size())
        if len(sizes) != len(self.sizes):
            return f"ndim changed {len(self.sizes)} -> {len(sizes)}"
        for dim, (want, got) in enumerate(zip(self.sizes, sizes)):
            if want is not None and want != got:
                return f"shape[{dim}] changed {want} -> {got}"
        if self.strides is not None:
            strides = tuple(value.stride())
            if any(want is not None and want != got for want, got in zip(self.strides, strides)):
                return f"stride changed {_format_dims(self.strides)} -> {_format_dims(strides)}"
        return None

    def describe(self) -> str:
        dtype = str(self.dtype).removeprefix("torch.")
        parts = [dtype, str(self.device), f"shape={_format_dims(self.sizes)}"]
        if self.strides is not None:
            parts.append(f"stride={_format_dims(self.strides)}")
        if self.layout is not torch.strided:
            parts.append(f"layout={self.layout}")
        parts.append(f"requires_grad={self.requires_grad}")
        kind = "" if self.tensor_type is torch.Tensor else f"{type_name(self.tensor_type)}, "
        return f"TensorMatch({kind}{', '.join(parts)})"

    def _key(self) -> tuple:
        return (self.tensor_type, self.dtype, self.device, self.requires_grad, self.layout, self.sizes, self.strides)


# The torch global state a graph depends on: (label, reader). Readers are C functions; called with no argument.
def _autocast_reader(device_type: str):
    is_enabled = torch.is_autocast_enabled
    return lambda: is_enabled(device_type)


_STATE_FIELDS = (
    ("grad mode", torch.is_grad_enabled),
    ("default dtype", torch.get_default_dtype),
    ("autocast (cpu)", _autocast_reader("cpu")),
    ("autocast (cuda)", _autocast_reader("cuda")),
    ("deterministic algorithms", torch._C._get_deterministic_algorithms),
)
# One C call that says "no autocast anywhere": cheaper than asking per device (107 ns against 150-280 ns each).
_any_autocast = getattr(torch._C, "_is_any_autocast_enabled", None)


class GlobalStateMatch(Check):
    """A root check: torch global state at construction (grad mode, default dtype, autocast on cpu and cuda with
    its dtype where enabled, deterministic algorithms) must be the same when the guard runs.

    When no autocast was on anywhere, the rendered test asks "is autocast on anywhere" in one call, so turning it
    on for any device (not only cpu or cuda) fails the check; explain() reports that case too. When some autocast
    was on, cpu and cuda are asked one by one.
    """

    __slots__ = ("state", "autocast_dtypes", "no_autocast_anywhere")
    cost = 0

    def __init__(self) -> None:
        self.state = tuple(read() for _, read in _STATE_FIELDS)
        self.autocast_dtypes = tuple(
            torch.get_autocast_dtype(device) if enabled else None
            for device, enabled in (("cpu", self.state[2]), ("cuda", self.state[3]))
        )
        # Taken from the snapshot itself: with autocast on for another device (xpu, mps), "none anywhere" would
        # never hold again and every call would miss.
        self.no_autocast_anywhere = _any_autocast is not None and not _any_autocast()

    def render(self, var: str, ns: Namespace) -> str:
        grad, dtype, cpu, cuda, deterministic = self.state
        terms = [
            f"{ns.constant(torch.is_grad_enabled, 'is_grad_enabled')}() is {grad}",
            f"{ns.constant(torch.get_default_dtype, 'get_default_dtype')}() is {ns.constant(dtype, 'dtype')}",
        ]
        if self.no_autocast_anywhere:
            terms.append(f"{ns.constant(_any_autocast, 'is_any_autocast_enabled')}() is False")
        else:
            is_enabled = ns.constant(torch.is_autocast_enabled, "is_autocast_enabled")
            get_dtype = ns.constant(torch.get_autocast_dtype, "get_autocast_dtype")
            for device, enabled, autocast_dtype in (("cpu", cpu, self.autocast_dtypes[0]),
                                                    ("cuda", cuda, self.autocast_dtypes[1])):
                terms.append(f"{is_enabled}({device!r}) is {enabled}")
                if enabled:
                    terms.append(f"{get_dtype}({device!r}) is {ns.constant(autocast_dtype, 'dtype')}")
        terms.append(f"{ns.constant(torch._C._get_deterministic_algorithms, 'get_deterministic')}() is {deterministic}")
        return " and ".join(terms)

    def explain(self, value: object = None) -> str | None:
        """Reads the current state (`value` is ignored) and names every item that changed."""
        now = tuple(read() for _, read in _STATE_FIELDS)
        changes = [f"{label} changed {old} -> {new}"
                   for (label, _), old, new in zip(_STATE_FIELDS, self.state, now) if old != new]
        for device, index, old in (("cpu", 2, self.autocast_dtypes[0]), ("cuda", 3, self.autocast_dtypes[1])):
            if now[index] and self.state[index] and torch.get_autocast_dtype(device) is not old:
                changes.append(f"autocast dtype ({device}) changed {old} -> {torch.get_autocast_dtype(device)}")
        if not changes and self.no_autocast_anywhere and _any_autocast():
            changes.append("autocast changed False -> True (on a device other than cpu and cuda)")
        return "; ".join(changes) or None

    def describe(self) -> str:
        grad, dtype, cpu, cuda, deterministic = self.state
        parts = [f"grad={grad}", f"default_dtype={str(dtype).removeprefix('torch.')}",
                 f"autocast_cpu={cpu}", f"autocast_cuda={cuda}", f"deterministic={deterministic}"]
        return f"GlobalStateMatch({', '.join(parts)})"

    def _key(self) -> tuple:
        return (self.state, self.autocast_dtypes, self.no_autocast_anywhere)
