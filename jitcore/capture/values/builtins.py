"""Python's builtin functions and operator/math helpers applied to values, registered as call rules.

Each builtin here gets one rule (values/call_rules.py, meaning BUILTIN): its handler says what the builtin means for
values (len -> length, isinstance -> the value's Python type, ...); where the handler has no answer, a pure builtin
whose arguments are all constants runs at capture time.
"""
from __future__ import annotations

import functools
import math
import operator

from jitcore.capture.breaks import GraphBreak, TracedException, raises_attribute_error
from jitcore.capture.side_effects import DELETED
from jitcore.capture.values.base import Value, NOT_CONSTANT, KnownObjectValue
from jitcore.capture.values.call_rules import CallRule, Meaning, KNOWN_CALLABLE, register_callable, call
from jitcore.capture.values.compare import compare_containers
from jitcore.capture.values.constant import ConstantValue, const, fold
from jitcore.capture.values.dunders import attribute
from jitcore.capture.values.partial import PartialValue
from jitcore.capture.values.lazy_iterator import is_lazy, LazyIteratorValue
from jitcore.capture.values.generator import GeneratorValue
from jitcore.capture.values.iter_adapters import (EnumerateValue, FilterValue, MapValue, ReversedListValue, ZipValue,
                                                  next_row)
from jitcore.capture.values.iterator import IteratorValue, LiveIteratorValue, is_iterator
from jitcore.capture.values.objects import ClassValue
from jitcore.capture.values.object_id import object_id, same_object
from jitcore.capture.values.sequence import TupleValue, ListValue
from jitcore.capture.values.mapping import DictValue, mapping_entries, pairs_entries
from jitcore.capture.values.sets import construct_set
from jitcore.capture.values.super_lookup import super_attribute
from jitcore.capture.values.symint import symbolic_call

__all__ = ["BuiltinValue", "apply_binary", "product"]

#: builtins that are pure functions of constant arguments
_PURE = {abs, min, max, sum, len, int, float, bool, str, round, divmod, pow, repr, hash, tuple, list, dict, set,
         frozenset, sorted, any, all, range, slice, chr, ord, hex, oct, bin, format, isinstance, issubclass,
         callable, reversed, enumerate, zip, complex, type, bytes}
_PURE.update(v for v in vars(operator).values() if callable(v) and not isinstance(v, type))
_PURE.update(v for k, v in vars(math).items() if callable(v) and not k.startswith("_"))
_OPERATOR_BINARY = {getattr(operator, n): n for n in (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and_", "or_", "xor", "lshift", "rshift",
    "lt", "le", "eq", "ne", "gt", "ge", "iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "ipow",
    "imatmul", "iand", "ior", "ixor")}
_OPERATOR_UNARY = {operator.neg: "neg", operator.pos: "pos", operator.invert: "invert", abs: "abs",
                   operator.abs: "abs", operator.not_: "not_"}

#: builtins registered with a handler (the rest of _PURE is registered as fold-only at the end of the module)
_HANDLED = set()


def _register(fn, handler) -> None:
    _HANDLED.add(fn)
    register_callable(fn, KNOWN_CALLABLE, CallRule(getattr(fn, "__name__", repr(fn)), Meaning.BUILTIN,
                                                   _builtin_call(handler, fn in _PURE)))


def _builtin_call(handler, pure: bool):
    """The rule's handler: the builtin's own handler, then folding when pure; it always answers."""
    def run(state, fn, args, kwargs):
        if handler is not None:
            result = handler(state, *args, **kwargs)
            if result is not NotImplemented:
                return result
        if pure:
            a = [v.constant() for v in args]
            k = {n: v.constant() for n, v in kwargs.items()}
            if NOT_CONSTANT not in a and NOT_CONSTANT not in k.values():
                return const(fold(state, fn, *a, **k))
        raise GraphBreak("unsupported_call", f"builtin {getattr(fn, '__name__', fn)} on these arguments")
    return run


def _rule(*fns):
    def register(handler):
        for fn in fns:
            _register(fn, handler)
        return handler
    return register


