"""Capture: attributes of functions and functools.partial objects made inside the compiled function, read and
written as Python does (functools.wraps, __wrapped__, __code__, __module__, __dict__, p.__call__, hasattr on a
missing attribute), in one graph."""

import functools

import pytest
import torch

import jitcore as jit
from tests.support import CountingBackend, assert_same, randn


def _scale(t, a=1.0):
    """Scale t."""
    return t * a


def partial_dunder_call(x):
    p = functools.partial(torch.add, alpha=2)
    return p.__call__(x, x)


def partial_hasattr(x):
    p = functools.partial(_scale, a=1.0)
    return x + (1 if hasattr(p, "func") else 0) + (10 if hasattr(p, "nope") else 0) + (
        100 if hasattr(p, "__call__") else 0)


def partial_dict_written_through(x):
    p = functools.partial(_scale, a=2.0)
    n = len(p.__dict__)
    p.__dict__["tag"] = 3
    return p(x) + n + p.tag + len(p.__dict__), type(p).__name__


def partial_getattr_default(x):
    p = functools.partial(_scale, a=2.0)
    return p(x) + getattr(p, "missing", 5)


def wraps_a_global(x):
    @functools.wraps(_scale)
    def w(*a, **k):
        return _scale(*a, **k)
    return w(x, 2.0), w.__name__, w.__doc__, w.__module__, w.__wrapped__ is _scale


def decorator_with_wraps(x):
    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*a, **k):
            return fn(*a, **k) + 1
        return wrapper

    @deco
    def g(t):
        return t * 2
    return g(x), g.__name__, g.__qualname__, g.__wrapped__.__name__


def code_and_names(x):
    def g(t, u=1):
        """doc"""
        return t
    return x + len(g.__name__) + g.__code__.co_argcount, g.__doc__, g.__module__, hasattr(g, "nope")


def function_dict_attributes(x):
    def g(t):
        return t
    g.calls = 2
    return g(x) * g.calls, getattr(g, "calls", 0), getattr(g, "other", 7), sorted(g.__dict__)


@pytest.mark.parametrize("fn", [partial_dunder_call, partial_hasattr, partial_dict_written_through,
                                partial_getattr_default, wraps_a_global, decorator_with_wraps, code_and_names,
                                function_dict_attributes])
def test_function_and_partial_attributes_in_one_graph(fn):
    backend = CountingBackend()
    compiled = jit.compile(fn, backend=backend)
    for seed in (0, 1):
        x = randn(2, 3, seed=seed)
        assert_same(fn(x), compiled(x))
    assert backend.graph_count == 1


def test_wraps_under_enabled():
    jit.register(decorator_with_wraps)
    x = randn(3)
    with jit.enabled(backend="eager"):
        got = decorator_with_wraps(x)
    assert_same(decorator_with_wraps(x), got)


def test_function_with_written_attributes_returned_matches_eager():
    def fn(x):
        def g(t):
            return t
        g.tag = 1
        return x + 1, g

    x = randn(3)
    y, g = jit.compile(fn, backend="eager")(x)
    assert_same(fn(x)[0], y)
    assert g.tag == 1 and g(2) == 2


def test_writing_code_of_a_function_made_inside_breaks_and_matches():
    def other(t):
        return t * 10

    def fn(x):
        def g(t):
            return t
        g.__code__ = other.__code__
        return g(x)

    x = randn(3)
    assert_same(fn(x), jit.compile(fn, backend="eager")(x))


def test_wrapper_returned_keeps_its_wrapped_attributes():
    def fn(x):
        @functools.wraps(_scale)
        def w(*a, **k):
            return _scale(*a, **k)
        w.extra = [1]
        return x + 1, w, w.__dict__

    x = randn(3)
    _, w, d = jit.compile(fn, backend="eager")(x)
    assert w.__name__ == "_scale" and w.__doc__ == "Scale t." and w.__wrapped__ is _scale
    assert w.extra == [1] and w.__dict__ is d
    assert_same(w(x, 3.0), _scale(x, 3.0))
