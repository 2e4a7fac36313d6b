"""compile_tree: the generated check function (paths, order, failure handling, allocations) and failures()."""

from __future__ import annotations

import builtins
import dis
import sys

import pytest
import torch

from jitcore.guards import (
    DictKeysMatch,
    EqualsMatch,
    GlobalStateMatch,
    GuardTree,
    IdMatch,
    LengthMatch,
    NoneMatch,
    NotNoneMatch,
    TensorMatch,
    TypeMatch,
    compile_tree,
)

BUILTINS = vars(builtins)
X = (("local", "x"),)


class Box:
    """A plain object with attributes set by keyword."""

    def __init__(self, **attributes):
        self.__dict__.update(attributes)


class RaisingGetattr:
    def __getattr__(self, name):
        raise RuntimeError(f"no attribute {name} here")


class CountingReads:
    """Counts reads of `.inner` (a property) and of any missing attribute (through __getattr__)."""

    def __init__(self):
        self.reads = 0

    @property
    def inner(self):
        self.reads += 1
        return Box(value=1)

    def __getattr__(self, name):
        self.reads += 1
        raise AttributeError(name)


def compile_one(path, check, name, params=("x",), globals_dict=None):
    tree = GuardTree()
    tree.add(path, check, name)
    return compile_tree(tree, list(params), globals_dict if globals_dict is not None else {}, BUILTINS)


# --- the function itself -----------------------------------------------------------------------------------------

def test_generated_function_takes_params_then_cells():
    guard = compile_one(X, TypeMatch(int), "x", params=("x", "y"))
    assert guard.source.startswith("def ___guard(x, y, ___cells):")
    assert guard.check(1, "anything", None) is True
    assert guard(1, "anything", None) is True


def test_empty_tree_always_hits():
    guard = compile_tree(GuardTree(), ["x"], {}, BUILTINS)
    assert guard.check(object(), None) is True
    assert guard.failures((object(),), None) == []


def test_params_that_shadow_builtins_or_generated_names_are_renamed():
    params = ["type", "len", "___cells", "___v0", "x", "x", "not-an-identifier", "class"]
    tree = GuardTree()
    for index, name in enumerate(params[:5]):
        tree.add((("local", name),), TypeMatch(int), name)
    guard = compile_tree(tree, params, {}, BUILTINS)
    assert guard.source.startswith("def ___guard(___arg0, ___arg1, ___arg2, ___arg3, x, ___arg5, ___arg6, ___arg7,")
    assert guard.check(1, 2, 3, 4, 5, 6, 7, 8, None) is True
    assert guard.check(1, 2, 3, "four", 5, 6, 7, 8, None) is False
    assert guard.failures((1, 2, 3, "four", 5, 6, 7, 8), None) == ["___v0: expected type int, got str"]


def test_local_path_that_names_no_parameter_is_refused():
    with pytest.raises(ValueError, match="names local 'z', which is not a parameter"):
        compile_one((("local", "z"),), TypeMatch(int), "z")


def test_source_keeps_user_names_as_comments():
    guard = compile_one(X + (("attr", "weight"),), NotNoneMatch(), "x.weight")
    assert "# x.weight: NotNoneMatch()" in guard.source


# --- paths -------------------------------------------------------------------------------------------------------

def test_global_path_reads_the_live_globals_dict():
    globals_dict = {"scale": 2}
    guard = compile_one((("global", "scale"),), EqualsMatch(2), "G.scale", globals_dict=globals_dict)
    assert guard.check(None, None) is True
    globals_dict["scale"] = 3
    assert guard.check(None, None) is False
    assert guard.failures((None,), None) == ["G.scale: changed 2 -> 3"]


def test_missing_global_fails_instead_of_raising():
    guard = compile_one((("global", "scale"),), EqualsMatch(2), "G.scale", globals_dict={})
    assert guard.check(None, None) is False
    assert guard.failures((None,), None) == ["G.scale: could not be read (KeyError: 'scale')"]


def test_builtin_path_reads_the_bound_builtins_dict():
    tree = GuardTree()
    tree.add((("builtin", "len"),), IdMatch(len), "len")
    assert compile_tree(tree, [], {}, BUILTINS).check(None) is True
    assert compile_tree(tree, [], {}, {"len": lambda value: 0}).check(None) is False