def apply_binary(state, op: str, a: Value, b: Value) -> Value:
    """Python's binary operator protocol over values: a's method, then b's reflected one.

    An in-place operator (`a += b`) asks a's in-place method only; where a's type has none (ints, floats, tuples,
    str, None ...) it is the plain operator, whose reflected side may be b's (`0 += t` is `t.__radd__(0)`, a new
    value). A reflected operator is never an in-place one. Where a's type has an in-place method its kind does not
    model, the operation breaks: the plain operator would lose the mutation."""
    plain = _INPLACE.get(op)
    if plain is not None:
        result = a.binary_op(state, op, b, False)
        if result is not NotImplemented:
            return result
        if getattr(a.python_type(), f"__{op}__", None) is not None:
            raise GraphBreak("unsupported_value", f"operator {op} on a {a.kind_name} and a {b.kind_name}")
        op = plain
    result = a.binary_op(state, op, b, False)
    if result is NotImplemented:
        result = b.binary_op(state, op, a, True)
    if result is NotImplemented and op in _COMPARISONS:
        result = compare_containers(state, op, a, b, apply_binary)
    if result is NotImplemented:
        if op in ("eq", "ne"):
            ca, cb = a.constant(), b.constant()
            if ca is not NOT_CONSTANT and cb is not NOT_CONSTANT:
                # constants compare by value (two equal dicts in another order, a list and a tuple ...)
                return const(fold(state, getattr(operator, op), ca, cb))
            ia, ib = identity(a), identity(b)
            if ia is not None and ib is not None:
                if not (_compares_by_identity(ia) and _compares_by_identity(ib)):
                    raise GraphBreak("unsupported_value", f"`==` between a {type(ia).__name__} and a "
                                                          f"{type(ib).__name__} (their own __eq__ decides)")
                return const((ia is ib) == (op == "eq"))
        raise GraphBreak("unsupported_value", f"operator {op} between {a.kind_name} and {b.kind_name}")
    return result


def _compares_by_identity(obj) -> bool:
    """`obj == other` is `obj is other` (its type keeps object's __eq__ and __ne__)."""
    return type(obj).__eq__ is object.__eq__ and type(obj).__ne__ is object.__ne__


_COMPARISONS = frozenset({"lt", "le", "eq", "ne", "gt", "ge"})
_BINOPS = frozenset({"add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and_", "or_", "xor",
                     "lshift", "rshift"})
#: in-place operator -> the plain operator it falls back to (iadd -> add, ior -> or_)
_INPLACE = {"i" + name.rstrip("_"): name for name in _BINOPS}


def identity(value):
    """The real object a value stands for when jitcore knows it (for `is`), else None."""
    real = value.identity()
    if real is not None:
        return real
    c = value.constant()
    return None if c is NOT_CONSTANT else c


class BuiltinValue(KnownObjectValue):
    __slots__ = ()

    def constant(self):
        return self.fn

    def call(self, state, args, kwargs):
        return call(state, self.fn, args, kwargs)

    def as_fx_arg(self, state):
        return self.fn

    def as_fake(self, state):
        return self.fn

    def reconstruct(self, codegen):
        return codegen.constant(self.fn)


# -- rules ----------------------------------------------------------------------------------------------------

@_rule(len)
def _len(state, obj):
    n = obj.length(state)
    return n if isinstance(n, Value) else const(n)


@_rule(isinstance)
def _isinstance(state, obj, classinfo):
    cls = classinfo.constant()
    if cls is NOT_CONSTANT:
        return NotImplemented
    return const(fold(state, issubclass, obj.python_type(), cls))


@_rule(type)
def _type(state, obj, *rest):
    if rest:
        return NotImplemented
    return ClassValue(obj.python_type())


for _fn, _name in _OPERATOR_BINARY.items():
    _register(_fn, (lambda n: lambda state, a, b: apply_binary(state, n, a, b))(_name))
for _fn, _name in _OPERATOR_UNARY.items():
    if _fn is not abs:  # abs has its own rule below
        _register(_fn, (lambda n: lambda state, a: a.unary_op(state, n) if n != "not_"
                        else const(not a.truth(state)))(_name))
_register(operator.getitem, lambda state, a, b: a.getitem(state, b))
_register(operator.contains, lambda state, a, b: a.contains(state, b))
_register(operator.is_, lambda state, a, b: _is(state, a, b))
_register(operator.is_not, lambda state, a, b: const(not _is(state, a, b).constant()))
_register(operator.truth, lambda state, a: const(a.truth(state)))


