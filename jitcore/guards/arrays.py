"""NumPy arrays passed to a compiled function: the check that one may be read as a tensor, and the read itself.

An array reaches a graph as `torch.from_numpy(array)`, which shares its memory (writes made by the graph reach the
user's array, as in eager). The guard tree reads that tensor with the child step ("from_numpy", 0) and checks it
with TensorMatch like any tensor; `ArrayMatch` on the array itself runs first and keeps that read silent and
exact (an exact ndarray, the same dtype object, writeable and aligned). Imports torch and guards.checks only;
numpy itself is never imported here (the array type is handed in).
Entry points: ArrayMatch, array_tensor.
"""

from __future__ import annotations

import torch

from jitcore.guards.checks import Check
from jitcore.guards.render import Namespace, type_name

__all__ = ["ArrayMatch", "array_tensor"]

#: the guard tree's "from_numpy" step and the entry's reload of an array's tensor
array_tensor = torch.from_numpy


class ArrayMatch(Check):
    """`type(v) is ndarray and v.dtype is dtype` and the array is writeable and aligned: then `torch.from_numpy(v)`
    neither warns (a read-only array) nor fails, and a graph that writes it writes the user's memory. The dtype is
    compared by identity: NumPy's built-in dtypes are singletons, and a byte-swapped or annotated dtype is another
    object (and another type of scalar)."""

    __slots__ = ("array_type", "dtype")
    cost = 3

    def __init__(self, array_type: type, dtype: object) -> None:
        self.array_type = array_type
        self.dtype = dtype

    def render(self, var: str, ns: Namespace) -> str:
        array_type = ns.constant(self.array_type, "ndarray")
        dtype = ns.constant(self.dtype, "dtype")
        return (f"(type({var}) is {array_type} and {var}.dtype is {dtype} and {var}.flags.writeable "
                f"and {var}.flags.aligned)")

    def explain(self, value: object) -> str | None:
        if type(value) is not self.array_type:
            return f"expected an exact {type_name(self.array_type)}, got {type_name(type(value))}"
        if value.dtype is not self.dtype:
            return f"dtype changed {self.dtype} -> {value.dtype}"
        if not value.flags.writeable:
            return "the array is read-only"
        if not value.flags.aligned:
            return "the array is not aligned"
        return None

    def describe(self) -> str:
        return f"ArrayMatch({self.dtype})"

    def _key(self) -> tuple:
        return (self.array_type, self.dtype)
