"""Callables that are not Python functions but carry a `__code__` (Cython's, such as NumPy's `np.random.randn`, a
bound method of a RandomState) are never inlined: their code holds no bytecode. The call breaks the graph, runs
natively (not as a compiled copy), and the tensor work around it is captured; results match eager."""
import operator

import numpy as np
import pytest
import torch

import jitcore as jit
from tests.breaks.helpers import assert_in_graphs
from tests.support import CountingBackend, assert_same, both_doors, randn

randn_alias = np.random.randn


@pytest.fixture(autouse=True)
def _strict(monkeypatch):
    """An internal error is raised, not contained: a fallback would hide it behind eager's own result."""
    monkeypatch.setattr(jit.config, "strict", True)


def _seeded(fn):
    def run(*args):
        np.random.seed(0)
        return fn(*args)
    return run


def _both_doors(fn, *arg_sets):
    counting = CountingBackend()
    with both_doors(fn, counting) as doors:
        for door in doors:
            for args in arg_sets:
                for _ in range(2):
                    assert_same(_seeded(fn)(*args), _seeded(door)(*args))
    return counting


def test_numpy_random_randn_breaks_cleanly_and_the_rest_is_captured():
    assert "cython" in type(np.random.randn.__func__).__name__

    def f(x):
        y = x * 2
        noise = torch.from_numpy(np.random.randn(2, 2)).float()
        return y + noise

    counting = _both_doors(f, (randn(2, 2, seed=1),), (randn(2, 2, seed=2),))
    assert_in_graphs(counting, operator.mul, operator.add)


def test_cython_method_read_from_a_global_alias_matches_eager():
    def f(x):
        return x + float(randn_alias())

    _both_doors(f, (randn(3, seed=1),))


def test_cython_method_of_a_random_state_argument_matches_eager():
    def f(x, state):
        return x - torch.as_tensor(state.rand(3), dtype=x.dtype)

    counting = CountingBackend()
    compiled = jit.compile(f, backend=counting)
    for seed in range(2):
        x = randn(3, seed=seed)
        assert_same(f(x, np.random.RandomState(seed)), compiled(x, np.random.RandomState(seed)))
