"""The call-rule registry: one claim per callable and priority, and the order in which rules answer."""
import collections
import copy
import inspect
import json
import logging
import os
import posixpath
import sys

import pytest
import torch

import jitcore.capture.values  # noqa: F401 (registers every rule)
from jitcore.capture.values import call_rules
from jitcore.capture.values.call_rules import (CallRule, Meaning, call, claims, first_rule, rules_for,
                                               register_callable, register_predicate, register_type)
from jitcore.marks import allow_in_graph, is_compiling, mark_disabled


def _names(fn):
    return [rule.name for rule in rules_for(fn)]


def test_no_callable_or_type_is_claimed_twice_at_one_priority():
    claimed = claims()
    assert len(claimed) == len(set(claimed))


def test_a_second_claim_at_one_priority_is_refused(monkeypatch):
    monkeypatch.setattr(call_rules, "_BY_CALLABLE", {})
    register_callable(len, 5, CallRule("first", Meaning.BUILTIN))
    register_callable(len, 6, CallRule("higher", Meaning.BUILTIN))
    with pytest.raises(ValueError, match="claimed twice"):
        register_callable(len, 5, CallRule("second", Meaning.BUILTIN))


def test_identity_then_type_then_predicate_at_one_priority_and_higher_first(monkeypatch):
    monkeypatch.setattr(call_rules, "_BY_CALLABLE", {})
    monkeypatch.setattr(call_rules, "_BY_TYPE", {})
    monkeypatch.setattr(call_rules, "_BY_PREDICATE", [])

    def fn():
        pass
    register_predicate(7, lambda f: f is fn, CallRule("predicate 7", Meaning.OPAQUE))
    register_type(type(fn), 7, CallRule("type 7", Meaning.INLINE))
    register_callable(fn, 7, CallRule("identity 7", Meaning.LOOKASIDE))
    register_predicate(9, lambda f: True, CallRule("predicate 9", Meaning.GRAPH))
    register_callable(fn, 3, CallRule("identity 3", Meaning.BUILTIN))
    register_predicate(5, lambda f: False, CallRule("never", Meaning.NATIVE))
    assert _names(fn) == ["predicate 9", "identity 7", "type 7", "predicate 7", "identity 3"]


def test_a_declining_handler_lets_the_next_rule_answer(monkeypatch):
    monkeypatch.setattr(call_rules, "_BY_CALLABLE", {})
    monkeypatch.setattr(call_rules, "_BY_TYPE", {})
    monkeypatch.setattr(call_rules, "_BY_PREDICATE", [])

    def fn():
        pass
    register_callable(fn, 2, CallRule("declines", Meaning.CONSTRUCT, lambda st, f, a, k: NotImplemented))
    register_callable(fn, 1, CallRule("answers", Meaning.CONSTRUCT, lambda st, f, a, k: ("answered", a, k)))
    assert call(None, fn, [1], {"x": 2}) == ("answered", [1], {"x": 2})


def test_allow_in_graph_beats_everything_and_disabled_beats_the_tables():
    def helper(x):
        return x
    helper.__module__ = "torch.nn.functional"  # claimed as a torch operator
    assert first_rule(helper).meaning is Meaning.GRAPH and _names(helper)[0] == "torch operator"
    mark_disabled(helper)
    assert first_rule(helper).meaning is Meaning.OPAQUE
    allow_in_graph(helper)
    assert _names(helper)[:3] == ["allowed in graph", "disabled", "torch operator"]


def test_jitcore_and_torch_tracing_queries_are_lookasides():
    assert _names(torch.overrides.has_torch_function)[0] == "has_torch_function"
    assert first_rule(is_compiling).meaning is Meaning.LOOKASIDE
    assert first_rule(torch.compiler.is_compiling).meaning is Meaning.LOOKASIDE
    assert first_rule(inspect.signature).meaning is Meaning.LOOKASIDE


def test_torch_function_mode_entry_exit_and_dispatch_are_lookasides():
    from torch._dynamo._trace_wrapped_higher_order_op import ModIndex
    mode = torch.overrides.TorchFunctionMode
    assert _names(mode.__enter__)[0] == "TorchFunctionMode.__enter__"
    assert _names(mode.__exit__)[0] == "TorchFunctionMode.__exit__"
    assert _names(torch.overrides.handle_torch_function)[0] == "handle_torch_function"
    assert _names(torch.Tensor.shape.__get__)[0] == "tensor property getter"
    assert _names(ModIndex.apply.__func__)[0] == "a torch Function's own apply"
    assert first_rule(torch.Tensor.add.__get__).meaning is not Meaning.LOOKASIDE  # a method's, not a property's


def test_sys_exception_is_a_lookaside_that_declines_outside_traced_handlers():
    assert _names(sys.exception)[0] == "sys.exception"
    assert first_rule(sys.exception).meaning is Meaning.LOOKASIDE
    assert list(rules_for(sys.exception))[1].meaning is Meaning.OPAQUE  # what answers when it declines: a break


def test_builtins_torch_operators_and_tensor_methods():
    assert first_rule(len).meaning is Meaning.BUILTIN
    assert first_rule(torch.relu).meaning is Meaning.GRAPH
    assert first_rule(torch.Tensor.add).meaning is Meaning.GRAPH
    assert first_rule(torch.nn.functional.gelu).meaning is Meaning.GRAPH
    assert first_rule(id).meaning is Meaning.BUILTIN  # an identity token (values/object_id.py)
    assert first_rule(vars).meaning is Meaning.BUILTIN
    assert first_rule(globals).meaning is Meaning.OPAQUE  # a builtin without a rule


