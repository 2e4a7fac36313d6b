"""StorageOffsetMatch: where a view starts in its storage, with the change named in the user's terms."""

from __future__ import annotations

import pytest
import torch

from jitcore.guards import GuardTree, StorageOffsetMatch, TensorMatch, compile_tree
from tests.guards.helpers import run


def test_same_offset_passes_and_another_offset_fails_with_the_change():
    base = torch.arange(10.0)
    check = StorageOffsetMatch(0)
    assert run(check, base[0:3]) == (True, [])
    assert run(check, base[3:6]) == (False, ["v: storage_offset() changed 0 -> 3"])


def test_a_non_tensor_fails_without_raising():
    hit, messages = run(StorageOffsetMatch(2), [1, 2])
    assert not hit
    assert messages == ["v: expected a tensor, got list"]


def test_runs_after_the_tensor_check_on_the_same_value():
    base = torch.arange(10.0)
    tree = GuardTree()
    tree.add((("local", "x"),), StorageOffsetMatch(3), "x")
    tree.add((("local", "x"),), TensorMatch(base[3:6]), "x")
    guard = compile_tree(tree, ["x"], {}, {})
    assert guard.check(base[3:6], None)
    assert not guard.check(base[4:7], None)
    assert guard.source.index("storage_offset") > guard.source.index("tensor_check")


def test_checks_compare_by_offset():
    assert StorageOffsetMatch(3) == StorageOffsetMatch(3)
    assert StorageOffsetMatch(3) != StorageOffsetMatch(4)
    assert StorageOffsetMatch(3).describe() == "StorageOffsetMatch(3)"
    with pytest.raises(ValueError):
        StorageOffsetMatch(-1)