def _is(state, a, b):
    if a is b:
        return const(True)
    ia, ib = identity(a), identity(b)
    if ia is None and a.constant() is None:
        ia = None
    if (ia is None and not isinstance(a, ConstantValue)) or (ib is None and not isinstance(b, ConstantValue)):
        if a.python_type() is not b.python_type():
            return const(False)
        return const(same_object(a, b))  # objects made in the call against each other or known ones
    return const(ia is ib)


_register(id, object_id)


@_rule(functools.reduce)
def _reduce(state, fn, iterable, *initial):
    """functools.reduce: the calls made one by one, in order (each may be traced into the graph)."""
    if len(initial) > 1:
        return NotImplemented
    it = _iter(state, iterable)
    acc = initial[0] if initial else it.next_item(state)
    if acc is None:
        raise GraphBreak.raises(TypeError, "reduce() of empty iterable with no initial value")
    while (item := it.next_item(state)) is not None:
        acc = fn.call(state, [acc, item], {})
    return acc


@_rule(functools.partial)
def _partial(state, fn, *args, **kwargs):
    # CPython flattens a partial of a partial (one without a __dict__ of its own): its function, its arguments
    # first, its keywords overridden by the new ones; `.func`, `.args` and `.keywords` show the flattened form
    if isinstance(fn, PartialValue) and fn.flattens():
        return PartialValue(fn.fn, [*fn.args, *args], {**fn.keywords, **kwargs})
    return PartialValue(fn, list(args), dict(kwargs))


@_rule(sorted)
def _sorted(state, iterable, key=None, reverse=None):
    items = iterable.iterate(state)
    descending = False if reverse is None else reverse.constant()
    if type(descending) is not bool:
        return NotImplemented
    keys = [item if key is None or key.constant() is None else key.call(state, [item], {}) for item in items]
    consts = [k.constant() for k in keys]
    if NOT_CONSTANT in consts:
        raise GraphBreak("unsupported_value", "sorted() by keys that are not Python constants")
    order = fold(state, sorted, range(len(items)), key=lambda i: consts[i], reverse=descending)
    return ListValue([items[i] for i in order])


@_rule(setattr)
def _setattr(state, obj, name, value):
    n = name.constant()
    if type(n) is not str:
        return NotImplemented
    obj.setattr(state, n, value)
    return const(None)


@_rule(delattr)
def _delattr(state, obj, name):
    n = name.constant()
    if type(n) is not str:
        return NotImplemented
    obj.delattr(state, n)
    return const(None)


@_rule(object.__setattr__)
def _object_setattr(state, obj, name, value):
    n = name.constant()
    if not obj.has_raw_setattr or type(n) is not str:
        return NotImplemented
    obj.raw_setattr(state, n, value)
    return const(None)


@_rule(object.__getattribute__)
def _object_getattribute(state, obj, name):
    # `object.__getattribute__(self, name)` inside a class's own __getattribute__: the default lookup
    n = name.constant()
    if not obj.has_plain_getattr or type(n) is not str:
        return NotImplemented
    return obj.plain_getattr(state, n)


@_rule(super)
def _super(state, *args):
    if len(args) != 2:
        return NotImplemented
    return SuperValue(args[0], args[1])


class SuperValue(Value):
    """`super(cls, obj)` in its two-argument form."""

    __slots__ = ("cls", "obj")

    def __init__(self, cls, obj):
        super().__init__(None)
        self.cls = cls
        self.obj = obj

    def python_type(self):
        return super

    def getattr(self, state, name):
        return super_attribute(state, self.cls, self.obj, name)


@_rule(getattr)
def _getattr(state, obj, name, *default):
    n = name.constant()
    if type(n) is not str:
        return NotImplemented
    if default:
        if not obj.has_attr(state, n):
            return default[0]
        try:
            return attribute(state, obj, n)
        except (GraphBreak, TracedException) as exc:
            # an attribute hook that raises AttributeError for this name: getattr answers its default
            if raises_attribute_error(exc):
                return default[0]
            raise
    return attribute(state, obj, n)


