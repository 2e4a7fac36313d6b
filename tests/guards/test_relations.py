"""ShapeRelationMatch: a check over several values of the guard tree (relations between symbolic sizes), rendered
into the generated guard function after the leaf checks and explained in the user's names."""
from __future__ import annotations

import pytest
import torch

from jitcore.guards import GuardTree, ShapeRelationMatch, TensorMatch, TypeMatch, compile_tree


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
    assert "T0" not in guard.source and "x.size()" in guard.source


def test_each_tensor_size_and_stride_is_read_once_for_all_relations():
    # Note [Sizes read once per relation]: many relations over the same sizes, one size() / stride() per tensor
    relation = ShapeRelationMatch(["T1.size()[0] == T0.size()[0]", "2 <= T0.size()[0]", "T0.size()[0] <= 64",
                                   "T0.stride()[0] == T0.size()[1]", "T1.stride()[0] == T1.size()[1]",
                                   "(T0.size()[0] * T1.size()[1]) % 3 == 0"], ["x", "y"])
    guard = _tree(relation)
    assert guard.source.count(".size()") == 2 and guard.source.count(".stride()") == 2
    assert guard.check(torch.zeros(9, 4), torch.zeros(9, 4), None)
    assert not guard.check(torch.zeros(9, 4), torch.zeros(8, 4), None)
    assert not guard.check(torch.zeros(1, 4), torch.zeros(1, 4), None)
    assert not guard.check(torch.zeros(65, 4), torch.zeros(65, 4), None)
    assert not guard.check(torch.zeros(8, 4), torch.zeros(8, 4), None)  # 8 * 4 is not a multiple of 3
    assert not guard.check(torch.zeros(9, 8)[:, :4], torch.zeros(9, 4), None)  # x's stride is not its width
    for x, y in [(torch.zeros(9, 4), torch.zeros(9, 4)), (torch.zeros(9, 8)[:, :4], torch.zeros(9, 4)),
                 (torch.zeros(65, 4), torch.zeros(65, 4)), (torch.zeros(6, 4), torch.zeros(6, 4))]:
        assert guard.check(x, y, None) == relation.holds((x, y))


def test_relations_over_numbers_and_storage_offsets_read_them_as_before():
    tree = GuardTree()
    x = torch.zeros(6, 4)
    tree.add((("local", "x"),), TensorMatch(x, dynamic_dims=frozenset({0})), "x")
    tree.add((("local", "n"),), TypeMatch(int), "n")
    relation = ShapeRelationMatch(["T0.storage_offset() == 0", "T0.size()[0] == T1 + 1"], ["x", "n"])
    tree.add_relation(relation, [(("local", "x"),), (("local", "n"),)])
    guard = compile_tree(tree, ["x", "n"], {}, {})
    assert guard.check(torch.zeros(7, 4), 6, None)
    assert not guard.check(torch.zeros(7, 4), 7, None)
    assert not guard.check(torch.zeros(8, 4)[1:], 6, None)


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