def test_copy_deepcopy_is_a_lookaside_and_unbound_container_methods_are_builtins():
    assert first_rule(copy.deepcopy).meaning is Meaning.LOOKASIDE
    assert first_rule(dict.copy).meaning is Meaning.BUILTIN
    assert first_rule(object.__new__).meaning is Meaning.BUILTIN


def test_torch_vmap_and_its_implementation_are_lookasides():
    from torch._functorch.vmap import vmap_impl

    assert first_rule(torch.vmap).meaning is Meaning.LOOKASIDE
    assert first_rule(torch.func.vmap) is first_rule(torch.vmap)
    assert first_rule(vmap_impl).meaning is Meaning.LOOKASIDE


def test_standard_library_functions_run_natively_unless_pure_helpers():
    assert first_rule(logging.info) == first_rule(json.dumps)
    assert first_rule(logging.info).break_kind == "print_or_io"
    assert first_rule(posixpath.join).meaning is Meaning.NATIVE
    assert first_rule(posixpath.join).break_kind == "unsupported_call"
    assert first_rule(copy.copy).meaning is Meaning.INLINE


def test_calling_a_class_by_its_kind_in_order():
    class Plain:
        pass

    class Mapping(dict):
        pass

    class Problem(ValueError):
        pass
    Pair = collections.namedtuple("Pair", "a b")
    assert _names(torch.no_grad)[0] == "grad-mode or autocast region"
    assert _names(torch.Size)[0] == "torch constant"
    assert _names(Pair)[0] == "namedtuple"
    assert _names(torch.nn.Linear)[0] == "nn.Module"
    assert _names(torch.nn.Module.__init__)[0] == "nn.Module.__init__ of a module made inside"
    assert _names(Problem)[0] == "exception"
    assert _names(Mapping)[0] == "dict subclass"
    assert _names(Plain) == ["Python class", "class"]
    assert first_rule(int).meaning is Meaning.BUILTIN


def test_marks_on_a_class_do_not_change_its_construction():
    class Marked:
        pass
    allow_in_graph(Marked)
    mark_disabled(Marked)
    assert _names(Marked) == ["Python class", "class"]


def test_breadth_rules_claim_itertools_collections_getters_and_slot_descriptors():
    import collections
    import functools
    import itertools
    import operator
    import unittest

    assert _names(itertools.chain)[0] == "itertools.chain"
    assert _names(itertools.chain.from_iterable)[0] == "itertools.chain.from_iterable"  # a new bound method
    assert _names(dict.fromkeys)[0] == "dict.fromkeys" and _names(collections.defaultdict.fromkeys)[0] == \
        "dict.fromkeys"
    assert _names(collections.OrderedDict)[0] == "collections.OrderedDict"
    assert _names(collections.deque)[0] == "collections.deque"
    assert _names(operator.itemgetter)[0] == "operator.itemgetter"
    assert _names(functools._lru_cache_wrapper)[0] == "functools lru_cache"
    assert _names(functools.lru_cache(len))[0] == "existing lru_cache wrapper"  # a wrapper object, by its type
    assert _names(list.__getitem__)[0] == "list.__getitem__" and _names(int.__add__)[0] == "int.__add__"
    assert _names(int.from_bytes)[0] == "int.from_bytes"
    assert first_rule(unittest.TestCase.assertEqual).meaning is Meaning.INLINE


def test_torch_probes_environment_ops_and_training_entry_points():
    assert first_rule(torch._C._log_api_usage_once).name == "usage logging"
    assert first_rule(torch._C._len_torch_dispatch_stack).name == "process-state probe"
    assert first_rule(torch.cuda.is_available).name == "fixed for the process"
    assert first_rule(torch.nn.modules.activation._is_make_fx_tracing).meaning is Meaning.LOOKASIDE
    assert first_rule(os.getenv).meaning is Meaning.LOOKASIDE
    assert first_rule(torch.ops.aten.mul).meaning is Meaning.GRAPH
    assert first_rule(torch.ops.aten.mul.Tensor).meaning is Meaning.GRAPH
    assert first_rule(torch.autograd.backward).break_kind == "autograd"
    assert first_rule(torch.optim.SGD.zero_grad).meaning is Meaning.NATIVE


def test_nn_module_call_written_out_is_a_lookaside():
    # `super().__call__(...)` in a module class that overrides __call__ reaches these
    assert first_rule(torch.nn.Module.__call__).meaning is Meaning.LOOKASIDE
    assert first_rule(torch.nn.Module._call_impl).meaning is Meaning.LOOKASIDE


def test_numpy_functions_are_graph_rules_and_numpy_random_has_none():
    np = pytest.importorskip("numpy")
    for fn in (np.exp, np.sum, np.asarray, np.linalg.norm, np.fft.fft):
        assert first_rule(fn).name == "NumPy function" and first_rule(fn).meaning is Meaning.GRAPH
    for fn in (np.random.randn, np.random.default_rng, np.linalg.eig, np.save):
        rule = first_rule(fn)
        assert rule is None or rule.name != "NumPy function"
    assert first_rule(np.float32).name == "NumPy scalar type"
    assert first_rule(np.finfo).name == "NumPy constant"
    assert _names(torch.from_numpy)[0] == "torch.from_numpy"
    # torch.tensor of anything but an array: the rule declines and torch's own rule (a graph node) answers
    assert _names(torch.tensor)[0] == "torch.tensor"
    assert Meaning.GRAPH in [rule.meaning for rule in list(rules_for(torch.tensor))[1:]]