@_rule(vars)
def _vars(state, obj=None):
    """vars(o) is o.__dict__ (the same dict, so writes through either are seen by both); vars() reads the calling
    frame (Note [Calls that read their frame] in continuation.py)."""
    if obj is None:
        return NotImplemented
    return obj.getattr(state, "__dict__")


@_rule(hasattr)
def _hasattr(state, obj, name):
    n = name.constant()
    if type(n) is not str:
        return NotImplemented
    return const(obj.has_attr(state, n))


@_rule(abs)
def _abs(state, obj):
    result = symbolic_call(state, abs, [obj])
    return obj.unary_op(state, "abs") if result is NotImplemented else result


def _symbolic_rule(fn):
    def handler(state, *args, **kwargs):
        """round / ceil / floor / trunc / int of a float computed from sizes is a size (`math.ceil(n / 4)`), as
        torch keeps it; anything else folds."""
        _number(state, *args)
        return NotImplemented if kwargs else symbolic_call(state, fn, args)
    return handler


for _fn in (round, math.ceil, math.floor, math.trunc):
    _register(_fn, _symbolic_rule(_fn))


@_rule(pow)
def _pow(state, *args, **kwargs):
    """pow(a, b) is `a ** b` (sizes stay symbolic there); the three-argument form folds."""
    return apply_binary(state, "pow", *args) if len(args) == 2 and not kwargs else NotImplemented


@_rule(divmod)
def _divmod(state, a, b):
    """divmod of sizes is their `//` and `%`, each symbolic (Python defines it so for ints)."""
    if (a.is_symbolic_number() or b.is_symbolic_number()) and a.python_type() is int and b.python_type() is int:
        return TupleValue([apply_binary(state, "floordiv", a, b), apply_binary(state, "mod", a, b)])
    return NotImplemented


@_rule(sum)
def _sum(state, iterable, start=None):
    items = iterable.iterate(state)
    total = start if start is not None else const(0)
    for item in items:
        total = apply_binary(state, "add", total, item)
    return total


def product(state, items, start=None) -> Value:
    """The product of `items` by Python's own `*`, from `start` (1 when None): sizes stay symbolic, as in `sum`
    (`math.prod(x.shape)`, `x.shape.numel()`)."""
    total = start if start is not None else const(1)
    for item in items:
        total = apply_binary(state, "mul", total, item)
    return total


@_rule(math.prod)
def _prod(state, iterable, *, start=None):
    """`math.prod` of sizes stays symbolic; of constants it folds as before."""
    items = iterable.iterate(state)
    if not any(item.is_symbolic_number() for item in items):
        return NotImplemented
    return product(state, items, start)


def _extreme(fn):
    def handler(state, *args, **kwargs):
        """min/max over Python constants (also from an iterable: a generator expression, a list), computed now.
        Tensors compare by data, which is a break."""
        values = args[0].iterate(state) if len(args) == 1 else list(args)
        key = kwargs.get("key")
        if key is not None and key.constant() is not None and set(kwargs) <= {"key", "default"}:
            # the key is called once per item, in order; the first item with the extreme key wins, as in Python
            keys = [key.call(state, [v], {}).constant() for v in values]
            if NOT_CONSTANT in keys:
                return NotImplemented
            if not values:
                if "default" in kwargs:
                    return kwargs["default"]
                raise GraphBreak.raises(ValueError, f"{fn.__name__}() iterable argument is empty")
            return values[fold(state, fn, range(len(values)), key=keys.__getitem__)]
        if not kwargs and len(values) > 1 and any(v.is_symbolic_number() for v in values) and all(
                v.python_type() is int for v in values):
            # sizes: torch.sym_max / sym_min, guarding nothing (asking each for its number would pin it)
            best = values[0]
            for item in values[1:]:
                best = symbolic_call(state, fn, [best, item])
                if best is NotImplemented:
                    break
            else:
                return best
        consts = [v.constant() for v in values]
        options = {k: v.constant() for k, v in kwargs.items()}
        if NOT_CONSTANT in consts and not kwargs and values:
            # Python's own loop: the first item, replaced by each later one that compares greater (max) or less
            best = values[0]
            for item in values[1:]:
                if apply_binary(state, "gt" if fn is max else "lt", item, best).truth(state):
                    best = item
            return best
        if NOT_CONSTANT in consts or NOT_CONSTANT in options.values() or "key" in options:
            return NotImplemented
        return const(fold(state, fn, consts, **options))
    return handler


