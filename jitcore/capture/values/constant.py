"""Python constants: numbers, strings, None, Ellipsis, dtypes, devices, torch.Size and friends.

A constant folds every operation at capture time; its source (if any) is guarded by equality when it is wrapped.
"""
from __future__ import annotations

import inspect
import re
import operator
import types
import typing

import torch

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.base import Value, NOT_CONSTANT
from jitcore.capture.values.iterator import is_iterator

__all__ = ["ConstantValue", "BoundMethodValue", "CONSTANT_TYPES", "ANNOTATION_TYPES", "const", "fold", "register_container"]

#: exact types whose instances are immutable and compared by value
CONSTANT_TYPES = (int, float, bool, complex, str, bytes, type(None), type(Ellipsis), type(NotImplemented),
                  torch.dtype, torch.device, torch.layout, torch.memory_format, torch.Size, range, slice)

#: type annotations (`int | None`, `list[int]`, `Optional[int]`, `Literal[1]`): immutable, compared by value; a
#: dataclass validator (transformers' strict configs) reads their `__args__` / `__origin__` while setting a field.
#: The bare aliases (`List`, `Tuple`, `Callable`) too: subscripted at run time (`torch.jit.annotate(List[Tensor],
#: [])`) they fold to an annotation, never tracing typing's cache
ANNOTATION_TYPES = tuple({type(t) for t in (int | None, list[int], typing.Optional[int], typing.List[int],
                                             typing.Literal[1], typing.Callable[[int], int],
                                             typing.Annotated[int, 0], typing.Union, typing.Literal,
                                             typing.List, typing.Tuple, typing.Callable)})

#: pure methods of constant types that may run at capture time
_PURE_METHODS = {
    str: {"format", "join", "upper", "lower", "strip", "lstrip", "rstrip", "split", "rsplit", "replace",
          "startswith", "endswith", "find", "rfind", "index", "count", "isdigit", "isalpha", "title", "capitalize",
          "partition", "rpartition", "zfill", "center", "ljust", "rjust", "casefold", "isupper", "islower",
          "removeprefix", "removesuffix", "splitlines", "encode", "__format__"},
    int: {"bit_length", "to_bytes", "conjugate", "__index__", "__format__", "is_integer"},
    float: {"is_integer", "hex", "conjugate", "as_integer_ratio", "__format__"},
    torch.Size: {"numel", "index", "count", "__len__"},
    torch.dtype: {"to_real", "to_complex"},
    range: {"index", "count"},
    slice: {"indices"},
    types.MappingProxyType: {"keys", "values", "items", "get", "__len__", "__contains__", "__getitem__"},
    inspect.Signature: {"replace"},
    # compiled patterns and their matches are immutable: matching a constant string is a pure function of both
    re.Pattern: {"search", "match", "fullmatch", "findall", "split", "sub", "subn"},
    re.Match: {"group", "groups", "groupdict", "start", "end", "span", "__getitem__", "expand"},
    inspect.Parameter: {"replace"},
}


#: argument types an exception raised while folding may carry into traced handlers (`e.args`, `str(e)`)
_PLAIN = frozenset({str, int, float, bool, type(None), bytes})


def fold(state, fn, *args, **kwargs):
    """Run a pure function on constants; an exception it raises is the user's, so the frame must run natively."""
    try:
        return fn(*args, **kwargs)
    except Exception as exc:
        known = exc.args if all(type(a) in _PLAIN for a in exc.args) else None
        raise GraphBreak.raises(type(exc), str(exc), args=known) from None


