"""`dict(arg)` follows Python's protocol: an object with keys() is read as a mapping (jitcore breaks and runs it),
anything else as an iterable of pairs, where a pair of another length raises ValueError as in eager (never an
internal error). Unpacking of the wrong length raises eager's ValueError messages."""
import collections.abc

import pytest

import jitcore as jit
from tests.support import Args, check_against_eager, check_registered_against_eager, randn


@pytest.fixture(autouse=True)
def _strict(monkeypatch):
    monkeypatch.setattr(jit.config, "strict", True)


class _Mapping(collections.abc.MutableMapping):
    def __init__(self):
        self.d = {"a": 1, "b": 2}

    def __getitem__(self, k):
        return self.d[k]

    def __setitem__(self, k, v):
        self.d[k] = v

    def __delitem__(self, k):
        del self.d[k]

    def __iter__(self):
        return iter(self.d)

    def __len__(self):
        return len(self.d)


class _KeysOnly:
    """Not a Mapping, but has keys() and __getitem__: dict() reads it as a mapping."""

    def keys(self):
        return ["a", "bb"]

    def __getitem__(self, key):
        return len(key)


def _both_doors(fn, *sets):
    check_against_eager(fn, *sets, expected_graphs=None)
    check_registered_against_eager(fn, *sets)


@pytest.mark.parametrize("mapping", [_Mapping, _KeysOnly], ids=["MutableMapping", "keys-only"])
def test_dict_of_a_mapping_object_matches_eager(mapping):
    def f(x, m):
        d = dict(m)
        return x + d["a"] + len(d)

    _both_doors(f, (randn(3, seed=1), mapping()))


def test_dict_of_pairs_is_one_graph():
    def f(x):
        d = dict([("a", 1), ["b", 2], "cd"], e=5)
        return x + d["a"] + d["b"] + d["e"], d["c"]

    check_against_eager(f, (randn(3, seed=1),), expected_graphs=1)


@pytest.mark.parametrize("pairs", [[("a", 1, 2)], [("a",)], [(1, 2), "abc"]], ids=["three", "one", "second"])
def test_dict_of_a_pair_of_the_wrong_length_raises_value_error_like_eager(pairs):
    def f(x, pairs):
        try:
            return x + len(dict(pairs))
        except ValueError as error:
            return x - 1, str(error)

    _both_doors(f, Args(randn(3, seed=1), pairs))


@pytest.mark.parametrize("items", [[1], [1, 2, 3]], ids=["too-few", "too-many"])
def test_unpacking_the_wrong_number_of_values_raises_eagers_message(items):
    def f(x, items):
        messages = []
        try:
            a, b = items
        except ValueError as error:
            messages.append(str(error))
        try:
            a, *rest, b, c = items
        except ValueError as error:
            messages.append(str(error))
        return x + len(messages), messages

    _both_doors(f, Args(randn(3, seed=1), items))
