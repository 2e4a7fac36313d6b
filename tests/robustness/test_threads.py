"""Concurrent calls of compiled and registered functions get eager's results; one code captures once per variant."""
import threading

import torch

import jitcore as jit
from jitcore.runtime.cache import STATS


def _work(x, k):
    return torch.tanh(x * k) + x.shape[0]


def _run_all(threads) -> None:
    for t in threads:
        t.start()
    for t in threads:
        t.join()


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
    _run_all(threads)
    assert errors == []
    assert len(results) == 6
    assert STATS.captures == len(shapes)


def _hammer_enabled(fn, shapes, results, errors):
    with jit.enabled(backend="eager"):
        _hammer(fn, shapes, results, errors)


def test_threads_calling_a_registered_function_inside_their_own_enabled_blocks_match_eager():
    jit.register(_work)
    results, errors = [], []
    try:
        threads = [threading.Thread(target=_hammer_enabled, args=(_work, [(3,), (6,)], results, errors))
                   for _ in range(4)]
        _run_all(threads)
    finally:
        jit.unregister(_work)
    assert errors == []
    assert len(results) == 4
    assert STATS.captures == 2  # one per shape, whichever thread got there first


def test_enabled_in_one_thread_does_not_compile_calls_in_another(counting):
    """Blocks are per thread (like grad mode): a thread without a block runs the registered function natively
    even while another thread's block has its prologue installed."""
    def work(x):
        return x.sin() * 2

    jit.register(work)
    inside = threading.Event()
    release = threading.Event()
    outside_results, errors = [], []

    def holder():
        with jit.enabled(backend=counting):
            work(torch.ones(3))
            work(torch.ones(3))
            inside.set()
            release.wait(10)

    def outsider():
        inside.wait(10)
        try:
            for n in (3, 4, 5):
                x = torch.full((n,), 0.5)
                outside_results.append(torch.allclose(work(x), x.sin() * 2))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(repr(exc))
        release.set()

    try:
        threads = [threading.Thread(target=holder), threading.Thread(target=outsider)]
        _run_all(threads)
    finally:
        jit.unregister(work)
    assert errors == [] and outside_results == [True, True, True]
    assert counting.graph_count == 1  # the holder's shape only: the outsider's shapes were never captured
