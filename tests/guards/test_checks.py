"""Each check kind: a hit and a miss through the generated function and through failures(), with exact messages."""

from __future__ import annotations

import gc
import math
import weakref

import pytest
import torch

from jitcore.guards import (
    DictKeysMatch,
    EqualsMatch,
    GlobalStateMatch,
    GuardTree,
    IdMatch,
    HasAttrMatch,
    LengthMatch,
    MinLengthMatch,
    Namespace,
    NamespaceEntryMatch,
    NoneMatch,
    NotNoneMatch,
    ReduceMatch,
    SetMatch,
    TensorMatch,
    TypeMatch,
    compile_tree,
)
from tests.guards.helpers import guard_one, run


class Thing:
    pass


class Hostile:
    def __eq__(self, other):
        raise RuntimeError("no comparing")

    __hash__ = object.__hash__


# --- TypeMatch ---------------------------------------------------------------------------------------------------

def test_type_match_hits_the_exact_type():
    assert run(TypeMatch(int), 3) == (True, [])


def test_type_match_misses_another_type_with_message():
    assert run(TypeMatch(int), 3.0) == (False, ["v: expected type int, got float"])


def test_type_match_misses_a_subclass():
    assert run(TypeMatch(int), True) == (False, ["v: expected type int, got bool"])


def test_type_match_qualifies_names_that_read_the_same():
    first = type("Thing", (), {"__module__": "one"})
    second = type("Thing", (), {"__module__": "two"})
    assert run(TypeMatch(first), second()) == (False, ["v: expected type one.Thing, got two.Thing"])


def test_type_match_refuses_a_non_type():
    with pytest.raises(TypeError, match="TypeMatch needs a type"):
        TypeMatch(3)


# --- IdMatch -----------------------------------------------------------------------------------------------------

def test_id_match_hits_the_same_object():
    thing = Thing()
    assert run(IdMatch(thing), thing) == (True, [])


def test_id_match_misses_an_equal_other_object_with_message():
    thing, other = Thing(), Thing()
    assert run(IdMatch(thing), other) == (
        False, [f"v: expected the object <Thing at {id(thing):#x}>, got <Thing at {id(other):#x}>"])


def test_id_match_does_not_keep_the_object_alive():
    thing = Thing()
    check = IdMatch(thing)
    alive = weakref.ref(thing)
    del thing
    gc.collect()
    assert alive() is None
    assert check.target is None


def test_id_match_fails_after_the_object_dies():
    thing = Thing()
    address = id(thing)
    guard = guard_one(IdMatch(thing))
    del thing
    gc.collect()
    assert guard.check(None, None) is False  # a dead weakref returns None: None must not pass
    assert guard.check(Thing(), None) is False  # nor may a new object that reuses the address
    assert guard.failures((None,), None) == [
        f"v: the object it was compiled for (<Thing at {address:#x}>) no longer exists"]


def test_id_match_holds_objects_without_weakrefs_strongly():
    key = (1, 2)
    assert run(IdMatch(key), key) == (True, [])
    assert run(IdMatch(key), (1, 2) + ())[0] is (key is (1, 2) + ())


def test_id_match_on_none_matches_only_none():
    assert run(IdMatch(None), None) == (True, [])
    assert run(IdMatch(None), 0) == (False, ["v: expected the object None, got 0"])


def test_id_match_on_a_stored_bound_method_hits_while_it_is_stored():
    class WithMethod:
        def method(self):
            pass

    holder = {"stored": WithMethod().method}
    assert run(IdMatch(holder["stored"]), holder["stored"]) == (True, [])
    assert run(IdMatch(holder["stored"]), WithMethod().method)[0] is False


def test_id_match_dedupes_without_calling_user_eq_or_hash():
    class NoHash:
        __hash__ = None

        def __eq__(self, other):
            raise RuntimeError("no comparing")

    thing = NoHash()
    assert IdMatch(thing) == IdMatch(thing)
    assert len({IdMatch(thing), IdMatch(thing)}) == 1
    assert IdMatch(thing) != IdMatch(NoHash())


# --- EqualsMatch -------------------------------------------------------------------------------------------------

def test_equals_match_hits_an_equal_int():
    assert run(EqualsMatch(2), 2) == (True, [])