_register(min, _extreme(min))
_register(max, _extreme(max))


@_rule(tuple)
def _tuple(state, iterable=None):
    return TupleValue([] if iterable is None else iterable.iterate(state))


@_rule(list)
def _list(state, iterable=None):
    return ListValue([] if iterable is None else iterable.iterate(state))


@_rule(set)
def _set(state, *args, **kwargs):
    return construct_set(state, set, args, kwargs)


@_rule(frozenset)
def _frozenset(state, *args, **kwargs):
    return construct_set(state, frozenset, args, kwargs)


@_rule(dict)
def _dict(state, *args, **kwargs):
    items = {}
    if len(args) > 1:
        raise GraphBreak.raises(TypeError, f"dict expected at most 1 argument, got {len(args)}")
    if args:
        entries = mapping_entries(state, args[0])
        items.update(pairs_entries(state, args[0]) if entries is None else entries)
    items.update(kwargs)
    return DictValue(items)


@_rule(iter)
def _iter(state, obj):
    if is_iterator(obj):
        return obj  # an iterator is its own iterator
    live = obj.live_iterator(state)
    if live is not None:
        return live
    return IteratorValue(obj.iterate(state))


@_rule(str)
def _str(state, *args, **kwargs):
    """str(value) of a value that is not a constant but knows its text (an exception made while tracing)."""
    if len(args) == 1 and not kwargs and args[0].constant() is NOT_CONSTANT:
        return args[0].text(state, "str")
    return NotImplemented


@_rule(repr)
def _repr(state, *args, **kwargs):
    if len(args) == 1 and not kwargs and args[0].constant() is NOT_CONSTANT:
        return args[0].text(state, "repr")
    return NotImplemented


@_rule(next)
def _next(state, it, *default):
    if isinstance(it, GeneratorValue) and not default:
        return it.resume_or_stop(state)  # its StopIteration carries the return value
    item = it.next_item(state)
    if item is None:
        if default:
            return default[0]
        raise GraphBreak.raises(StopIteration)
    return item


@_rule(enumerate)
def _enumerate(state, iterable, start=None):
    s = 0 if start is None else start.constant()
    if is_lazy(iterable):
        counter = [s]

        def produce(st):
            item = iterable.next_item(st)
            if item is None:
                return None
            counter[0] += 1
            return TupleValue([const(counter[0] - 1), item])
        return LazyIteratorValue(produce, enumerate)
    inner = _live(state, iterable)
    if inner is not None and type(s) is int:
        return EnumerateValue(inner, s)
    return IteratorValue([TupleValue([const(s + i), v]) for i, v in enumerate(iterable.iterate(state))], enumerate)


def _live(state, iterable):
    """The live iterator iter(iterable) is (values/iterator.py), or None where it would be a snapshot."""
    if isinstance(iterable, LiveIteratorValue):
        return iterable
    return None if is_iterator(iterable) else iterable.live_iterator(state)


@_rule(zip)
def _zip(state, *iterables, strict=None, **others):
    strict = False if strict is None else strict.constant()
    if others or not isinstance(strict, bool):
        return NotImplemented
    if any(is_lazy(it) for it in iterables):
        sources = [it if is_lazy(it) else _iter(state, it) for it in iterables]

        def produce(st):
            row = next_row(sources, st, strict)  # like zip: stops at the first exhausted source, in order
            return None if row is None else TupleValue(row)
        return LazyIteratorValue(produce, zip)
    if iterables and (strict or any(_live(state, it) is not None for it in iterables)):
        # strict steps one row at a time too: its ValueError comes when the loop reaches the end, after its rows
        return ZipValue([_iter(state, it) for it in iterables], strict)
    columns = [it.iterate(state) for it in iterables]
    return IteratorValue([TupleValue(list(row)) for row in zip(*columns)], zip)


@_rule(reversed)
def _reversed(state, seq):
    if isinstance(seq, ListValue) and type(seq) is ListValue:
        return ReversedListValue(seq, state)  # reads the list at an index as it changes
    return IteratorValue(list(reversed(seq.iterate(state))), reversed)