def test_cell_path_reads_cell_contents():
    def make(value):
        def inner():
            return value
        return inner

    tree = GuardTree()
    tree.add((("cell", 0),), EqualsMatch(5), "value")
    guard = compile_tree(tree, [], {}, BUILTINS)
    assert guard.check(make(5).__closure__) is True
    assert guard.check(make(6).__closure__) is False
    assert guard.failures((), make(6).__closure__) == ["value: changed 5 -> 6"]


def test_cell_path_with_missing_cells_fails():
    tree = GuardTree()
    tree.add((("cell", 0),), EqualsMatch(5), "value")
    guard = compile_tree(tree, [], {}, BUILTINS)
    assert guard.check(None) is False
    assert guard.check(()) is False
    assert guard.failures((), None) == ["value: could not be read (TypeError: 'NoneType' object is not subscriptable)"]


def test_module_path_reads_sys_modules_when_the_guard_runs(monkeypatch):
    import types

    fake = types.ModuleType("guards_test_fake_module")
    fake.hooks = {}
    monkeypatch.setitem(sys.modules, "guards_test_fake_module", fake)
    path = (("module", "guards_test_fake_module"), ("attr", "hooks"))
    guard = compile_one(path, LengthMatch(0), "guards_test_fake_module.hooks", params=())
    assert guard.check(None) is True
    fake.hooks["h"] = print
    assert guard.check(None) is False
    assert guard.failures((), None) == ["guards_test_fake_module.hooks: expected length 0, got 1"]
    monkeypatch.delitem(sys.modules, "guards_test_fake_module")
    assert guard.check(None) is False


def test_attr_path_reads_attributes_and_odd_names():
    box = Box(weight=3)
    setattr(box, "not an identifier", 4)
    setattr(box, "class", 5)
    tree = GuardTree()
    tree.add(X + (("attr", "weight"),), EqualsMatch(3), "x.weight")
    tree.add(X + (("attr", "not an identifier"),), EqualsMatch(4), "x.?")
    tree.add(X + (("attr", "class"),), EqualsMatch(5), "x.class")
    guard = compile_tree(tree, ["x"], {}, BUILTINS)
    assert guard.check(box, None) is True
    assert guard.check(Box(weight=3), None) is False


def test_item_path_indexes_lists_dicts_and_tuples_keys():
    value = {"a": [10, 20], (1, 2): "t"}
    tree = GuardTree()
    tree.add(X + (("item", "a"), ("item", 1)), EqualsMatch(20), "x['a'][1]")
    tree.add(X + (("item", (1, 2)),), EqualsMatch("t"), "x[(1, 2)]")
    guard = compile_tree(tree, ["x"], {}, BUILTINS)
    assert guard.check(value, None) is True
    assert guard.check({"a": [10]}, None) is False
    assert guard.failures(({"a": [10]},), None) == [
        "x['a'][1]: could not be read (IndexError: list index out of range)",
        "x[(1, 2)]: could not be read (KeyError: (1, 2))",
    ]


def test_dictitem_path_bypasses_a_python_getitem():
    class Sneaky(dict):
        def __getitem__(self, key):
            return "sneaky"

    guard = compile_one(X + (("dictitem", "w"),), EqualsMatch(1), "x['w']")
    assert guard.check(Sneaky(w=1), None) is True
    assert guard.check({"w": 1}, None) is True
    assert guard.check(Box(w=1), None) is False


def test_module_parameter_path_through_raw_dicts():
    net = torch.nn.Linear(3, 2)
    path = (("local", "self"), ("attr", "_parameters"), ("dictitem", "weight"))
    guard = compile_one(path, TensorMatch(net.weight), "self.weight", params=("self",))
    assert guard.check(net, None) is True
    assert guard.check(torch.nn.Linear(4, 2), None) is False
    assert guard.failures((torch.nn.Linear(4, 2),), None) == ["self.weight: shape[1] changed 3 -> 4"]


# --- failure handling --------------------------------------------------------------------------------------------

def test_raising_getattr_fails_instead_of_raising():
    guard = compile_one(X + (("attr", "weight"),), NotNoneMatch(), "x.weight")
    assert guard.check(RaisingGetattr(), None) is False
    assert guard.failures((RaisingGetattr(),), None) == [
        "x.weight: could not be read (RuntimeError: no attribute weight here)"]


def test_base_exceptions_are_not_swallowed():
    class Interrupting:
        def __getattr__(self, name):
            raise KeyboardInterrupt

    guard = compile_one(X + (("attr", "weight"),), NotNoneMatch(), "x.weight")
    with pytest.raises(KeyboardInterrupt):
        guard.check(Interrupting(), None)


