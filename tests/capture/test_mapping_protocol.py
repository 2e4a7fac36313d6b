"""Equality and the mapping protocol as Python has them: dicts compare by entries whatever their order (two
OrderedDicts by order too), constants compare by value, objects whose type has its own __eq__ are never compared
by identity (a NumPy dtype against np.float32); dict(m), dict.update(m) and `**m` of a mapping that is not a dict
read m.keys() and m[key], of an iterable read its pairs.

Each case runs eagerly, through `jit.compile(backend="eager")` and `register` + `enabled()` (tests.capture.
test_live_containers._check), and compares results, exceptions and the arguments afterwards."""
import collections
import collections.abc

import numpy as np
import pytest

from tests.capture.test_live_containers import _check
from tests.support import check_against_eager, randn


def dict_equality_ignores_order(x):
    a = {"a": 1, "b": 2}
    b = {"b": 2, "a": 1}
    return x + (a == b) + (a != b) * 10, {1: 2} == {1: 3}, [1, 2] == [1, 2], (1, 2) == [1, 2]


def ordered_dict_equality(x, first, second, plain):
    return x, first == second, first == plain, plain == second, first != second


def numpy_dtype_comparison(x):
    a = x.numpy()
    return x + 1, a.dtype == np.float32, a.dtype != np.float64


class Scaled(collections.abc.MutableMapping):
    """A mapping that is not a dict: its items are read through __getitem__."""

    def __init__(self, **entries):
        self.store = dict(entries)

    def __getitem__(self, key):
        return self.store[key] * 10

    def __setitem__(self, key, value):
        self.store[key] = value

    def __delitem__(self, key):
        del self.store[key]

    def __iter__(self):
        return iter(self.store)

    def __len__(self):
        return len(self.store)

    def __eq__(self, other):
        return isinstance(other, Scaled) and other.store == self.store

    def __deepcopy__(self, memo):
        return Scaled(**self.store)


def mapping_to_dict(x, m):
    d = dict(m)
    e = {"z": 1}
    e.update(m)
    f = {**m, "q": 2}
    return x + d["a"] + len(e) + f["b"], d, e, f


def mapping_as_keywords(x, m):
    def add(a, b):
        return a + b
    return x + add(**m)


def dict_from_pairs(x):
    return x + 1, dict([("a", 1), ("b", 2)], c=3), dict(zip("ab", (1, 2)))


def dict_from_bad_pairs(x):
    return x, dict([(1, 2, 3)])


@pytest.mark.parametrize("fn, arg_sets", [
    (dict_equality_ignores_order, [(randn(3),)]),
    (ordered_dict_equality, [(randn(3), collections.OrderedDict(a=1, b=2), collections.OrderedDict(b=2, a=1),
                              {"b": 2, "a": 1}),
                             (randn(3), collections.OrderedDict(a=1, b=2), collections.OrderedDict(a=1, b=2),
                              {"a": 1})]),
    (numpy_dtype_comparison, [(randn(3),)]),
    (mapping_to_dict, [(randn(3), Scaled(a=1, b=2))]),
    (mapping_as_keywords, [(randn(3), Scaled(a=1, b=2))]),
    (dict_from_pairs, [(randn(3),)]),
    (dict_from_bad_pairs, [(randn(3),)]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_equality_and_mappings_as_python(fn, arg_sets):
    _check(fn, *arg_sets)


def test_dict_equality_and_mapping_reads_stay_in_one_graph():
    check_against_eager(dict_equality_ignores_order, (randn(3),))
    check_against_eager(dict_from_pairs, (randn(3),))
