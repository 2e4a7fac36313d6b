"""functools.partial objects and callable objects are accepted like torch.compile accepts them: the function
underneath is compiled, and the partial's positional and keyword arguments are applied to every call. Each case runs
eagerly, through `jit.compile` and through `register` + `enabled()`, with the same results and side effects."""
import functools

import torch

import jitcore as jit
from tests.support import assert_same, randn


def _scaled(x, bias, log, scale=1):
    log.append(scale)
    return torch.relu(x * scale + bias)


class _Affine:
    """A callable object whose __call__ is Python code."""

    def __init__(self, weight):
        self.weight = weight

    def __call__(self, x, log, shift=0.0):
        log.append(shift)
        return x * self.weight + shift


def _three_ways(partial):
    """(eager, compiled copy, under enabled()) forms of a callable."""
    compiled = jit.compile(partial, backend="eager")
    jit.register(partial)

    def under_enabled(*args, **kwargs):
        with jit.enabled(backend="eager"):
            return partial(*args, **kwargs)
    return compiled, under_enabled


def _check(partial, calls):
    compiled, under_enabled = _three_ways(partial)
    try:
        for make_args in calls:
            logs = []
            results = []
            for form in (partial, compiled, under_enabled):
                log = []
                results.append(form(*make_args(log)))
                logs.append(log)
            for result in results[1:]:
                assert_same(results[0], result)
            assert logs[0] == logs[1] == logs[2]
    finally:
        jit.unregister(partial)


def test_partial_with_keyword_is_compiled_with_the_keyword_applied():
    partial = functools.partial(_scaled, scale=2)
    _check(partial, [lambda log, s=s: (randn(4, seed=s), 0.5, log) for s in range(3)])


def test_partial_with_a_bound_positional_argument():
    partial = functools.partial(_scaled, randn(4, seed=7), scale=3)
    _check(partial, [lambda log, s=s: (float(s), log) for s in range(3)])


def test_partial_keyword_overridden_at_the_call():
    partial = functools.partial(_scaled, scale=2)
    compiled = jit.compile(partial, backend="eager")
    x = randn(4)
    eager_log, log = [], []
    assert_same(partial(x, 0.0, eager_log, scale=5), compiled(x, 0.0, log, scale=5))
    assert log == eager_log == [5]


def test_partial_of_a_callable_object_and_of_a_bound_method():
    affine = _Affine(randn(4, seed=1))
    for target in (functools.partial(affine, shift=1.5), functools.partial(affine.__call__, shift=-2.0)):
        _check(target, [lambda log, s=s: (randn(4, seed=s), log) for s in range(2)])


def test_compiled_partial_keeps_the_partials_arguments_and_attributes():
    partial = functools.partial(_scaled, scale=2)
    partial.tag = "mine"
    compiled = jit.compile(partial, backend="eager")
    assert isinstance(compiled, functools.partial)
    assert compiled.keywords == {"scale": 2}
    assert compiled.tag == "mine"
    assert compiled.func is not _scaled  # a compiled copy; _scaled itself is untouched
    assert _scaled.__code__ is partial.func.__code__


def test_explain_accepts_a_partial():
    partial = functools.partial(_scaled, scale=2)
    report = jit.explain(partial, randn(4), 0.0, [])
    assert report.graph_count == 1
