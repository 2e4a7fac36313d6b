"""copy.deepcopy of a set or frozenset (alone or inside a dict or list) is traced in one graph: set.__reduce_ex__
is modelled as CPython's (the type, the members in iteration order, no state), so the copy is a new set with the
same members, as eager makes it (Moonshine's generation config)."""

import copy

import pytest
import torch

from tests.support import check_against_eager, randn

_NAMES = {"encoder", "decoder", "head"}
_FROZEN = frozenset({3, 1, 2})
_NESTED = {"skip": {"a", "b"}, "keep": frozenset({"x"}), "list": [1, (2, {4})]}


def _copy_set(x):
    s = copy.deepcopy(_NAMES)
    return x + len(s), s, s is _NAMES, sorted(s)


def _copy_frozenset(x):
    s = copy.deepcopy(_FROZEN)
    return x * len(s), s, sorted(s)


def _copy_nested(x):
    c = copy.deepcopy(_NESTED)
    c["skip"].add("c")
    return x - len(c["skip"]), c, c["skip"] is _NESTED["skip"], sorted(_NESTED["skip"])


@pytest.mark.parametrize("fn", [_copy_set, _copy_frozenset, _copy_nested], ids=lambda fn: fn.__name__)
def test_deepcopy_of_sets_matches_eager_in_one_graph(fn):
    check_against_eager(fn, (randn(3, seed=1),), (randn(3, seed=2),), expected_graphs=1)
