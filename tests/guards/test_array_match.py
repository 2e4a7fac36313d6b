"""ArrayMatch and the ("from_numpy", 0) step: an ndarray passed in is read as the tensor sharing its memory, only
once the array itself passed (an exact ndarray with the same dtype, writeable and aligned)."""

from __future__ import annotations

import builtins

import numpy as np
import torch

from jitcore.guards import ArrayMatch, GuardTree, MemoryDisjointMatch, TensorMatch, compile_tree
from tests.guards.helpers import run


def _guard(example):
    tree = GuardTree()
    tree.add((("local", "a"),), ArrayMatch(np.ndarray, example.dtype), "a")
    tree.add((("local", "a"), ("from_numpy", 0)), TensorMatch(torch.from_numpy(example)), "a")
    return compile_tree(tree, ["a"], {}, vars(builtins))


def test_same_dtype_shape_and_strides_pass_and_others_fail():
    guard = _guard(np.zeros((2, 3)))
    assert guard.check(np.ones((2, 3)), None)
    assert not guard.check(np.ones((2, 3), dtype=np.float32), None)
    assert not guard.check(np.ones((3, 2)), None)
    assert not guard.check(np.ones((3, 2)).T, None)
    assert "from_numpy" in guard.source


def test_a_read_only_array_or_another_type_fails_without_reading_its_tensor():
    guard = _guard(np.zeros(3))
    frozen = np.zeros(3)
    frozen.flags.writeable = False
    assert not guard.check(frozen, None)
    assert not guard.check([0.0, 0.0, 0.0], None)
    assert not guard.check(np.ma.zeros(3), None)
    assert not guard.check(np.zeros(3).astype(">f8"), None)


def test_failures_name_what_changed():
    frozen = np.zeros(3)
    frozen.flags.writeable = False
    assert run(ArrayMatch(np.ndarray, np.dtype("float64")), np.zeros(3)) == (True, [])
    assert run(ArrayMatch(np.ndarray, np.dtype("float64")), frozen) == (False, ["v: the array is read-only"])
    assert run(ArrayMatch(np.ndarray, np.dtype("float64")), np.zeros(3, np.float32)) == (
        False, ["v: dtype changed float64 -> float32"])
    hit, messages = run(ArrayMatch(np.ndarray, np.dtype("float64")), [1.0])
    assert not hit and "expected an exact" in messages[0]


def test_memory_disjoint_relation_fails_for_an_array_over_another_inputs_memory():
    tree = GuardTree()
    tree.add((("local", "a"),), ArrayMatch(np.ndarray, np.dtype("float64")), "a")
    tree.add((("local", "a"), ("from_numpy", 0)), MemoryDisjointMatch([(("local", "b"),)], ["b"]), "a")
    guard = compile_tree(tree, ["a", "b"], {}, vars(builtins))
    base = np.arange(6.0)
    assert guard.check(base[:3], torch.zeros(3), None)
    assert guard.check(base[:3], torch.from_numpy(base[3:]), None)
    assert not guard.check(base[:4], torch.from_numpy(base[2:]), None)