def test_equals_match_misses_another_int_with_message():
    assert run(EqualsMatch(2), 3) == (False, ["v: changed 2 -> 3"])


def test_equals_match_misses_an_equal_value_of_another_type():
    assert run(EqualsMatch(2), 2.0) == (False, ["v: expected 2 (int), got 2.0 (float)"])
    assert run(EqualsMatch(1), True) == (False, ["v: expected 1 (int), got True (bool)"])


def test_equals_match_treats_nan_as_equal_to_nan():
    assert run(EqualsMatch(float("nan")), float("nan")) == (True, [])
    assert run(EqualsMatch(float("nan")), 1.0) == (False, ["v: changed nan -> 1.0"])


def test_equals_match_tells_zero_from_negative_zero():
    assert run(EqualsMatch(0.0), 0.0) == (True, [])
    assert run(EqualsMatch(0.0), -0.0) == (False, ["v: changed 0.0 -> -0.0"])


def test_equals_match_hits_infinity():
    assert run(EqualsMatch(math.inf), math.inf) == (True, [])
    assert run(EqualsMatch(math.inf), -math.inf) == (False, ["v: changed inf -> -inf"])


def test_equals_match_checks_tuple_element_types():
    assert run(EqualsMatch((1, 2.0, "a")), (1, 2.0, "a")) == (True, [])
    assert run(EqualsMatch((1, 2.0, "a")), (True, 2.0, "a")) == (
        False, ["v: changed (1, 2.0, 'a') -> (True, 2.0, 'a')"])
    assert run(EqualsMatch((1, (2, None))), (1, (2.0, None))) == (
        False, ["v: changed (1, (2, None)) -> (1, (2.0, None))"])


def test_equals_match_handles_nan_inside_a_tuple():
    assert run(EqualsMatch((1, float("nan"))), (1, float("nan"))) == (True, [])
    assert run(EqualsMatch((1, float("nan"))), (1, 2.0))[0] is False


def test_equals_match_compares_a_long_tuple_through_one_helper():
    value = tuple(range(20))
    assert run(EqualsMatch(value), tuple(range(20))) == (True, [])
    assert run(EqualsMatch(value), tuple(range(19)) + (True,))[0] is False


@pytest.mark.parametrize("value, other", [
    ("abc", "abd"),
    (None, 0),
    (True, 1),
    (torch.float32, torch.float16),
    (torch.device("cpu"), torch.device("meta")),
    (torch.Size([2, 3]), torch.Size([2, 4])),
    (b"x", "x"),
    (1 + 2j, 1 + 3j),
    (NotImplemented, None),
    (range(3), range(4)),
])
def test_equals_match_hits_its_constant_and_misses_another(value, other):
    assert run(EqualsMatch(value), value) == (True, [])
    assert run(EqualsMatch(value), other)[0] is False


def test_equals_match_misses_a_tuple_for_a_torch_size():
    assert run(EqualsMatch(torch.Size([2, 3])), (2, 3)) == (
        False, ["v: expected torch.Size([2, 3]) (Size), got (2, 3) (tuple)"])


def test_equals_match_with_a_raising_eq_fails_instead_of_raising():
    constant = Hostile()
    guard = guard_one(EqualsMatch(constant))
    assert guard.check(Hostile(), None) is False
    assert guard.failures((Hostile(),), None) == ["v: could not be checked (RuntimeError: no comparing)"]


def test_equals_match_refuses_mutable_containers_and_tensors():
    for value in ([1], {"a": 1}, {1}, torch.zeros(1)):
        with pytest.raises(TypeError, match="immutable constant"):
            EqualsMatch(value)


def test_equals_match_dedupes_by_value():
    assert EqualsMatch(2) == EqualsMatch(2)
    assert EqualsMatch(float("nan")) == EqualsMatch(float("nan"))
    assert hash(EqualsMatch(float("nan"))) == hash(EqualsMatch(float("nan")))
    assert EqualsMatch(0.0) != EqualsMatch(-0.0)
    assert EqualsMatch(1) != EqualsMatch(True)
    assert EqualsMatch((1, 2)) != EqualsMatch((1.0, 2))


# --- NoneMatch, NotNoneMatch, LengthMatch, DictKeysMatch ---------------------------------------------------------

