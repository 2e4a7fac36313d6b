"""copy.deepcopy of a collections.deque, OrderedDict or defaultdict (passed in, read from a global or made inside) is
traced in one graph: their `__reduce_ex__` is modelled as the C types build it (the type, its constructor arguments
(a deque's maxlen, a defaultdict's factory), no state, the items as an iterator), so copy._reconstruct makes a new
container of the same type whose nested items are copies, as eager does."""

import collections
import copy

import pytest
import torch

import jitcore as jit
from tests.support import check_against_eager, randn

_DEQUE = collections.deque([[1], [2]], maxlen=3)
_ORDERED = collections.OrderedDict([("b", [1]), ("a", [2])])
_DEFAULT = collections.defaultdict(list, {"k": [1]})


def _copy_global_deque(x):
    d = copy.deepcopy(_DEQUE)
    d[0].append(5)
    d.append([3])
    d.append([4])
    return x + len(d), d, d.maxlen, list(_DEQUE), d[0] is _DEQUE[0]


def _copy_global_ordered(x):
    o = copy.deepcopy(_ORDERED)
    o["b"].append(7)
    o.move_to_end("b")
    return x * len(o), o, list(o), list(_ORDERED.items()), type(o).__name__


def _copy_global_default(x):
    d = copy.deepcopy(_DEFAULT)
    d["k"].append(2)
    d["new"].append(3)
    return x - len(d), d, d.default_factory is list, dict(_DEFAULT)


def _copy_made_inside(x):
    d = collections.deque([1, 2])
    o = collections.OrderedDict(a=[x.shape[0]])
    f = collections.defaultdict(int, {"n": 1})
    cd, co, cf = copy.deepcopy((d, o, f))
    cd.appendleft(0)
    co["a"].append(1)
    cf["m"] += 1
    return x + 1, cd, co, cf, d, o, f


def _copy_argument(x, d):
    c = copy.deepcopy(d)
    c.append(len(c))
    return x + len(c), c


@pytest.mark.parametrize("fn", [_copy_global_deque, _copy_global_ordered, _copy_global_default, _copy_made_inside],
                         ids=lambda fn: fn.__name__)
def test_deepcopy_of_collections_matches_eager_in_one_graph(fn):
    check_against_eager(fn, (randn(3, seed=1),), (randn(3, seed=2),), expected_graphs=1)
    assert jit.explain(fn, randn(3, seed=3)).breaks == []
    assert list(_DEQUE) == [[1], [2]] and _ORDERED == {"b": [1], "a": [2]} and dict(_DEFAULT) == {"k": [1]}


def test_deepcopy_of_a_deque_argument_leaves_it_unchanged():
    d = collections.deque([1, 2], maxlen=4)
    check_against_eager(_copy_argument, (randn(3, seed=1), d), (randn(3, seed=2), d), expected_graphs=1)
    assert jit.explain(_copy_argument, randn(3, seed=3), d).breaks == []
    assert list(d) == [1, 2]
