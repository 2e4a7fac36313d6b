"""NumPy arrays passed to a compiled function: the check that one may be read as a tensor, and the read itself.

An array reaches a graph as `torch.from_numpy(array)`, which shares its memory (writes made by the graph reach the
user's array, as in eager). The guard tree reads that tensor with the child step ("from_numpy", 0) and checks it
with TensorMatch like any tensor; `ArrayMatch` on the array itself runs first and keeps that read silent and
exact (an exact ndarray, the same dtype object, writeable and aligned). Imports torch and guards.checks only;
numpy itself is never imported here (the array type is handed in).
Entry points: ArrayMatch, MemoryDisjointMatch (a relation: an array and the other inputs), array_tensor.
"""

from __future__ import annotations

import torch

from jitcore.guards.checks import Check, Relation
from jitcore.guards.render import Namespace, type_name

__all__ = ["ArrayMatch", "MemoryDisjointMatch", "array_tensor", "memory_range", "overlaps"]

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


def memory_range(tensor) -> tuple:
    """The bytes of memory a tensor's storage spans: (first address, one past the last)."""
    storage = tensor.untyped_storage()
    return storage.data_ptr(), storage.data_ptr() + storage.nbytes()


def overlaps(a: tuple, b: tuple) -> bool:
    return a[0] < b[1] and b[0] < a[1] and a[0] != a[1] and b[0] != b[1]


class MemoryDisjointMatch(Relation):
    """The tensor read from an array passed in shares no memory with the other tensor inputs. Each array is read
    through a storage of its own (`torch.from_numpy`), so a backend that functionalizes a graph (aot_eager,
    inductor) cannot see that it aliases another input: a graph that writes an input is compiled for disjoint
    memory, and this check keeps it so (capture breaks where they overlapped when compiled)."""

    __slots__ = ()
    cost = 45

    def holds_for(self, values) -> bool:
        own, *others = values
        mine = memory_range(own)
        return not any(overlaps(mine, memory_range(other)) for other in others)

    def render_relation(self, var: str, others: list, ns: Namespace) -> str:
        return f"{ns.constant(self.holds_for, 'disjoint')}(({', '.join([var, *others])},))"

    def explain(self, value: object) -> str | None:
        if self.holds_for(value):
            return None
        return f"shares memory with {', '.join(self.other_names)} through another storage (an array over their data)"

    def describe(self) -> str:
        return f"MemoryDisjointMatch(with {', '.join(self.other_names)})"
