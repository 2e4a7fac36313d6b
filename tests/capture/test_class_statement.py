"""Capture: a class statement inside the compiled function is a break at the call of __build_class__: the class is
made natively, a new one each call as in Python (its body's side effects happen each call), and the code before and
after the statement is compiled (before: the frame ran natively whole)."""

import torch

import jitcore as jit
from tests.support import CountingBackend, assert_same, randn


def class_then_method(x):
    y = x.sin()

    class Local:
        k = 2

        def go(self, t):
            return t * self.k
    return Local().go(y) + 1


def test_code_around_a_class_statement_is_compiled():
    backend = CountingBackend()
    compiled = jit.compile(class_then_method, backend=backend)
    x = randn(2, 3)
    assert_same(class_then_method(x), compiled(x))
    assert backend.graph_count == 2


def test_results_match_eager_over_many_calls():
    compiled = jit.compile(class_then_method, backend="eager")
    for seed in range(12):
        x = randn(3, seed=seed)
        assert_same(class_then_method(x), compiled(x))


def returns_instance(x, log):
    class Box:
        log.append("body")

        def __init__(self, v):
            self.v = v
    return Box(x * 2)


def test_a_new_class_each_call_and_its_body_runs_each_call():
    compiled = jit.compile(returns_instance, backend="eager")
    x = randn(3)
    eager_log, compiled_log = [], []
    e1, e2 = returns_instance(x, eager_log), returns_instance(x, eager_log)
    c1, c2 = compiled(x, compiled_log), compiled(x, compiled_log)
    assert compiled_log == eager_log == ["body", "body"]
    assert type(c1) is not type(c2)
    assert type(c1).__qualname__ == type(e1).__qualname__
    assert_same(e2.v, c2.v)


def test_class_statement_under_enabled():
    jit.register(class_then_method)
    x = randn(2, 3)
    with jit.enabled(backend="eager"):
        got = class_then_method(x)
    assert_same(class_then_method(x), got)
