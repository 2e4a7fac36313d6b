"""Explicit dunder calls on builtin values: `lst.__getitem__(2)`, `t.__mul__(3)`, `(3).__add__(4)`,
`list.__iadd__(lst, other)`, mapped onto the operator or protocol question each one implements.

A dunder of list, tuple, dict, set, frozenset, str, bytes, int, float, bool or complex that a value's type did not
override is that builtin's slot, so calling it means what the operator means, with one difference Python keeps: a
binary slot answers NotImplemented (it does not try the reflected side) when the operand's type is not one it
accepts (`(1).__eq__(1.0)`, `[1].__add__((2,))`). Both forms go through `call_dunder`: the bound method
(`attribute()`, asked by LOAD_ATTR and getattr() for a kind that sets `Value.builtin_dunders`) and the unbound
descriptor (`list.__getitem__`: a call rule per descriptor, registered here). The other unbound methods of the
builtin containers (`dict.copy(d)`, `list.append(lst, x)`) are the method called on the receiver.
"""
from __future__ import annotations

import operator
import types

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.base import Value, KnownObjectValue
from jitcore.capture.values.call_rules import CallRule, Meaning, KNOWN_CALLABLE, register_callable, call
from jitcore.capture.values.constant import const
from jitcore.capture.values.objects import ClassValue

__all__ = ["attribute", "call_dunder", "DunderMethodValue"]

_ARITHMETIC = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "lshift", "rshift")
_BITWISE = {"and": "and_", "or": "or_", "xor": "xor"}
#: dunder -> (operator function, reflected)
_BINARY = {f"__{n}__": (getattr(operator, n), False) for n in _ARITHMETIC}
_BINARY.update({f"__r{n}__": (getattr(operator, n), True) for n in _ARITHMETIC})
_BINARY.update({f"__{n}__": (getattr(operator, fn), False) for n, fn in _BITWISE.items()})
_BINARY.update({f"__r{n}__": (getattr(operator, fn), True) for n, fn in _BITWISE.items()})
_BINARY.update({f"__i{n}__": (getattr(operator, f"i{n}"), False) for n in _ARITHMETIC})
_BINARY.update({f"__i{n}__": (getattr(operator, f"i{n}"), False) for n in _BITWISE})
_BINARY.update({f"__{n}__": (getattr(operator, n), False) for n in ("lt", "le", "eq", "ne", "gt", "ge")})
_UNARY = {"__neg__": operator.neg, "__pos__": operator.pos, "__abs__": abs, "__invert__": operator.invert,
          "__len__": len, "__iter__": iter, "__hash__": hash, "__bool__": bool, "__int__": int,
          "__float__": float, "__index__": operator.index, "__str__": str, "__repr__": repr,
          "__reversed__": reversed}
#: dunder -> the protocol question it asks of the receiver
_ITEMS = {"__getitem__": operator.getitem, "__contains__": operator.contains}
_MUTATORS = frozenset({"__setitem__", "__delitem__"})
#: Py_TPFLAGS_HEAPTYPE: a class made by a `class` statement (its instances' __class__ can be reassigned)
_HEAPTYPE = 1 << 9
_NAMES = frozenset(_BINARY) | frozenset(_UNARY) | frozenset(_ITEMS) | _MUTATORS

#: builtin type -> the operand types its binary slots accept (anything else: NotImplemented)
_OPERANDS = {int: (int,), bool: (int,), float: (int, float), complex: (int, float, complex), str: (str,),
             bytes: (bytes,), list: (list,), tuple: (tuple,), dict: (dict,), set: (set, frozenset),
             frozenset: (set, frozenset)}
#: sequence slots (sq_concat, sq_repeat, sq_inplace_*): they never answer NotImplemented
_SEQUENCE_SLOTS = frozenset({operator.add, operator.mul, operator.iadd, operator.imul})


def _builtin_base(tp: type, name: str):
    """The builtin type whose slot `tp.name` is (tp's own or inherited unchanged), or None."""
    for base in tp.__mro__:
        if base in _OPERANDS:
            slot = getattr(base, name, None)
            return base if slot is not None and getattr(tp, name, None) is slot else None
    return None


def _accepts(base: type, fn, other: Value) -> bool:
    """Whether base's slot for fn takes an operand of other's type: a number or comparison slot answers
    NotImplemented for any other (`(1).__eq__(1.0)`, `[1].__eq__((1,))`)."""
    if base in (list, tuple, str, bytes) and fn in _SEQUENCE_SLOTS:
        return True  # sq_concat / sq_repeat raise TypeError themselves; list.__iadd__ extends by any iterable
    if base is dict and fn is operator.ior:
        return True  # dict.__ior__ updates from any mapping or iterable of pairs
    if base is str and fn is operator.mod:
        return True  # printf-style formatting takes anything
    return issubclass(other.python_type(), _OPERANDS[base])


