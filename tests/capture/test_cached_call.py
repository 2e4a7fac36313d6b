"""Capture: calls of a functools.lru_cache wrapper that existed before the call (capture/values/cached_call.py):
the real cache answers at capture time, the function's effects happen once as in Python, and the entry is
guarded on the cache keeping its keys."""

import functools

import jitcore as jit
from tests.support import randn

CALLS = []


@functools.lru_cache
def _enabled():
    CALLS.append("enabled")
    return True


@functools.lru_cache(None)
def _warn_once(self, message):
    CALLS.append(message)


class _Logger:
    warn_once = _warn_once


LOG = _Logger()


@functools.lru_cache(None)
def _scale(n):
    return [n]  # an answer that is not a constant


def _counting_backend(graphs):
    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward
    return backend


def test_an_existing_lru_cache_wrapper_is_asked_once_and_stays_in_one_graph():
    _enabled.cache_clear()
    CALLS.clear()

    def f(x):
        if _enabled():
            x = x + 1
        return x * 2

    graphs = []
    compiled = jit.compile(f, backend=_counting_backend(graphs))
    x = randn(3, seed=1)
    for _ in range(3):
        assert compiled(x).equal(f(x))
    assert CALLS == ["enabled"]  # the function ran once, as the cache runs it in Python
    assert len(graphs) == 1


def test_a_warning_once_method_warns_once_without_breaking_the_graph():
    _warn_once.cache_clear()
    CALLS.clear()

    def f(x, message):
        y = x.sin()
        LOG.warn_once(message)
        return y + 1

    graphs = []
    compiled = jit.compile(f, backend=_counting_backend(graphs), fullgraph=True)
    x = randn(3, seed=2)
    assert compiled(x, "slow path").equal(f(x, "slow path"))
    assert compiled(x, "slow path").equal(x.sin() + 1)
    assert CALLS == ["slow path"]
    compiled(x, "other path")  # another key: the function runs for it, once
    compiled(x, "other path")
    assert CALLS == ["slow path", "other path"]


def test_a_cleared_cache_recaptures_and_runs_the_function_again():
    _enabled.cache_clear()
    CALLS.clear()

    def f(x):
        return x + 1 if _enabled() else x

    compiled = jit.compile(f, backend="eager")
    x = randn(3, seed=3)
    compiled(x)
    _enabled.cache_clear()
    compiled(x)
    assert CALLS == ["enabled", "enabled"]  # as Python: the cleared cache calls the function again


def test_another_receiver_is_another_key():
    _warn_once.cache_clear()
    CALLS.clear()
    other = _Logger()

    def f(x, log):
        log.warn_once("hi")
        return x + 1

    compiled = jit.compile(f, backend="eager")
    x = randn(3, seed=4)
    compiled(x, LOG)
    compiled(x, other)
    compiled(x, LOG)
    assert CALLS == ["hi", "hi"]


def test_an_answer_that_is_not_a_constant_breaks_and_keeps_the_object():
    def f(x):
        return x * len(_scale(3)), _scale(3)

    x = randn(3, seed=5)
    expected = f(x)
    got = jit.compile(f, backend="eager")(x)
    assert got[0].equal(expected[0])
    assert got[1] is expected[1]  # the very list the cache holds
