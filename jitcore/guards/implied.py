"""What the checks of a guard tree already imply about the values at its nodes: which object a passing guard
reads there (its identity) and its exact type. Compile uses it to leave out tests other checks already make.

Imports the standard library and guards.checks, guards.torch_checks only; never jitcore or bytecode.
"""
from __future__ import annotations

import types

from jitcore.guards.checks import EqualsMatch, IdMatch, TypeMatch
from jitcore.guards.torch_checks import TensorMatch

__all__ = ["UNKNOWN", "Implied"]

#: what `Implied.identity` answers for a node whose object the checks do not fix
UNKNOWN = object()

_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE


# Note [Facts implied by other checks]
# A guard function is a conjunction: a fact that follows from other checks of the same function need not be tested
# again. Identity: a node whose value has an IdMatch is that object on every passing call, and so is a value read
# from it through steps that cannot change: a function's `__closure__` (a read-only attribute) and an item of a
# tuple (immutable). A "held" root is an object the guard holds itself. Exact type: a TypeMatch, TensorMatch or
# EqualsMatch on the node fixes it, a cell of the frame's closure is a cell; so does the identity of an object whose class cannot be reassigned (CPython
# allows `obj.__class__ = ...` only between heap types or between module types: a function, a cell, a tuple or a
# dict keeps its type for life). Two objects of different exact types are different objects, and two objects
# each fixed by identity are as different as they were when compiled.
# Why it matters: the checks that compare objects (DistinctObjects) otherwise read and compare every closure cell
# of every decorator an inlined method went through (~50 values in a Hugging Face model), and `id()`, which they
# used for large groups, is an audited builtin: once any audit hook is installed (the filelock package installs
# one when imported, and torch.compile, Inductor and transformers import it) each call costs a Python call
# (~0.65 us against ~0.06 us).


class Implied:
    """The facts a passing guard implies at each node of one tree, computed once per node."""

    def __init__(self) -> None:
        self._identity: dict = {}

    def identity(self, node) -> object:
        """The object a passing guard reads at `node`, or UNKNOWN."""
        found = self._identity.get(node, self)
        if found is self:
            found = self._identity[node] = self._find_identity(node)
        return found

    def _find_identity(self, node) -> object:
        kind, key = node.step
        if kind == "held":
            return key.obj
        for check, _, _ in node.checks:
            if type(check) is IdMatch:
                target = check.target
                # a dead target fails its IdMatch on every call; None is not an object worth tracking
                return UNKNOWN if target is None else target
        parent = node.parent
        if parent is None or parent.parent is None:
            return UNKNOWN
        base = self.identity(parent)
        if base is UNKNOWN:
            return UNKNOWN
        if kind == "attr" and key == "__closure__" and type(base) is types.FunctionType:
            return base.__closure__
        if kind == "item" and type(base) is tuple and type(key) is int and -len(base) <= key < len(base):
            return base[key]
        return UNKNOWN

    def exact_type(self, node) -> type | None:
        """The exact type a passing guard's value at `node` has, or None when the checks do not fix it."""
        for check, _, _ in node.checks:
            if type(check) is TypeMatch:
                return check.tp
            if type(check) is TensorMatch:
                return check.tensor_type
            if type(check) is EqualsMatch:
                return type(check.value)
        if node.step[0] == "cellobj":
            return types.CellType  # an item of the frame's closure, which holds cells only
        obj = self.identity(node)
        if obj is UNKNOWN:
            return None
        kind = type(obj)
        if kind.__flags__ & _HEAP_TYPE or issubclass(kind, types.ModuleType):
            return None  # its __class__ may be reassigned
        return kind

    def may_be_same(self, first, second) -> bool:
        """Can the values at the two nodes be one object on a call the other checks pass?"""
        a, b = self.identity(first), self.identity(second)
        if a is not UNKNOWN and b is not UNKNOWN:
            return a is b
        ta, tb = self.exact_type(first), self.exact_type(second)
        return ta is None or tb is None or ta is tb
