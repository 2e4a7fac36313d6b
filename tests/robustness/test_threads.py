"""Concurrent calls of compiled and registered functions get eager's results; one code captures once per variant."""
import threading

import torch

import jitcore as jit
from jitcore.runtime.cache import STATS


def _work(x, k):
    return torch.tanh(x * k) + x.shape[0]


def _hammer(fn, shapes, results, errors, calls=30):
    try:
        for i in range(calls):
            x = torch.ones(shapes[i % len(shapes)]) * (i % 5)
            out = fn(x, 2)
            expected = _work(x, 2)
            if not torch.allclose(out, expected):
                errors.append(f"mismatch at call {i}")
        results.append(True)
    except Exception as exc:  # reported by the test
        errors.append(repr(exc))


def test_threads_calling_one_compiled_function_match_eager_and_capture_each_variant_once():
    compiled = jit.compile(_work, backend="eager")
    results, errors = [], []
    shapes = [(2, 3), (4, 3), (5,)]
    threads = [threading.Thread(target=_hammer, args=(compiled, shapes, results, errors)) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(results) == 6
    assert STATS.captures == len(shapes)


def test_threads_calling_a_registered_function_inside_enabled_match_eager():
    jit.register(_work)
    results, errors = [], []
    try:
        with jit.enabled(backend="eager"):
            threads = [threading.Thread(target=_hammer, args=(_work, [(3,), (6,)], results, errors))
                       for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
    finally:
        jit.unregister(_work)
    assert errors == []
    assert len(results) == 4