def test_none_match_hits_none_and_misses_a_value():
    assert run(NoneMatch(), None) == (True, [])
    assert run(NoneMatch(), 0) == (False, ["v: expected None, got 0"])


def test_not_none_match_hits_a_value_and_misses_none():
    assert run(NotNoneMatch(), 0) == (True, [])
    assert run(NotNoneMatch(), None) == (False, ["v: expected a value other than None, got None"])


def test_length_match_hits_any_sized_value():
    assert run(LengthMatch(3), [1, 2, 3]) == (True, [])
    assert run(LengthMatch(3), "abc") == (True, [])


def test_length_match_misses_another_length_with_message():
    assert run(LengthMatch(3), (1, 2)) == (False, ["v: expected length 3, got 2"])


def test_length_match_misses_a_value_without_length():
    assert run(LengthMatch(3), 7) == (False, ["v: expected length 3, got int without a length"])


def test_min_length_match_hits_a_value_at_least_that_long_and_explains_a_shorter_one():
    assert run(MinLengthMatch(2), (1, 2)) == (True, [])
    assert run(MinLengthMatch(2), [1, 2, 3]) == (True, [])
    assert run(MinLengthMatch(2), (1,)) == (False, ["v: expected length >= 2, got 1"])
    assert run(MinLengthMatch(2), 7) == (False, ["v: expected length >= 2, got int without a length"])
    with pytest.raises(ValueError):
        MinLengthMatch(0)


def test_has_attr_match_hits_presence_and_absence_and_explains_a_change():
    thing = Thing()
    thing.a = 1
    assert run(HasAttrMatch("a", True), thing) == (True, [])
    assert run(HasAttrMatch("b", False), thing) == (True, [])
    assert run(HasAttrMatch("b", True), thing) == (False, ["v: expected an attribute 'b', got none"])
    assert run(HasAttrMatch("a", False), thing) == (False, ["v: expected no attribute 'a', got one"])


def test_dict_keys_match_hits_the_same_keys_in_order():
    assert run(DictKeysMatch(("a", "b")), {"a": 1, "b": 2}) == (True, [])


def test_dict_keys_match_misses_another_order():
    assert run(DictKeysMatch(("a", "b")), {"b": 2, "a": 1}) == (
        False, ["v: expected keys ('a', 'b'), got ('b', 'a')"])


def test_dict_keys_match_accepts_any_mapping_with_keys():
    assert run(DictKeysMatch(("w",)), torch.nn.ParameterDict({"w": torch.nn.Parameter(torch.zeros(1))}))[0]


# --- TensorMatch -------------------------------------------------------------------------------------------------

def test_tensor_match_hits_same_metadata_other_values():
    assert run(TensorMatch(torch.zeros(2, 3)), torch.ones(2, 3)) == (True, [])


def test_tensor_match_misses_shape():
    assert run(TensorMatch(torch.zeros(32, 3)), torch.zeros(17, 3)) == (False, ["v: shape[0] changed 32 -> 17"])


def test_tensor_match_misses_stride():
    assert run(TensorMatch(torch.zeros(2, 3)), torch.zeros(3, 2).t()) == (
        False, ["v: stride changed (3, 1) -> (1, 2)"])


def test_tensor_match_misses_dtype():
    assert run(TensorMatch(torch.zeros(2)), torch.zeros(2, dtype=torch.float16)) == (
        False, ["v: dtype changed torch.float32 -> torch.float16"])


def test_tensor_match_misses_requires_grad():
    assert run(TensorMatch(torch.zeros(2)), torch.zeros(2, requires_grad=True)) == (
        False, ["v: requires_grad changed False -> True"])
    assert run(TensorMatch(torch.zeros(2, requires_grad=True)), torch.zeros(2, requires_grad=True)) == (True, [])


def test_tensor_match_misses_ndim():
    assert run(TensorMatch(torch.zeros(2, 3)), torch.zeros(2, 3, 1)) == (False, ["v: ndim changed 2 -> 3"])


