"""Capture: tensors as dict keys hash by identity, as in Python: `in`, lookup, iteration and a dict returned with
tensor keys all match eager in one graph; a missing tensor key breaks (its KeyError message prints data)."""

import pytest
import torch
from torch import nn

import jitcore as jit
from tests.support import CountingBackend, assert_same, randn

PARAM = nn.Parameter(torch.ones(2, 3))


def tensor_key_lookup(x):
    d = {x: 1}
    return x + (1 if x in d else 0) + d[x]


def parameter_key_with_str_key(x):
    d = {"a": x, PARAM: 3}
    return d["a"] + d[PARAM] + (1 if PARAM in d else 0)


def equal_valued_clone_is_another_key(x):
    y = x.clone()
    d = {x: 1}
    return x + (1 if y not in d else 0) + d.get(y, 10)


def iterate_tensor_keys(x):
    y = x * 2
    d = {x: 1, y: 2}
    total = x.new_zeros(x.shape)
    for k, v in d.items():
        total = total + k * v
    return total, len(d), [v for v in d.values()]


def setdefault_and_pop(x):
    y = x + 1
    d = {}
    d.setdefault(x, 5)
    d[y] = 7
    return x * d.pop(x) + y * d[y], len(d)


@pytest.mark.parametrize("fn", [tensor_key_lookup, parameter_key_with_str_key, equal_valued_clone_is_another_key,
                                iterate_tensor_keys, setdefault_and_pop])
def test_tensor_keys_by_identity_in_one_graph(fn):
    backend = CountingBackend()
    compiled = jit.compile(fn, backend=backend)
    for seed in (0, 1):
        x = randn(2, 3, seed=seed)
        assert_same(fn(x), compiled(x))
    assert backend.graph_count == 1


def test_dict_with_tensor_keys_returned():
    def fn(x):
        y = x + 1
        return {x: 1, y: 2}, y

    x = randn(3)
    d, y = jit.compile(fn, backend="eager")(x)
    assert list(d.values()) == [1, 2]
    keys = list(d)
    assert keys[0] is x and keys[1] is y


def test_missing_tensor_key_raises_like_python():
    def fn(x):
        return {x: 1}[x + 1]

    with pytest.raises(KeyError):
        fn(randn(3))
    with pytest.raises(KeyError):
        jit.compile(fn, backend="eager")(randn(3))


def test_tensor_keys_under_enabled():
    jit.register(iterate_tensor_keys)
    x = randn(2, 3)
    with jit.enabled(backend="eager"):
        got = iterate_tensor_keys(x)
    assert_same(iterate_tensor_keys(x), got)


def test_tensor_key_written_into_a_dict_passed_in():
    def fn(x, d):
        y = x * 2
        d[y] = 1
        d.pop("a", None)
        return y + len(d)

    x = randn(3)
    eager_d, compiled_d = {"a": 1, "b": 2}, {"a": 1, "b": 2}
    expected = fn(x, eager_d)
    got = jit.compile(fn, backend="eager")(x, compiled_d)
    assert_same(expected, got)
    assert list(compiled_d)[0] == "b" and len(compiled_d) == 2
    (key,) = [k for k in compiled_d if isinstance(k, torch.Tensor)]
    assert key is not None and compiled_d[key] == 1
    assert_same(key, x * 2)
