"""`id(obj)` while tracing: a number that differs on every call for objects made in it, so it is never a constant.

Code compares ids to ask whether two names hold one object (`id(a) == id(b)`), which is `a is b`; that is answered
as `is` answers it. Any other use of the number (printing it, a dict keyed by it, arithmetic) is a graph break.
"""
from __future__ import annotations

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.base import Value
from jitcore.capture.values.constant import const

__all__ = ["IdNumberValue"]


class IdNumberValue(Value):
    """id(of); `same(state, a, b)` is the `is` test (values/builtins.py)."""

    __slots__ = ("of", "same")

    def __init__(self, of, same):
        super().__init__(None)
        self.of = of
        self.same = same

    def python_type(self):
        return int

    def children(self):
        return [self.of]

    def binary_op(self, state, op, other, reflected):
        if op in ("eq", "ne") and isinstance(other, IdNumberValue):
            same = self.same(state, self.of, other.of).constant()
            return const(same == (op == "eq"))
        raise GraphBreak("unsupported_value", "the number id() returns (it differs from call to call)")

    def reconstruct(self, codegen):
        return f"id({codegen.load(self.of)})"