def test_tensor_match_misses_device():
    assert run(TensorMatch(torch.zeros(2)), torch.zeros(2, device="meta")) == (
        False, ["v: device changed cpu -> meta"])
    assert run(TensorMatch(torch.zeros(2, device="meta")), torch.zeros(2, device="meta")) == (True, [])
    assert run(TensorMatch(torch.zeros(2, device="meta")), torch.zeros(2)) == (
        False, ["v: device changed meta -> cpu"])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_tensor_match_misses_cuda_device():
    assert run(TensorMatch(torch.zeros(2)), torch.zeros(2, device="cuda")) == (
        False, ["v: device changed cpu -> cuda:0"])
    assert run(TensorMatch(torch.zeros(2, device="cuda")), torch.zeros(2, device="cuda")) == (True, [])


def test_tensor_match_misses_parameter_for_tensor():
    assert run(TensorMatch(torch.zeros(2)), torch.nn.Parameter(torch.zeros(2), requires_grad=False)) == (
        False, ["v: type changed Tensor -> Parameter"])


def test_tensor_match_misses_a_non_tensor():
    assert run(TensorMatch(torch.zeros(2)), [0.0, 0.0]) == (False, ["v: type changed Tensor -> list"])


def test_tensor_match_misses_layout():
    assert run(TensorMatch(torch.zeros(2, 2)), torch.zeros(2, 2).to_sparse())[0] is False
    assert run(TensorMatch(torch.zeros(2, 2).to_sparse()), torch.ones(2, 2).to_sparse()) == (True, [])


def test_tensor_match_skips_dynamic_dims_in_shape_and_stride():
    check = TensorMatch(torch.zeros(8, 3), dynamic_dims=frozenset({0}))
    assert run(check, torch.zeros(5, 3)) == (True, [])
    assert run(check, torch.zeros(5, 4)) == (False, ["v: shape[1] changed 3 -> 4"])
    assert run(check, torch.zeros(5)) == (False, ["v: ndim changed 2 -> 1"])
    assert run(check, torch.zeros(10, 6)[:, ::2]) == (False, ["v: stride changed (*, 1) -> (6, 2)"])


def test_tensor_match_with_every_dim_dynamic_still_checks_ndim():
    check = TensorMatch(torch.zeros(8, 3), dynamic_dims=frozenset({0, 1}))
    assert run(check, torch.zeros(1, 9)) == (True, [])
    assert run(check, torch.zeros(1, 9, 1)) == (False, ["v: ndim changed 2 -> 3"])


def test_tensor_match_refuses_dynamic_dims_outside_the_tensor():
    with pytest.raises(ValueError, match="dynamic_dims must be dims of a 2-d tensor"):
        TensorMatch(torch.zeros(2, 3), dynamic_dims=frozenset({2}))


def test_tensor_match_does_not_keep_the_example_alive():
    example = torch.zeros(2, 3)
    alive = weakref.ref(example)
    check = TensorMatch(example)
    del example
    gc.collect()
    assert alive() is None
    assert run(check, torch.zeros(2, 3)) == (True, [])


def test_tensor_match_dedupes_by_metadata_not_values():
    assert TensorMatch(torch.zeros(2, 3)) == TensorMatch(torch.ones(2, 3))
    assert TensorMatch(torch.zeros(2, 3)) != TensorMatch(torch.zeros(2, 4))
    dynamic = frozenset({0})
    assert TensorMatch(torch.zeros(4, 3), dynamic) == TensorMatch(torch.zeros(9, 3), dynamic)


def test_tensor_match_describes_its_metadata():
    assert TensorMatch(torch.zeros(2, 3)).describe() == (
        "TensorMatch(float32, cpu, shape=(2, 3), stride=(3, 1), requires_grad=False)")
    parameter = torch.nn.Parameter(torch.zeros(4, 3))
    assert TensorMatch(parameter, frozenset({0})).describe() == (
        "TensorMatch(Parameter, float32, cpu, shape=(*, 3), stride=(*, 1), requires_grad=True)")


# --- GlobalStateMatch --------------------------------------------------------------------------------------------

def _state_guard():
    tree = GuardTree()
    tree.add_root(GlobalStateMatch())
    return compile_tree(tree, [], {}, {})


def test_global_state_match_hits_the_same_state():
    guard = _state_guard()
    assert guard.check(None) is True
    assert guard.failures((), None) == []


def test_global_state_match_misses_no_grad():
    guard = _state_guard()
    with torch.no_grad():
        assert guard.check(None) is False
        assert guard.failures((), None) == ["global state: grad mode changed True -> False"]


