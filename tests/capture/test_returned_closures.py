"""Capture: a closure or lambda made inside the compiled function and returned, then called outside: results
equal eager's, the cells hold the variables' final values, closures sharing a variable share the cell, cells of
functions that existed before are the same cells; one graph, through jit.compile and register + enabled().
"""

import torch

import jitcore as jit
from tests.support import CountingBackend, assert_same, randn


def compare(fn, use, *args_fns):
    """Call fn eagerly, compiled and registered on fresh arguments; `use(result)` (which calls what was
    returned) must agree, and each compiled door must have made exactly one graph."""
    expected = use(fn(*[a() for a in args_fns]))
    counting = CountingBackend()
    assert_same(expected, use(jit.compile(fn, backend=counting)(*[a() for a in args_fns])))
    assert counting.graph_count == 1
    counting = CountingBackend()
    jit.register(fn)
    try:
        with jit.enabled(backend=counting):
            got = fn(*[a() for a in args_fns])
    finally:
        jit.unregister(fn)
    assert_same(expected, use(got))
    assert counting.graph_count == 1


def x_arg():
    return randn(3, seed=1)


def test_a_lambda_over_a_tensor_computed_inside():
    def f(x):
        y = x + 1
        return lambda t: t * 2 + y

    compare(f, lambda g: g(randn(3, seed=2)), x_arg)


def test_a_cell_holds_the_final_value_of_its_variable():
    def f(x):
        scale = x.sum()

        def g(t):
            return t * scale
        scale = scale * 5
        return g

    compare(f, lambda g: g(randn(3, seed=2)), x_arg)


def test_closures_sharing_a_variable_share_the_cell():
    def f(x):
        n = 0

        def tick():
            nonlocal n
            n += 1
            return n

        def peek():
            return n
        tick()
        return x.sin(), tick, peek

    compare(f, lambda r: (r[0], r[1](), r[1](), r[2](), r[1].__closure__[0] is r[2].__closure__[0]), x_arg)


def test_defaults_names_and_a_list_of_lambdas():
    def f(x):
        def scaled(t, s=x.shape[0]):
            return t * s
        return x - 1, scaled, [lambda t, i=i: t * i for i in range(3)]

    compare(f, lambda r: (r[0], r[1].__name__, r[1].__qualname__, r[1].__defaults__, r[1](randn(3, seed=3)),
                          [g(randn(3, seed=4)) for g in r[2]]), x_arg)


def test_a_closure_made_by_an_inlined_factory_and_a_nested_factory():
    def make(scale):
        return lambda t: t * scale + 1

    def f(x):
        x = x.exp()

        def outer(t):
            def inner(k):
                return t * k + x
            return inner
        return make(x.sum()), outer

    compare(f, lambda r: (r[0](randn(3, seed=5)), r[1](randn(3, seed=6))(2)), x_arg)


def test_a_closure_over_a_cell_of_an_existing_function_keeps_that_cell():
    def factory():
        base = [1]

        def f(x):
            base.append(2)
            return x + 1, lambda: len(base)
        return f, base

    f, base = factory()
    out = jit.compile(f, backend="eager")(randn(3, seed=1))
    assert out[1]() == len(base) == 2
    base.append(3)
    assert out[1]() == 3