def test_failures_lists_only_failing_checks_in_run_order():
    tree = GuardTree()
    tree.add(X, TensorMatch(torch.zeros(2, 3)), "x")
    tree.add((("local", "n"),), EqualsMatch(4), "n")
    tree.add((("local", "flag"),), NoneMatch(), "flag")
    guard = compile_tree(tree, ["x", "n", "flag"], {}, BUILTINS)
    assert guard.failures((torch.zeros(2, 3), 4, None), None) == []
    assert guard.failures((torch.zeros(3, 3), 5, None), None) == [
        "n: changed 4 -> 5",
        "x: shape[0] changed 2 -> 3",
    ]


def test_failures_reports_a_missing_argument():
    guard = compile_one(X, TypeMatch(int), "x")
    assert guard.failures((), None) == ["x: could not be read (IndexError: no argument for parameter 'x' among the 0 passed)"]


# --- order and sharing -------------------------------------------------------------------------------------------

def _source_lines(guard):
    return [line.strip() for line in guard.source.splitlines()]


def _index_of(lines, fragment):
    return next(index for index, line in enumerate(lines) if fragment in line)


def test_root_checks_run_first_then_cheaper_checks():
    tree = GuardTree()
    tree.add(X, TensorMatch(torch.zeros(2)), "x")
    tree.add((("local", "items"),), LengthMatch(2), "items")
    tree.add((("local", "flag"),), NoneMatch(), "flag")
    tree.add_root(GlobalStateMatch())
    lines = _source_lines(compile_tree(tree, ["x", "items", "flag"], {}, BUILTINS))
    order = [_index_of(lines, f"# {name}:") for name in ("global state", "flag", "items", "x")]
    assert order == sorted(order)


def test_the_arguments_and_their_items_are_checked_before_module_state_and_globals():
    # Note [Arguments first]: what tells entries apart runs first, so a miss costs a few checks
    from jitcore.guards import ShapeRelationMatch
    tree = GuardTree()
    module = torch.nn.Linear(2, 2)
    tree.add((("local", "self"), ("attr", "training")), EqualsMatch(True), "self.training")
    tree.add((("global", "scale"),), EqualsMatch(2), "G.scale")
    tree.add((("local", "args"),), LengthMatch(1), "args")
    tree.add((("local", "args"), ("item", 0)), TensorMatch(torch.zeros(3, 2)), "args[0]")
    tree.add((("local", "self"),), IdMatch(module), "self")
    tree.add_relation(ShapeRelationMatch(["2 <= T0.size()[0]"], ["args[0]"]), [(("local", "args"), ("item", 0))])
    tree.add_root(GlobalStateMatch())
    lines = _source_lines(compile_tree(tree, ["self", "args"], {"scale": 2}, BUILTINS))
    order = [_index_of(lines, fragment) for fragment in
             ("# global state:", "# self: IdMatch", "# args: LengthMatch", "# args[0]: TensorMatch",
              "# shape relations", "# self.training:", "# G.scale:")]
    assert order == sorted(order)


def test_the_order_does_not_change_what_a_guard_accepts():
    from jitcore.guards import ShapeRelationMatch
    tree = GuardTree()
    tree.add((("local", "args"), ("item", 0)), TensorMatch(torch.zeros(3, 2), dynamic_dims=frozenset({0})),
             "args[0]")
    tree.add_relation(ShapeRelationMatch(["2 <= T0.size()[0]"], ["args[0]"]), [(("local", "args"), ("item", 0))])
    tree.add((("global", "scale"),), EqualsMatch(2), "G.scale")
    guard = compile_tree(tree, ["args"], {"scale": 2}, BUILTINS)
    assert guard.check((torch.zeros(5, 2),), None)
    assert not guard.check((torch.zeros(1, 2),), None)  # the relation
    assert not guard.check((torch.zeros(5, 3),), None)  # the static dim
    assert not guard.check((), None)  # args[0] is not read when args is too short
    guard = compile_tree(tree, ["args"], {"scale": 3}, BUILTINS)
    assert not guard.check((torch.zeros(5, 2),), None)


def test_child_is_read_only_after_its_parents_checks():
    tree = GuardTree()
    tree.add(X + (("attr", "inner"),), DictKeysMatch(()), "x.inner")  # cheap child...
    tree.add(X, TensorMatch(torch.zeros(1)), "x")                       # ...of an expensive parent
    lines = _source_lines(compile_tree(tree, ["x"], {}, BUILTINS))
    assert _index_of(lines, "# x: TensorMatch") < _index_of(lines, "= x.inner")


