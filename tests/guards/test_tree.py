"""GuardTree: nodes per access path, deduplication, iteration, counting and the printed tree."""

from __future__ import annotations

import pytest
import torch

from jitcore.guards import (
    EqualsMatch,
    GlobalStateMatch,
    GuardTree,
    LengthMatch,
    NotNoneMatch,
    TensorMatch,
    TypeMatch,
    count_checks,
)

X = (("local", "x"),)
SELF = (("local", "self"),)
WEIGHT = SELF + (("attr", "fc"), ("attr", "weight"))


def test_add_creates_a_node_for_every_prefix():
    tree = GuardTree()
    tree.add(WEIGHT, TypeMatch(torch.nn.Parameter), "self.fc.weight")
    assert tree.node(SELF) is not None
    assert tree.node(SELF + (("attr", "fc"),)).checks == []
    assert tree.node(WEIGHT).path == WEIGHT
    assert tree.node((("local", "y"),)) is None


def test_add_drops_an_identical_check_on_the_same_node():
    tree = GuardTree()
    assert tree.add(X, TensorMatch(torch.zeros(2, 3)), "x") is True
    assert tree.add(X, TensorMatch(torch.ones(2, 3)), "x") is False
    assert tree.add(X, TensorMatch(torch.zeros(2, 4)), "x") is True
    assert len(tree) == 2


def test_add_keeps_identical_checks_on_different_nodes():
    tree = GuardTree()
    tree.add(X, TypeMatch(int), "x")
    tree.add((("local", "y"),), TypeMatch(int), "y")
    assert count_checks(tree) == 2


def test_add_root_drops_a_second_identical_global_state_check():
    tree = GuardTree()
    assert tree.add_root(GlobalStateMatch()) is True
    assert tree.add_root(GlobalStateMatch()) is False
    assert len(tree) == 1


def test_item_keys_that_compare_equal_but_differ_in_type_get_their_own_nodes():
    tree = GuardTree()
    tree.add(X + (("item", 1),), TypeMatch(int), "x[1]")
    tree.add(X + (("item", True),), TypeMatch(int), "x[True]")
    assert len(tree.node(X).children) == 2


def test_checks_lists_root_checks_then_nodes_depth_first():
    tree = GuardTree()
    tree.add(X, TypeMatch(list), "x")
    tree.add(X + (("item", 0),), NotNoneMatch(), "x[0]")
    tree.add((("global", "scale"),), EqualsMatch(2), "G.scale")
    tree.add_root(GlobalStateMatch())
    assert [(path, name, type(check).__name__) for path, name, check in tree.checks()] == [
        ((), "global state", "GlobalStateMatch"),
        (X, "x", "TypeMatch"),
        (X + (("item", 0),), "x[0]", "NotNoneMatch"),
        ((("global", "scale"),), "G.scale", "EqualsMatch"),
    ]


def test_add_without_a_user_name_derives_one_from_the_path():
    tree = GuardTree()
    tree.add((("cell", 0), ("attr", "w"), ("item", "k")), NotNoneMatch())
    tree.add((("global", "g"), ("dictitem", 3)), NotNoneMatch())
    assert [name for _, name, _ in tree.checks()] == ["cell 0.w['k']", "G.g[3]"]


@pytest.mark.parametrize("path, message", [
    ((), "non-empty tuple of steps"),
    ([("local", "x")], "non-empty tuple of steps"),
    ((("attr", "x"),), "step 0 of guard path"),
    ((("local", "x"), ("global", "y")), "step 1 of guard path"),
    ((("local", "x"), ("len",)), "step 1 of guard path"),
    ((("cell", -1),), "a cell step needs an index"),
    ((("local", 3),), "a local step needs a name"),
])
def test_add_refuses_a_malformed_path(path, message):
    with pytest.raises(ValueError, match=message):
        GuardTree().add(path, TypeMatch(int), "x")


def test_add_refuses_an_unhashable_item_key():
    with pytest.raises(TypeError):
        GuardTree().add(X + (("item", [1]),), TypeMatch(int), "x")


def test_add_refuses_something_that_is_not_a_check_and_leaves_the_tree_unchanged():
    tree = GuardTree()
    with pytest.raises(TypeError, match="a guard check must be a Check"):
        tree.add(X, lambda value: True, "x")
    assert tree.node(X) is None


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 2)


def test_pretty_prints_user_names_and_folds_nodes_without_checks():
    net = Net()
    tree = GuardTree()
    tree.add(X, TensorMatch(torch.zeros(2, 3)), "x")
    tree.add(SELF, TypeMatch(Net), "self")
    tree.add(WEIGHT, TensorMatch(net.fc.weight), "self.fc.weight")
    tree.add(SELF + (("attr", "fc"), ("attr", "bias")), TensorMatch(net.fc.bias), "self.fc.bias")
    tree.add((("global", "scale"),), EqualsMatch(2), "G.scale")
    assert tree.pretty() == "\n".join([
        "├── x: TensorMatch(float32, cpu, shape=(2, 3), stride=(3, 1), requires_grad=False)",
        "├── self: TypeMatch(Net)",
        "│   ├── self.fc.weight: TensorMatch(Parameter, float32, cpu, shape=(2, 3), stride=(3, 1), requires_grad=True)",
        "│   └── self.fc.bias: TensorMatch(Parameter, float32, cpu, shape=(2,), stride=(1,), requires_grad=True)",
        "└── G.scale: EqualsMatch(2)",
    ])


def test_pretty_puts_root_checks_first_and_joins_checks_of_one_node():
    tree = GuardTree()
    tree.add(X, TypeMatch(list), "x")
    tree.add(X, LengthMatch(2), "x")
    tree.add_root(GlobalStateMatch())
    lines = tree.pretty().splitlines()
    assert lines[0].startswith("├── global state: GlobalStateMatch(grad=")
    assert lines[1] == "└── x: TypeMatch(list), LengthMatch(2)"


def test_pretty_of_an_empty_tree_is_empty():
    assert GuardTree().pretty() == ""
