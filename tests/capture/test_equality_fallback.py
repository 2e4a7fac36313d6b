"""`a == b` / `a != b` where neither value's kind models the comparison: Python's default (identity) only when both
types keep object's __eq__ and __ne__; bound callables compare by function and receiver; anything else (dicts,
NumPy dtypes, user classes with __eq__) is compared as Python does it, in the graph or natively, never by identity
of a copy. Results match eager through `jit.compile` and `register` + `enabled()`."""
import numpy as np
import pytest
import torch

import jitcore as jit
from tests.support import arg_sets, check_against_eager, check_registered_against_eager


@pytest.fixture(autouse=True)
def _strict(monkeypatch):
    monkeypatch.setattr(jit.config, "strict", True)


def _both_doors(fn, *sets, graphs=None):
    check_against_eager(fn, *sets, expected_graphs=graphs)
    check_registered_against_eager(fn, *sets)


def test_equal_dicts_in_another_order_compare_equal_in_one_graph():
    def f(x):
        return x + ({"a": 1, "b": 2} == {"b": 2, "a": 1}), x - ({"a": 1} != {"a": 2})

    _both_doors(f, *arg_sets((3,)), graphs=1)


def test_numpy_dtype_compared_with_a_numpy_scalar_type_matches_eager():
    def f(x):
        a = x.numpy()
        return x + (1 if a.dtype == np.float32 else 2)

    _both_doors(f, *arg_sets((3,)))


class _Anything:
    """Equal to everything: its __eq__, not identity, decides."""

    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


class _Plain:
    pass


_ANY, _ONE, _TWO = _Anything(), _Plain(), _Plain()


def test_object_with_its_own_eq_decides_against_a_plain_object():
    def f(x):
        return x + (_ONE == _ANY) + (_ANY != _TWO)

    _both_doors(f, *arg_sets((3,)))


def test_plain_objects_compare_by_identity_in_one_graph():
    def f(x):
        return x + (_ONE == _ONE) * 2 + (_ONE == _TWO) * 4 + (_ONE != _TWO) * 8

    _both_doors(f, *arg_sets((3,)), graphs=1)


def test_builtin_functions_compare_like_eager_in_one_graph():
    def f(x):
        return x + (torch.relu == torch.relu) * 2 + (torch.relu == torch.tanh) * 4 + (len != abs) * 8

    _both_doors(f, *arg_sets((3,)), graphs=1)
