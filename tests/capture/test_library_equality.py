"""Capture: `==`/`!=` on objects whose type's comparison is written in C by a library (numpy's dtype equals the
scalar type np.float32) is never folded to the identity test; only object's, builtins' and traced Python methods
fall back to identity."""

import numpy as np
import torch

import jitcore as jit
from tests.support import CountingBackend, assert_same, randn


def _dtype_is_float32(a, x):
    return x + (1 if a.dtype == np.float32 else 2)


def _dtype_is_not_float32(a, x):
    return x + (1 if a.dtype != np.float32 else 2)


def test_numpy_dtype_equals_scalar_type_like_python():
    for fn in (_dtype_is_float32, _dtype_is_not_float32):
        x = randn(2, 3)
        compiled = jit.compile(fn, backend=CountingBackend())
        for a in (x.numpy(), x.double().numpy()):
            assert_same(fn(a, x), compiled(a, x))


def test_numpy_dtype_compare_inside_enabled():
    x = randn(3)
    jit.register(_dtype_is_float32)
    with jit.enabled(backend="eager"):
        got = _dtype_is_float32(x.numpy(), x)
    assert_same(_dtype_is_float32(x.numpy(), x), got)


class _Plain:
    pass


def test_plain_objects_still_compare_by_identity_in_one_graph():
    a, b = _Plain(), _Plain()

    def fn(x, p, q):
        return x + (1 if p == q else 2) + (3 if p != p else 4)

    x = randn(2)
    for p, q in ((a, b), (a, a)):
        # a fresh compile per pair: aliasing between two arguments is a guard question of its own
        backend = CountingBackend()
        assert_same(fn(x, p, q), jit.compile(fn, backend=backend)(x, p, q))
        assert backend.graph_count == 1
