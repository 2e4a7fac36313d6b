"""Recursion deeper than the inlining limit: capture stops at the limit and the call at the break runs as it is.

Inlining stops at a depth limit with a recursion_limit break at the root frame's call; that callee then runs
natively (a compiled copy would trace as deep again and add frames per level), so a recursion eager can run never
exhausts Python's stack when compiled.
"""
import sys

import pytest
import torch

import jitcore as jit
from jitcore.report.console import recording
from tests.support import assert_same


def rec(x, n):
    return x if n == 0 else rec(x, n - 1) + 1


@pytest.mark.parametrize("n", [5, 400])
def test_recursion_matches_eager(n):
    x = torch.randn(3)
    expected = rec(x, n)
    assert_same(expected, jit.compile(rec, backend="eager")(x, n))
    torch.testing.assert_close(expected, x + n)


def test_shallow_recursion_is_one_graph(counting):
    x = torch.randn(3)
    assert_same(rec(x, 5), jit.compile(rec, backend=counting)(x, 5))
    assert counting.graph_count == 1


def test_recursion_past_the_limit_breaks_at_the_root_call():
    x = torch.randn(3)
    with recording() as events:
        assert_same(rec(x, 400), jit.compile(rec, backend="eager")(x, 400))
    kinds = [e.facts["brk"].kind for e in events if e.topic == "breaks"]
    assert kinds and set(kinds) == {"recursion_limit"}


def test_recursion_close_to_python_limit_matches_eager():
    depth = sys.getrecursionlimit() - 100
    x = torch.randn(3)
    compiled = jit.compile(rec, backend="eager")
    for n in (depth, depth - 1):
        assert_same(rec(x, n), compiled(x, n))
