"""guards: the guard tree that decides whether a cached graph may be reused for a call.

Owns access paths (plain step tuples), the checks on the values they reach, and their compilation into one
generated Python function. Imports the standard library and torch only; never jitcore or bytecode.
Entry points: GuardTree, the *Match checks, compile_tree -> GuardFunction (`.check`, `.failures`).
"""

from jitcore.guards.checks import (
    ABSENT,
    Check,
    DictKeysMatch,
    DistinctObjects,
    EqualsMatch,
    FunctionMatch,
    CodeMatch,
    HasAttrMatch,
    IdMatch,
    InstanceDictAbsent,
    IntPredicateMatch,
    LengthMatch,
    MinLengthMatch,
    ReduceMatch,
    SetMatch,
    NamespaceEntryMatch,
    NoneMatch,
    NotNoneMatch,
    ProbeMatch,
    Relation,
    SameObject,
    TypeMatch,
    immutable_constant,
)
from jitcore.guards.torch_checks import (BatchIdentityMatch, GlobalStateMatch, StorageOffsetMatch, UnitStrideMatch,
                                         StorageOverlapMatch, TensorMatch)
from jitcore.guards.relations import ShapeRelationMatch
from jitcore.guards.arrays import ArrayMatch, MemoryDisjointMatch
from jitcore.guards.compile import GuardFunction, compile_tree
from jitcore.guards.render import Namespace
from jitcore.guards.tree import GuardNode, GuardTree, count_checks

__all__ = [
    "ABSENT",
    "ArrayMatch",
    "MemoryDisjointMatch",
    "BatchIdentityMatch",
    "Check",
    "DictKeysMatch",
    "DistinctObjects",
    "EqualsMatch",
    "immutable_constant",
    "FunctionMatch",
    "CodeMatch",
    "GlobalStateMatch",
    "GuardFunction",
    "GuardNode",
    "GuardTree",
    "HasAttrMatch",
    "IdMatch",
    "InstanceDictAbsent",
    "IntPredicateMatch",
    "LengthMatch",
    "MinLengthMatch",
    "ReduceMatch",
    "SetMatch",
    "Namespace",
    "NamespaceEntryMatch",
    "NoneMatch",
    "NotNoneMatch",
    "ProbeMatch",
    "Relation",
    "SameObject",
    "ShapeRelationMatch",
    "StorageOffsetMatch",
    "UnitStrideMatch",
    "StorageOverlapMatch",
    "TensorMatch",
    "TypeMatch",
    "compile_tree",
    "count_checks",
]