class ConstantValue(Value):
    __slots__ = ("value",)
    builtin_dunders = True

    def __init__(self, value, source=None):
        super().__init__(source)
        self.value = value

    def python_type(self):
        return type(self.value)

    def constant(self):
        return self.value

    def truth(self, state):
        return bool(self.value)

    def length(self, state):
        return fold(state, len, self.value)

    def iterate(self, state):
        return [const(item) for item in fold(state, list, self.value)]

    def getitem(self, state, key):
        k = key.constant()
        if k is NOT_CONSTANT:
            if key.is_tensor():
                raise GraphBreak("data_dependent", "indexing a Python sequence with a tensor")
            return super().getitem(state, key)
        return const(fold(state, operator.getitem, self.value, k))

    def getattr(self, state, name):
        attr = fold(state, getattr, self.value, name)
        if callable(attr) and not isinstance(attr, type) and type(attr) not in ANNOTATION_TYPES:
            if name in _PURE_METHODS.get(type(self.value), ()):
                return BoundMethodValue(self, name)
            raise GraphBreak("unsupported_call", f"method {type(self.value).__name__}.{name}")
        return const(attr)

    def binary_op(self, state, op, other, reflected):
        if other.is_symbolic_number():
            return NotImplemented  # the symbolic side keeps `2 * n` symbolic (reading it would specialise it)
        ov = other.constant()
        if ov is NOT_CONSTANT:
            return NotImplemented
        fn = getattr(operator, op)
        return const(fold(state, fn, ov, self.value) if reflected else fold(state, fn, self.value, ov))

    def unary_op(self, state, op):
        return const(fold(state, getattr(operator, op), self.value))

    def contains(self, state, item):
        iv = item.constant()
        if iv is NOT_CONSTANT:
            return super().contains(state, item)
        return const(fold(state, operator.contains, self.value, iv))

    def as_fx_arg(self, state):
        return self.value

    def as_fake(self, state):
        return self.value

    def reconstruct(self, codegen):
        return codegen.constant(self.value)

    def __repr__(self):
        return f"Const({self.value!r})"


class BoundMethodValue(Value):
    """`obj.name` for a pure method of a constant: run at capture time on constant arguments."""

    __slots__ = ("obj", "name")

    def __init__(self, obj, name):
        super().__init__(None)
        self.obj = obj
        self.name = name

    def call(self, state, args, kwargs):
        target = self.obj.constant()
        # an iterator argument (`"-".join(str(s) for s in shape)`) is consumed here, as the method would
        args = [const(tuple(item.constant() for item in v.iterate(state))) if is_iterator(v) else v for v in args]
        if self.name == "format" and type(target) is str and not all(
                not v.is_symbolic_number() and v.constant() is not NOT_CONSTANT for v in [*args, *kwargs.values()]):
            # a field may read through a value (`{t.shape[0]}`) or hold a symbolic number (left unpinned):
            # formatted field by field (that module builds on this one)
            from jitcore.capture.values.string_format import format_template  # lazy: string_format imports this module
            return format_template(state, target, args, kwargs)
        a = [v.constant() for v in args]
        k = {n: v.constant() for n, v in kwargs.items()}
        if target is NOT_CONSTANT or NOT_CONSTANT in a or NOT_CONSTANT in k.values():
            raise GraphBreak("unsupported_call", f"method {self.name} on non-constant arguments")
        return const(fold(state, getattr(target, self.name), *a, **k))

    def children(self):
        return [self.obj]

    def reconstruct(self, codegen):
        # a method of a constant (`"{}".format` on the stack at a break) is read again from the constant
        return f"{codegen.load(self.obj)}.{self.name}"


#: exact container type -> make(container of constants) -> its value; registered by the container kinds' modules
#: (sequence, mapping, sets), which build on this one
_CONTAINERS: dict = {}


def register_container(tp: type, make) -> None:
    _CONTAINERS[tp] = make


def const(value) -> Value:
    """Wrap a value computed at capture time (no source); containers of constants stay containers."""
    tp = type(value)
    make = _CONTAINERS.get(tp)
    if make is None and isinstance(value, tuple) and tp is not torch.Size:
        # namedtuples and torch.return_types structseqs keep their type so attribute access and rebuild work
        make = _CONTAINERS[tuple]
    return ConstantValue(value) if make is None else make(value)