def call_dunder(state, base: type, name: str, receiver: Value, args: list, kwargs: dict) -> Value:
    """`receiver.name(*args)` where name is builtin `base`'s slot: the operator or protocol it implements."""
    if kwargs:
        raise GraphBreak.raises(TypeError, f"{base.__name__}.{name}() takes no keyword arguments")
    if name in _BINARY:
        fn, reflected = _BINARY[name]
        _arity(base, name, args, 1)
        if not _accepts(base, fn, args[0]):
            return const(NotImplemented)
        return call(state, fn, [args[0], receiver] if reflected else [receiver, args[0]], {})
    if name in _ITEMS:
        _arity(base, name, args, 1)
        return call(state, _ITEMS[name], [receiver, args[0]], {})
    if name == "__setitem__":
        _arity(base, name, args, 2)
        receiver.setitem(state, args[0], args[1])
        return const(None)
    if name == "__delitem__":
        _arity(base, name, args, 1)
        receiver.delitem(state, args[0])
        return const(None)
    _arity(base, name, args, 0)
    return call(state, _UNARY[name], [receiver], {})


def _arity(base, name, args, wanted):
    if len(args) != wanted:
        raise GraphBreak.raises(TypeError, f"expected {wanted} argument(s) for {base.__name__}.{name}, "
                                           f"got {len(args)}")


class DunderMethodValue(Value):
    """`value.__name__` bound to a builtin value whose type's slot it is."""

    __slots__ = ("receiver", "base", "name")

    def __init__(self, receiver, base, name):
        super().__init__(None)
        self.receiver = receiver
        self.base = base
        self.name = name

    def python_type(self):
        return type(getattr(self.base(), self.name))

    def call(self, state, args, kwargs):
        return call_dunder(state, self.base, self.name, self.receiver, args, kwargs)

    def children(self):
        return [self.receiver]

    def reconstruct(self, codegen):
        return f"{codegen.load(self.receiver)}.{self.name}"


def attribute(state, owner: Value, name: str) -> Value:
    """`owner.name`: a builtin dunder slot when owner's kind declares builtin dunders, else owner.getattr()."""
    if owner.builtin_dunders and name in _NAMES:
        base = _builtin_base(owner.python_type(), name)
        if base is not None:
            return DunderMethodValue(owner, base, name)
    if name == "__class__" and isinstance(owner, KnownObjectValue) and _fixed_class(owner.python_type()):
        # a function's or builtin's class: a static type, whose instances' __class__ cannot be reassigned
        return ClassValue(owner.python_type())
    return owner.getattr(state, name)


def _fixed_class(tp: type) -> bool:
    return not tp.__flags__ & _HEAPTYPE


def _unbound(base, name):
    def handler(state, fn, args, kwargs):
        if not args or not owner_is(args[0], base):
            return NotImplemented
        return call_dunder(state, base, name, args[0], list(args[1:]), kwargs)
    return handler


def owner_is(value: Value, base: type) -> bool:
    return value.builtin_dunders and issubclass(value.python_type(), base)


for _base in _OPERANDS:
    for _name in sorted(_NAMES):
        _slot = vars(_base).get(_name)
        if _slot is not None:
            register_callable(_slot, KNOWN_CALLABLE,
                              CallRule(f"{_base.__name__}.{_name}", Meaning.BUILTIN, _unbound(_base, _name)))


# -- unbound methods of the builtin containers: `dict.copy(d)`, `list.append(lst, x)` (copy.copy's dispatch
# table holds them) mean the method called on the receiver, when the receiver is one of that type
_CONTAINERS = (list, tuple, dict, set, frozenset)


def _unbound_method(base, name):
    def handler(state, fn, args, kwargs):
        if not args:
            return NotImplemented
        receiver, rest = args[0], list(args[1:])
        tp = receiver.python_type()
        if tp is base:
            return receiver.call_method(state, name, rest, kwargs)
        if issubclass(tp, base) and receiver.has_builtin_methods:
            return receiver.builtin_call_method(state, name, rest, kwargs)
        return NotImplemented
    return handler


for _base in _CONTAINERS:
    for _name, _method in vars(_base).items():
        if type(_method) is types.MethodDescriptorType and not _name.startswith("__"):
            register_callable(_method, KNOWN_CALLABLE, CallRule(f"{_base.__name__}.{_name}", Meaning.BUILTIN,
                                                                _unbound_method(_base, _name)))
