"""Facts other checks imply are not tested again (Note [Facts implied by other checks]): DistinctObjects compares
only the values that identity and exact-type checks do not already tell apart, and still fails when two of
those become one object."""
import builtins

from jitcore.guards import DistinctObjects, GuardTree, IdMatch, TypeMatch, compile_tree
from jitcore.guards.implied import UNKNOWN, Implied

BUILTINS = vars(builtins)


def _make_closure():
    a, b = [1], [2]

    def inner():
        return a, b
    return inner


def _distinct_tree(values_checks):
    """A tree over locals v0..vn, each with its checks, and one DistinctObjects over all of them."""
    tree = GuardTree()
    names = [f"v{i}" for i in range(len(values_checks))]
    for name, checks in zip(names, values_checks):
        for check in checks:
            tree.add((("local", name),), check, name)
    others = [(("local", n),) for n in names[:-1]]
    tree.add((("local", names[-1]),), DistinctObjects(others, names[:-1]), names[-1])
    return tree, names


def test_values_of_different_exact_types_are_not_compared():
    tree, names = _distinct_tree([[TypeMatch(list)], [TypeMatch(dict)], [TypeMatch(tuple)]])
    guard = compile_tree(tree, names, {}, BUILTINS)
    assert " is not " not in guard.source and "id(" not in guard.source
    assert guard.check([], {}, (), None) is True


def test_values_of_one_type_are_still_compared_and_a_shared_object_misses():
    tree, names = _distinct_tree([[TypeMatch(list)], [TypeMatch(dict)], [TypeMatch(list)]])
    guard = compile_tree(tree, names, {}, BUILTINS)
    assert guard.source.count(" is not ") == 1
    shared = []
    assert guard.check([], {}, [], None) is True
    assert guard.check(shared, {}, shared, None) is False
    assert guard.failures((shared, {}, shared), None)


def test_a_value_of_unknown_type_is_compared_with_every_other():
    tree, names = _distinct_tree([[TypeMatch(list)], [TypeMatch(dict)], []])
    guard = compile_tree(tree, names, {}, BUILTINS)
    d = {}
    assert guard.check([], d, {}, None) is True
    assert guard.check([], d, d, None) is False


def test_two_values_fixed_by_identity_are_not_compared():
    first, second = [1], [2]
    tree = GuardTree()
    tree.add((("global", "a"),), IdMatch(first), "a")
    tree.add((("global", "b"),), IdMatch(second), "b")
    tree.add((("global", "b"),), DistinctObjects([(("global", "a"),)], ["a"]), "b")
    guard = compile_tree(tree, [], {"a": first, "b": second}, BUILTINS)
    assert " is not " not in guard.source
    assert guard.check(None) is True


def test_closure_cells_of_a_function_fixed_by_identity_are_fixed_too():
    inner = _make_closure()
    tree = GuardTree()
    fn = (("global", "fn"),)
    tree.add(fn, IdMatch(inner), "fn")
    implied = Implied()
    tree.add(fn + (("attr", "__closure__"), ("item", 0), ("attr", "cell_contents")), TypeMatch(list), "a")
    node = tree.node(fn + (("attr", "__closure__"), ("item", 0)))
    assert implied.identity(node) is inner.__closure__[0]
    assert implied.exact_type(node) is type(inner.__closure__[0])
    contents = tree.node(fn + (("attr", "__closure__"), ("item", 0), ("attr", "cell_contents")))
    assert implied.identity(contents) is UNKNOWN  # a cell's contents can change


def test_a_class_that_can_be_reassigned_does_not_fix_the_type():
    class Box:
        pass

    box = Box()
    tree = GuardTree()
    tree.add((("global", "box"),), IdMatch(box), "box")
    implied = Implied()
    node = tree.node((("global", "box"),))
    assert implied.identity(node) is box
    assert implied.exact_type(node) is None  # box.__class__ = Other is allowed
