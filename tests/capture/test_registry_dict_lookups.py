"""Lookups in a dict whose keys jitcore does not model as constants (torch.utils._pytree.SUPPORTED_NODES, keyed by
classes and collections.namedtuple): `key in d`, `d[key]` and `d.get(key)` with a key that hashes by identity are
answered while tracing and guarded on that one entry, so pytree's tree_flatten stays in one graph, and a registry
changed between calls recompiles. Note [Lookups in a registry dict] (capture/values/registry_dict.py)."""

import collections

import torch
import torch.utils._pytree as pytree

import jitcore as jit
from tests.support import CountingBackend, check_against_eager, randn


def _flatten_and_check(x):
    leaves, spec = pytree.tree_flatten((x, [x * 2, {"a": x + 1}]))
    return sum(leaves), pytree.tree_is_leaf(x), pytree.tree_is_leaf([x])


def test_pytree_flatten_and_is_leaf_are_one_graph():
    check_against_eager(_flatten_and_check, (randn(3, seed=1),), (randn(3, seed=2),), expected_graphs=1)


def _double(x):
    return x * 2


def _negate(x):
    return -x


#: keyed by functions (and namedtuple's factory, as SUPPORTED_NODES is): not constant keys for the dict model
_HANDLERS = {collections.namedtuple: None, _double: ("double", _double)}


def _dispatch(x, fn):
    if fn in _HANDLERS:
        name, handler = _HANDLERS[fn]
        return handler(x), name
    return x - 1, _HANDLERS.get(fn, "missing")


def test_a_registry_lookup_is_one_graph_and_recompiles_when_the_entry_changes():
    counting = check_against_eager(_dispatch, (randn(3, seed=1), _double), (randn(3, seed=2), _negate),
                                   expected_graphs=2)
    compiled = jit.compile(_dispatch, backend=counting)
    x = randn(3, seed=3)
    _HANDLERS[_negate] = ("negate", _negate)
    try:
        out, name = compiled(x, _negate)
        torch.testing.assert_close(out, -x)
        assert name == "negate"
    finally:
        del _HANDLERS[_negate]
    out, name = compiled(x, _negate)
    torch.testing.assert_close(out, x - 1)
    assert name == "missing"


_LISTS = {collections.namedtuple: [], _double: []}


def _append_to_entry(x):
    _LISTS[_double].append(1)
    return x + len(_LISTS[_double])


def test_a_mutable_entry_is_not_modelled_and_its_mutation_happens_once_per_call():
    compiled = jit.compile(_append_to_entry, backend=CountingBackend())
    x = randn(3, seed=1)
    torch.testing.assert_close(compiled(x), x + 1)
    torch.testing.assert_close(compiled(x), x + 2)
    assert _LISTS[_double] == [1, 1]


def _flatten_up_to_and_membership(x):
    _, spec = pytree.tree_flatten((x, [x * 2]))
    subtrees = spec.flatten_up_to((x + 1, [x - 1]))
    # BUILTIN_TYPES is a frozenset of classes and collections.namedtuple: members compared by identity
    return sum(subtrees), tuple in pytree.BUILTIN_TYPES, collections.namedtuple in pytree.BUILTIN_TYPES, \
        len in pytree.BUILTIN_TYPES


def test_a_frozenset_of_classes_and_functions_is_modelled():
    check_against_eager(_flatten_up_to_and_membership, (randn(3, seed=1),), (randn(3, seed=2),), expected_graphs=1)
