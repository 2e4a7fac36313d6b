"""Reading the environment while tracing: `os.environ.get`, `os.getenv`, `k in os.environ`, `os.environ[k]` are
constants guarded on that variable, so changing it between calls recompiles and never gives a stale result; a
missing key raises KeyError where Python does; a try/finally around the read (transformers' attention dispatch)
keeps one graph.
"""

import os

import pytest
import torch

import jitcore as jit
from tests.support import CountingBackend, check_against_eager, check_registered_against_eager, randn

_KEY = "JITCORE_TEST_ENVIRON_FLAG"


@pytest.fixture
def flag(monkeypatch):
    monkeypatch.setenv(_KEY, "3")
    return monkeypatch


def env_get(x):
    return x * float(os.environ.get(_KEY, "1"))


def getenv(x):
    return x * float(os.getenv(_KEY, default="1"))


def env_in(x):
    if _KEY in os.environ:
        return x + 1
    return x - 1


def env_item(x):
    return x * float(os.environ[_KEY])


def env_item_missing_caught(x):
    try:
        value = os.environ[_KEY + "_MISSING"]
    except KeyError:
        value = "5"
    return x * float(value)


def env_in_try_finally(x):
    state = {"inside": True}
    try:
        scale = float(os.environ.get(_KEY, "2"))
        y = x * scale
    finally:
        state["inside"] = False
    return y + 1, state


@pytest.mark.parametrize("fn", [env_get, getenv, env_in, env_item, env_item_missing_caught, env_in_try_finally],
                         ids=lambda f: f.__name__)
def test_environment_read_is_one_graph(flag, fn):
    check_against_eager(fn, (randn(3, seed=1),), (randn(3, seed=2),), expected_graphs=1)
    assert check_registered_against_eager(fn, (randn(3, seed=1),)).graph_count == 1
    assert not jit.explain(fn, randn(3)).breaks


@pytest.mark.parametrize("fn", [env_get, getenv, env_in], ids=lambda f: f.__name__)
def test_changing_the_variable_recompiles(monkeypatch, fn):
    counting = CountingBackend()
    compiled = jit.compile(fn, backend=counting)
    x = randn(3)
    for value in ("3", "4", None, "3"):
        if value is None:
            monkeypatch.delenv(_KEY, raising=False)
        else:
            monkeypatch.setenv(_KEY, value)
        assert torch.equal(compiled(x), fn(x)), value
    assert counting.graph_count == 3


def test_missing_key_raises_key_error(monkeypatch):
    monkeypatch.delenv(_KEY, raising=False)
    compiled = jit.compile(env_item, backend="eager")
    with pytest.raises(KeyError):
        compiled(randn(3))
    monkeypatch.setenv(_KEY, "2")
    assert torch.equal(compiled(randn(3)), randn(3) * 2)
