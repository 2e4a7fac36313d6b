"""A loop whose body breaks in every iteration runs in constant stack depth (Note [Resume chains run in a loop]).

Each iteration continues in the resume function of the same offset; called from the entry's frame, each added a
prologue, a dispatcher and an entry below the last, so a loop of a few hundred iterations raised RecursionError
inside the user's program (torchvision's per-box mask pasting, a comprehension over 100 detections). Here Python's
recursion limit is lower than the iteration count: only a chain that does not nest can run the loop.
"""
import sys

import pytest
import torch

import jitcore as jit
from tests.support import assert_same

ITERATIONS = 300


def work(x, i):
    x = x + i
    if int(x.sum()) > 10 ** 9:  # a break: the tensor's value as a Python number
        x = x * 2
    return x


def for_loop(x, n):
    out = []
    for i in range(n):
        out.append(work(x, i).cos())
    return out


def comprehension(xs):
    # an inlined comprehension's body is inside a try region: the break runs in a step function
    return [work(x, 1).sin() for x in xs]


def while_loop(x, n):
    i = 0
    while i < n:
        x = work(x, 1) * 0.5
        i += 1
    return x


@pytest.fixture
def low_recursion_limit():
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(250)
    yield
    sys.setrecursionlimit(before)


def test_a_for_loop_breaking_every_iteration_does_not_nest(low_recursion_limit):
    x = torch.randn(3)
    compiled = jit.compile(for_loop, backend="eager")
    for _ in range(2):  # captured, then from the cache
        assert_same(for_loop(x, ITERATIONS), compiled(x, ITERATIONS))


def test_a_comprehension_breaking_every_iteration_does_not_nest(low_recursion_limit):
    xs = [torch.full((3,), float(i)) for i in range(ITERATIONS)]
    compiled = jit.compile(comprehension, backend="eager")
    for _ in range(2):
        assert_same(comprehension(xs), compiled(xs))


def test_a_while_loop_breaking_every_iteration_does_not_nest(low_recursion_limit):
    x = torch.randn(3)
    assert_same(while_loop(x, ITERATIONS), jit.compile(while_loop, backend="eager")(x, ITERATIONS))


def test_an_error_in_a_later_iteration_reaches_the_caller_as_in_eager():
    def failing(x, n):
        out = []
        for i in range(n):
            y = work(x, i)
            if i == n - 1:
                raise ValueError(f"iteration {i}")
            out.append(y)
        return out

    x = torch.randn(3)
    with pytest.raises(ValueError, match="iteration 39"):
        jit.compile(failing, backend="eager")(x, 40)


def test_a_resume_chain_inside_a_call_returns_to_its_caller():
    # the inner function's chain starts while the outer's entry runs its breaking call: it must run to its end
    # there (a hand-back would give the outer call a chain step instead of a value)
    def inner(x, n):
        for i in range(n):
            x = work(x, i)
        return x

    def outer(x):
        total = []
        for i in range(5):
            total.append(inner(x, 3) + i)
        return total

    x = torch.randn(3)
    assert_same(outer(x), jit.compile(outer, backend="eager")(x))
