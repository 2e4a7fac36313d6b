"""Capture: an in-place write to an input that an earlier operation of the graph may have saved for backward
(`t = linear(x); x.mul_(0.5)`) starts the next graph (Note [Input writes under AOTAutograd],
capture/write_order.py): AOTAutograd cannot trace the joint graph of one graph holding both, and the frame ran
natively after a backend failure (fuzz seed 355). Results, the input written, and the backward's version-counter error are eager's,
through jit.compile and register + enabled() on aot_eager, with no fallback."""

import pytest
import torch

import jitcore as jit
from tests.support import CountingBackend, both_doors, randn

LINEAR = torch.nn.Linear(4, 4)


def saved_then_written(x, v):
    t = LINEAR(v)  # saves v for the weight's gradient
    v.mul_(0.5)
    return t + x, v * 2


@pytest.fixture
def strict(monkeypatch):
    monkeypatch.setattr(jit.config, "strict", True)  # a backend failure raises instead of running natively


def test_the_write_starts_a_graph_aot_eager_can_compile(strict):
    counting = CountingBackend("aot_eager")
    with both_doors(saved_then_written, counting) as doors:
        for index, door in enumerate(doors):
            for seed in (1, 2):
                x, v = randn(4, seed=seed), randn(2, 4, seed=seed + 10)
                ev = v.clone()
                expected = saved_then_written(x, ev)
                actual = door(x, v)
                for e, a in zip(expected, actual):
                    torch.testing.assert_close(a, e)
                torch.testing.assert_close(v, ev)
                with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                    actual[0].sum().backward()
                with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                    expected[0].sum().backward()
            if index == 0:
                assert counting.graph_count == 2  # before the write, and from it on


def test_a_write_before_the_read_or_without_grad_stays_one_graph():
    def f(x, v):
        v.mul_(0.5)
        return LINEAR(v) + x

    def g(x, v):
        with torch.no_grad():
            t = LINEAR(v)
            v.mul_(0.5)
        return t + x

    for fn in (f, g):
        counting = CountingBackend("aot_eager")
        compiled = jit.compile(fn, backend=counting)
        v, ev = randn(2, 4, seed=3), randn(2, 4, seed=3)
        torch.testing.assert_close(compiled(randn(4, seed=1), v), fn(randn(4, seed=1), ev))
        torch.testing.assert_close(v, ev)
        assert counting.graph_count == 1
