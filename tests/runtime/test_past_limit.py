"""Runtime: a frame past its cache limit (Note [Past the cache limit], runtime/cache.py).

A call that misses a full cache runs natively without capturing or walking the entries a second time; a frame
whose calls mostly miss gives up and runs natively without trying its entries (reported once); one whose calls
mostly hit keeps its entries; jit.reset() starts over. Results equal eager throughout.
"""
import torch

import jitcore as jit
from jitcore import events
from jitcore.runtime.cache import PAST_LIMIT_WINDOW
from jitcore.runtime.stats import STATS
from tests.support import CountingBackend, randn


def tagged(x, tag):
    return x * 2 if tag.startswith("a") else x - 1


class RunCounting(CountingBackend):
    """Counts the calls of the graphs it compiled."""

    def __init__(self):
        super().__init__()
        self.runs = 0

    def __call__(self, gm, example_inputs):
        forward = super().__call__(gm, example_inputs)

        def run(*args):
            self.runs += 1
            return forward(*args)
        return run


def call_all(compiled, tags, x):
    for tag in tags:
        torch.testing.assert_close(compiled(x, tag), tagged(x, tag))


def test_misses_past_the_limit_run_natively_without_capturing():
    backend = RunCounting()
    compiled = jit.compile(tagged, backend=backend, cache_limit=2)
    x = randn(3)
    call_all(compiled, ["a0", "b0"], x)
    captures = STATS.captures
    call_all(compiled, ["a1", "b1", "a2"], x)
    assert STATS.captures == captures
    assert backend.graph_count == 2


def test_a_frame_whose_calls_mostly_miss_gives_up_matches_eager():
    backend = RunCounting()
    compiled = jit.compile(tagged, backend=backend, cache_limit=2)
    x = randn(3)
    messages = []

    def listen(topic, message, key, always, facts):
        messages.append(message)

    events.subscribe(listen)
    try:
        call_all(compiled, ["a0", "b0"], x)
        call_all(compiled, [f"c{i}" for i in range(2 * PAST_LIMIT_WINDOW)], x)
    finally:
        events.unsubscribe(listen)
    assert compiled._jitcore_cache.dispatcher.native
    assert sum("runs natively from now on, without trying them" in m for m in messages) == 1
    runs = backend.runs
    call_all(compiled, ["a0", "b0"], x)  # would hit: the frame no longer tries its entries
    assert backend.runs == runs


def test_a_frame_whose_calls_mostly_hit_keeps_its_entries_matches_eager():
    backend = RunCounting()
    compiled = jit.compile(tagged, backend=backend, cache_limit=2)
    x = randn(3)
    call_all(compiled, ["a0", "b0"], x)
    call_all(compiled, ["a0", "b0", "c0", "a0", "b0"] * PAST_LIMIT_WINDOW, x)
    assert not compiled._jitcore_cache.dispatcher.native
    runs = backend.runs
    call_all(compiled, ["a0", "b0"], x)
    assert backend.runs == runs + 2


def test_reset_after_giving_up_compiles_again_matches_eager():
    backend = RunCounting()
    compiled = jit.compile(tagged, backend=backend, cache_limit=2)
    x = randn(3)
    call_all(compiled, ["a0", "b0"] + [f"c{i}" for i in range(2 * PAST_LIMIT_WINDOW)], x)
    assert compiled._jitcore_cache.dispatcher.native
    jit.reset()
    assert not compiled._jitcore_cache.dispatcher.native
    call_all(compiled, ["a0", "a0"], x)
    assert backend.graph_count == 3 and backend.runs >= 1


def test_a_registered_frame_gives_up_matches_eager():
    backend = RunCounting()
    jit.register(tagged)
    x = randn(3)
    try:
        with jit.enabled(backend=backend, cache_limit=2):
            call_all(tagged, ["a0", "b0"] + [f"c{i}" for i in range(2 * PAST_LIMIT_WINDOW)], x)
            runs = backend.runs
            call_all(tagged, ["a0", "b0"], x)
            assert backend.runs == runs
    finally:
        jit.unregister(tagged)
