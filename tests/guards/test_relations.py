"""ShapeRelationMatch: a check over several values of the guard tree (relations between symbolic sizes), rendered
into the generated guard function after the leaf checks and explained in the user's names."""
from __future__ import annotations

import pytest
import torch

from jitcore.guards import GuardTree, ShapeRelationMatch, TensorMatch, compile_tree


def _tree(relation):
    x, y = torch.zeros(6, 4), torch.zeros(6, 4)
    tree = GuardTree()
    tree.add((("local", "x"),), TensorMatch(x, dynamic_dims=frozenset({0})), "x")
    tree.add((("local", "y"),), TensorMatch(y, dynamic_dims=frozenset({0})), "y")
    tree.add_relation(relation, [(("local", "x"),), (("local", "y"),)])
    return compile_tree(tree, ["x", "y"], {}, {})


def test_a_relation_between_two_inputs_is_checked_in_the_generated_function():
    guard = _tree(ShapeRelationMatch(["T1.size()[0] == T0.size()[0]", "2 <= T0.size()[0]"], ["x", "y"]))
    assert guard.check(torch.zeros(9, 4), torch.zeros(9, 4), None)
    assert not guard.check(torch.zeros(9, 4), torch.zeros(8, 4), None)
    assert not guard.check(torch.zeros(1, 4), torch.zeros(1, 4), None)
    assert "T0" not in guard.source and "x.size()[0]" in guard.source


def test_a_failing_relation_is_explained_in_user_names_with_the_values_read():
    guard = _tree(ShapeRelationMatch(["T1.size()[0] == T0.size()[0]", "4 < T0.size()[0]"], ["x", "y"]))
    assert guard.failures((torch.zeros(6, 4), torch.zeros(5, 4)), None) == [
        "shape relations: y.shape[0] == x.shape[0] no longer holds (y.shape[0] = 5, x.shape[0] = 6)"]
    assert guard.failures((torch.zeros(3, 4), torch.zeros(3, 4)), None) == [
        "shape relations: x.shape[0] > 4 no longer holds (x.shape[0] = 3)"]


def test_a_conjunction_from_the_shape_env_is_split_into_relations():
    check = ShapeRelationMatch(["2 <= T0.size()[0] and T0.size()[0] <= 64"], ["x"])
    assert check.user_lines() == ["x.shape[0] >= 2", "x.shape[0] <= 64"]
    assert check.explain((torch.zeros(65),)) == "x.shape[0] <= 64 no longer holds (x.shape[0] = 65)"


def test_a_relation_must_read_paths_that_hold_leaf_checks():
    tree = GuardTree()
    with pytest.raises(ValueError, match="holds no leaf check"):
        tree.add_relation(ShapeRelationMatch(["2 <= T0.size()[0]"], ["x"]), [(("local", "x"),)])


def test_tensor_match_leaves_symbolic_strides_to_the_relation_and_stays_native():
    check = TensorMatch(torch.zeros(3, 5), dynamic_dims=frozenset({1}), dynamic_strides=frozenset({0}))
    assert check.sizes == (3, None) and check.strides == (None, 1)
    assert check.native_check is not None
    assert check.explain(torch.zeros(3, 9)) is None
    assert check.explain(torch.zeros(4, 9)) == "shape[0] changed 3 -> 4"