@_rule(map)
def _map(state, fn, *iterables):
    if any(is_lazy(it) for it in iterables):
        rows = _zip(state, *iterables)

        def produce(st):
            row = rows.next_item(st)
            return None if row is None else fn.call(st, list(row.items), {})
        return LazyIteratorValue(produce, map)
    if not iterables:
        raise GraphBreak.raises(TypeError, "map() must have at least two arguments.")
    # fn runs at each step, between the loop's statements, over items read then (a list that grows is seen)
    return MapValue(fn, [_iter(state, it) for it in iterables])


@_rule(filter)
def _filter(state, fn, iterable):
    if is_lazy(iterable):

        def produce(st):
            while True:
                item = iterable.next_item(st)
                if item is None:
                    return None
                test = item if fn.constant() is None else fn.call(st, [item], {})
                if test.truth(st):
                    return item
        return LazyIteratorValue(produce, filter)
    return FilterValue(fn, _iter(state, iterable))


def _truth_reduce(want_any):
    def handler(state, iterable):
        if is_lazy(iterable):
            # stop at the deciding item, as Python does: a generator's later items (and effects) never happen
            while (item := iterable.next_item(state)) is not None:
                if item.truth(state) == want_any:
                    return const(want_any)
            return const(not want_any)
        for item in iterable.iterate(state):
            if item.truth(state) == want_any:
                return const(want_any)
        return const(not want_any)
    return handler


_register(any, _truth_reduce(True))
_register(all, _truth_reduce(False))


@_rule(complex)
def _number(state, *args, **kwargs):
    for a in args:
        if a.is_tensor():
            raise GraphBreak("data_dependent", "converting a tensor to a Python number")
    return NotImplemented


@_rule(int)
def _int(state, *args, **kwargs):
    """int(n) of a symbolic int is n itself (a size stays symbolic); anything else folds."""
    _number(state, *args, **kwargs)
    if len(args) == 1 and not kwargs and args[0].is_symbolic_number():
        return args[0] if args[0].python_type() is int else symbolic_call(state, int, args)
    return NotImplemented


@_rule(float)
def _float(state, *args, **kwargs):
    """float(n) of a size stays symbolic (values/symint.py); of a constant it folds."""
    _number(state, *args, **kwargs)
    return NotImplemented if kwargs else symbolic_call(state, float, args)


@_rule(math.sqrt)
def _sqrt(state, *args):
    return symbolic_call(state, math.sqrt, args)


@_rule(bool)
def _bool(state, *args, **kwargs):
    _number(state, *args, **kwargs)
    # bool(v) is v's truth, as an `if` tests it; a size's truth is a relation (`n != 0`), asking for its
    # constant would pin the size
    if len(args) == 1 and not kwargs and (args[0].is_symbolic_number() or args[0].constant() is NOT_CONSTANT):
        return const(args[0].truth(state))
    return NotImplemented


@_rule(callable)
def _callable(state, obj):
    # a constant answers for itself (callable(None) is False); otherwise the object, else its type's __call__
    c = obj.constant()
    if c is not NOT_CONSTANT:
        return const(callable(c))
    real = identity(obj)
    return const(callable(real) if real is not None else hasattr(obj.python_type(), "__call__"))


@_rule(print)
def _print(state, *args, **kwargs):
    raise GraphBreak("print_or_io", "print()", untouched=print)


for _fn in _PURE - _HANDLED:
    _register(_fn, None)


def _fold_classmethod(state, fn, args, kwargs):
    """A pure C classmethod of a constant type (int.from_bytes, float.fromhex) on constants runs now."""
    a = [v.constant() for v in args]
    k = {n: v.constant() for n, v in kwargs.items()}
    if NOT_CONSTANT in a or NOT_CONSTANT in k.values() or fn.__self__ not in (int, bool, float, bytes):
        return NotImplemented
    return const(fold(state, fn, *a, **k))


for _tp, _name in ((int, "from_bytes"), (float, "fromhex"), (bytes, "fromhex")):
    register_callable(vars(_tp)[_name], KNOWN_CALLABLE, CallRule(f"{_tp.__name__}.{_name}", Meaning.BUILTIN,
                                                                 _fold_classmethod))