def test_global_state_match_misses_default_dtype():
    guard = _state_guard()
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        assert guard.check(None) is False
        assert guard.failures((), None) == ["global state: default dtype changed torch.float32 -> torch.float64"]
    finally:
        torch.set_default_dtype(previous)


def test_global_state_match_misses_cpu_autocast():
    guard = _state_guard()
    with torch.autocast("cpu"):
        assert guard.check(None) is False
        assert guard.failures((), None) == ["global state: autocast (cpu) changed False -> True"]


def test_global_state_match_taken_under_autocast_checks_its_dtype():
    with torch.autocast("cpu", dtype=torch.bfloat16):
        guard = _state_guard()
        assert guard.check(None) is True
    assert guard.check(None) is False
    with torch.autocast("cpu", dtype=torch.float16):
        assert guard.check(None) is False
        assert guard.failures((), None) == [
            "global state: autocast dtype (cpu) changed torch.bfloat16 -> torch.float16"]


def test_global_state_match_taken_under_autocast_elsewhere_keeps_hitting():
    with torch.autocast("xpu"):  # on for a device other than cpu and cuda: not "off everywhere"
        guard = _state_guard()
        assert guard.check(None) is True
        assert guard.check(None) is True


def test_global_state_match_misses_autocast_turned_on_elsewhere():
    guard = _state_guard()
    with torch.autocast("xpu"):
        assert guard.check(None) is False
        assert guard.failures((), None) == [
            "global state: autocast changed False -> True (on a device other than cpu and cuda)"]


def test_global_state_match_misses_deterministic_algorithms():
    guard = _state_guard()
    torch.use_deterministic_algorithms(True)
    try:
        assert guard.check(None) is False
        assert guard.failures((), None) == ["global state: deterministic algorithms changed False -> True"]
    finally:
        torch.use_deterministic_algorithms(False)


def test_global_state_match_reports_every_change():
    guard = _state_guard()
    with torch.no_grad(), torch.autocast("cpu"):
        assert guard.failures((), None) == [
            "global state: grad mode changed True -> False; autocast (cpu) changed False -> True"]


# --- Namespace ---------------------------------------------------------------------------------------------------

def test_namespace_binds_one_object_once():
    ns = Namespace()
    first = ns.constant(torch.float32, "dtype")
    assert ns.constant(torch.float32, "dtype") == first
    assert ns.constant(torch.float16, "dtype") != first
    assert ns.temp("dims") != ns.temp("dims")
    assert all(name.startswith("___") for name in ns)


# --- SetMatch ---------------------------------------------------------------------------------------------------

def test_set_match_hits_the_same_members_in_the_same_order_and_types():
    members = {3, 1, "a"}
    assert run(SetMatch(members), set(members)) == (True, [])
    assert run(SetMatch(frozenset({1, 2})), frozenset({1, 2})) == (True, [])


def test_set_match_misses_other_members_types_or_kinds():
    assert run(SetMatch({1, 2}), {1, 3})[0] is False
    assert run(SetMatch({1, 2}), {True, 2})[0] is False  # 1 == True, but the member's type changed
    assert run(SetMatch({1, 2}), frozenset({1, 2})) == (False, ["v: expected a set, got frozenset"])


def test_set_match_refuses_other_values():
    with pytest.raises(TypeError):
        SetMatch([1, 2])


# --- ReduceMatch ------------------------------------------------------------------------------------------------

def test_reduce_match_hits_an_equal_getter_and_misses_other_arguments_or_types():
    import operator

    check = ReduceMatch(operator.itemgetter, (1,))
    assert run(check, operator.itemgetter(1)) == (True, [])
    assert run(check, operator.itemgetter(2))[0] is False
    assert run(check, operator.itemgetter(True))[0] is False  # 1 == True, but not the same argument
    assert run(check, operator.attrgetter("a")) == (False, ["v: expected a itemgetter, got attrgetter"])


def test_namespace_entry_match_explains_nothing_while_a_none_entry_stays_none():
    class Output:
        last_hidden_state = None

    check = NamespaceEntryMatch(Output.__dict__, "last_hidden_state", None, "Output.last_hidden_state", owner=Output)
    assert check.explain() is None
    Output.last_hidden_state = 3
    assert check.explain() == "was replaced (None -> 3)"
