"""Capture: ordering and equality of lists, tuples and dicts, as Python compares them (capture/values/compare.py).

Sequences compare lexicographically: the first pair of items that differ decides, else the lengths. A list is never
ordered against a tuple (TypeError), nor a dict against a dict. Each case matches eager in one graph.
"""

import collections

import pytest
import torch

import jitcore as jit
from tests.support import check_against_eager, check_registered_against_eager, randn


def one_graph(fn, *arg_sets):
    """Same as eager in one graph, and no graph break (fullgraph accepts it)."""
    check_against_eager(fn, *arg_sets)
    jit.compile(fn, backend="eager", fullgraph=True)(*arg_sets[0])


def test_tuple_prefix_orders_before_the_longer_tuple():
    def f(x):
        return x + ((1, 2) < (1, 2, 3)) + ((1, 2, 3) <= (1, 2)) * 10

    one_graph(f, (randn(3, seed=1),))


def test_first_differing_item_decides_every_ordering():
    def f(x):
        a, b = (1, 5, 0), (1, 4, 9)
        return x + (a > b) + 2 * (a >= b) + 4 * (a < b) + 8 * (a <= b) + 16 * ([1, "a"] < [1, "b"])

    one_graph(f, (randn(3, seed=1),))


def test_version_tuples_built_from_shapes_compare_like_python():
    def f(x):
        version = (x.dim(), x.shape[0])
        return x * 2 if version >= (2, 3) else x * 3

    check_against_eager(f, (randn(4, 2, seed=1),), (randn(2, 2, seed=2),), expected_graphs=2)  # one per shape
    jit.compile(f, backend="eager", fullgraph=True)(randn(4, 2, seed=1))


def test_nested_sequences_compare_item_by_item():
    def f(x):
        return x + ([(1, 2), (3, 4)] < [(1, 2), (3, 5)]) + ((1, [2, 3]) == (1, [2, 3]))

    one_graph(f, (randn(3, seed=1),))


def test_ordering_a_list_against_a_tuple_raises_type_error():
    def f(x):
        return x + ([1, 2] < (1, 2))

    check_against_eager(f, (randn(3, seed=1),), expected_graphs=0)


def test_ordering_items_of_different_types_raises_type_error():
    def f(x):
        return x + ((1, 2) < (1, "a"))

    check_against_eager(f, (randn(3, seed=1),), expected_graphs=0)


def test_equal_dicts_in_another_insertion_order_are_equal():
    def f(x):
        return x + ({"a": 1, "b": 2} == {"b": 2, "a": 1}) + 2 * ({"a": 1} != {"a": 2})

    one_graph(f, (randn(3, seed=1),))


def test_ordered_dicts_compare_their_order():
    def f(x):
        a = collections.OrderedDict(a=1, b=2)
        return x + (a == collections.OrderedDict(b=2, a=1)) + 2 * (a == {"b": 2, "a": 1})

    check_against_eager(f, (randn(3, seed=1),))


def test_the_same_tensor_in_both_lists_compares_equal_by_identity():
    def f(x):
        return x + ([x, 1] == [x, 1])

    one_graph(f, (randn(3, seed=1),))


def test_list_with_tensor_items_that_differ_is_a_data_dependent_break():
    def f(x):
        y = x + 1
        return [x] == [y]

    with pytest.raises(jit.GraphBreakError):
        jit.compile(f, backend="eager", fullgraph=True)(randn(3, seed=1))


def test_lists_passed_in_compare_equal_after_an_append_to_one(monkeypatch):
    """Lists passed in are read lazily (appends recorded, items unread): `==` reads them as Python does, for two
    lists and for one list passed twice (strict: a fault is raised, not hidden by a native fallback)."""
    monkeypatch.setattr(jit.config, "strict", True)
    def f(x, la, lb):
        la.extend([1, 1])
        return x + (la == lb) + 2 * (la != [1, 2])

    shared = [1, 2]
    arg_sets = [(randn(3, seed=1), [1, 2], [1, 2]), (randn(3, seed=2), shared, shared)]
    check_against_eager(f, *arg_sets, expected_graphs=None)
    check_registered_against_eager(f, *arg_sets)