def test_child_is_not_read_when_the_parent_check_fails():
    tree = GuardTree()
    tree.add(X, TypeMatch(Box), "x")
    tree.add(X + (("attr", "missing"),), NotNoneMatch(), "x.missing")
    guard = compile_tree(tree, ["x"], {}, BUILTINS)
    value = CountingReads()
    assert guard.check(value, None) is False
    assert value.reads == 0


def test_intermediate_value_is_read_once_per_call():
    tree = GuardTree()
    tree.add(X + (("attr", "inner"), ("attr", "value")), EqualsMatch(1), "x.inner.value")
    tree.add(X + (("attr", "inner"),), NotNoneMatch(), "x.inner")
    tree.add(X + (("attr", "inner"), ("attr", "__class__")), TypeMatch(type), "x.inner.__class__")
    guard = compile_tree(tree, ["x"], {}, BUILTINS)
    value = CountingReads()
    assert guard.check(value, None) is True
    assert value.reads == 1
    assert sum(" = x.inner" in line for line in guard.source.splitlines()) == 1


# --- allocation-free hit path ------------------------------------------------------------------------------------

# Opcodes that build a new container, string or function on each run.
_ALLOCATING_OPCODES = {"BUILD_TUPLE", "BUILD_LIST", "BUILD_MAP", "BUILD_SET", "BUILD_STRING", "BUILD_SLICE",
                       "BUILD_CONST_KEY_MAP", "LIST_EXTEND", "LIST_APPEND", "SET_UPDATE", "DICT_UPDATE",
                       "DICT_MERGE", "CALL_FUNCTION_EX", "MAKE_FUNCTION", "FORMAT_VALUE", "CALL_INTRINSIC_1"}


def test_generated_function_builds_no_containers_per_call():
    thing = Box()
    tree = GuardTree()
    tree.add_root(GlobalStateMatch())
    tree.add(X, TensorMatch(torch.zeros(4, 3)), "x")
    tree.add((("local", "y"),), TensorMatch(torch.zeros(4, 3), frozenset({0})), "y")
    tree.add((("local", "shape"),), EqualsMatch((2, (3, 4.5), None, True)), "shape")
    tree.add((("local", "scale"),), EqualsMatch(float("nan")), "scale")
    tree.add((("local", "obj"),), IdMatch(thing), "obj")
    tree.add((("local", "obj"), ("attr", "d"), ("dictitem", "k"), ("item", (1, "a"))), LengthMatch(2), "obj.d")
    tree.add((("local", "opt"),), NoneMatch(), "opt")
    tree.add((("global", "g"),), EqualsMatch(torch.float16), "G.g")
    guard = compile_tree(tree, ["x", "y", "shape", "scale", "obj", "opt"], {}, BUILTINS)
    used = {instruction.opname for instruction in dis.get_instructions(guard.check)}
    assert used & _ALLOCATING_OPCODES == set(), guard.source


def test_explaining_a_miss_reads_nothing_below_a_failed_type_or_keys_check():
    # a defaultdict's __missing__ inserts the key it is asked for: the generated function stops at the type check,
    # and so must the slow path that explains the miss
    import collections

    tree = GuardTree()
    tree.add(X, TypeMatch(collections.deque), "x")
    tree.add(X + (("item", 0),), EqualsMatch(1), "x[0]")
    guard = compile_tree(tree, ["x"], {}, BUILTINS)
    other = collections.defaultdict(list, {"a": [1]})
    assert guard.check(other, None) is False
    failures = guard.failures((other,), None)
    assert failures[0] == "x: expected type deque, got defaultdict"
    assert failures[1].startswith("x[0]: could not be read (TypeError: not read: expected type deque")
    assert dict(other) == {"a": [1]}
    assert guard.failures((collections.deque([2]),), None) == ["x[0]: changed 1 -> 2"]
    keyed = GuardTree()
    keyed.add(X, DictKeysMatch(("a", "b")), "x")
    keyed.add(X + (("item", "b"),), EqualsMatch(1), "x['b']")
    guard = compile_tree(keyed, ["x"], {}, BUILTINS)
    assert guard.check(other, None) is False
    guard.failures((other,), None)
    assert dict(other) == {"a": [1]}
