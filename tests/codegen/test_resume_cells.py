"""Codegen: a frame whose locals are cells (captured by an inner function or class) continues after a graph break
in a compiled resume function that shares those very cells (Note [Resume functions share the frame's cells]):
a closure made before the break sees writes made after it, and writes it makes are seen after it. Before, any
break in such a frame ran the whole frame natively."""

import pytest
import torch

import jitcore as jit

from tests.support import (CountingBackend, assert_same, both_doors, check_against_eager,
                           check_registered_against_eager, randn)


@pytest.fixture(autouse=True)
def _strict(monkeypatch):
    # a fault of jitcore raises instead of falling back natively (which would still give eager's results)
    monkeypatch.setattr(jit.config, "strict", True)


def print_before_any_op(x):
    y = 3

    def inner():
        return y

    print("break")
    return x + inner()


def test_a_break_before_any_graph_op_compiles_what_follows(capsys):
    counting = check_against_eager(print_before_any_op, (randn(3),), expected_graphs=1)
    assert counting.op_count == 1
    check_registered_against_eager(print_before_any_op, (randn(3),))


def closure_sees_write_after_break(x):
    n = 1

    def read():
        return n

    y = x.sin()
    print("break")
    n = 5
    return y * read()


def test_a_closure_made_before_the_break_sees_a_write_after_it(capsys):
    check_against_eager(closure_sees_write_after_break, (randn(3),), expected_graphs=2)
    check_registered_against_eager(closure_sees_write_after_break, (randn(3),))


def closure_writes_during_break(x):
    count = 0

    def bump():
        nonlocal count
        count += 1
        print("bumped", count)

    bump()
    y = x.cos()
    bump()
    return y + count


def test_a_nonlocal_write_by_the_breaking_call_is_seen_after_it(capsys):
    check_against_eager(closure_writes_during_break, (randn(3),), expected_graphs=None)
    check_registered_against_eager(closure_writes_during_break, (randn(3),))


def argument_cell(x, k):
    scale = lambda t: t * k  # noqa: E731
    print("break")
    k = k + 1
    return scale(x) + k


def test_an_argument_captured_by_a_lambda():
    counting = CountingBackend()
    with both_doors(argument_cell, counting) as doors:
        for door in doors:
            for k in (2, 3):
                x = randn(4, seed=k)
                assert_same(argument_cell(x, k), door(x, k))
    assert counting.graph_count >= 1


def returns_closure_after_break(x):
    acc = [x]

    def push(t):
        acc.append(t)
        return len(acc)

    print("break")
    push(x * 2)
    return push, acc


def test_a_closure_returned_after_the_break_keeps_the_shared_cell(capsys):
    with both_doors(returns_closure_after_break) as doors:
        for door in doors:
            x = randn(3)
            push_e, acc_e = returns_closure_after_break(x)
            push_c, acc_c = door(x)
            assert_same(acc_e, acc_c)
            assert push_c(x) == push_e(x) == 3
            assert_same(acc_e, acc_c)


def loop_with_break_and_cells(x):
    total = torch.zeros(())

    def add(t):
        nonlocal total
        total = total + t.sum()

    for i in range(3):
        add(x * i)
        if i == 1:
            print("middle")
    return total


def test_a_loop_with_a_break_in_a_frame_with_cells(capsys):
    check_against_eager(loop_with_break_and_cells, (randn(3),), expected_graphs=None)
    check_registered_against_eager(loop_with_break_and_cells, (randn(3),))


def two_breaks(x):
    a = x.sum()

    def get():
        return a

    print("one")
    a = a + 1
    print("two")
    return get() * x


def test_two_breaks_pass_the_cells_on(capsys):
    counting = CountingBackend()
    with both_doors(two_breaks, counting) as doors:
        for door in doors:
            counts = []
            for seed in range(5):
                x = randn(3, seed=seed)
                assert_same(two_breaks(x), door(x))
                counts.append(counting.graph_count)
            # the closure handed on is a new function each call: held by structure from its second call on
            assert counts[2] == counts[-1]


class _Key:
    def __init__(self, v):
        self.v = v

    def __eq__(self, other):
        return self.v == other.v

    def __hash__(self):
        return hash(self.v)


def unhashable_for_capture_before_any_op(x):
    d = {_Key(1): 5}
    return x + d[_Key(1)]


def test_a_break_at_an_instruction_not_written_as_python_compiles_what_follows():
    # the dict display breaks (keys jitcore cannot hash) before any graph op: a step function runs it and the rest
    # is compiled (before, the frame ran natively)
    counting = CountingBackend()
    with both_doors(unhashable_for_capture_before_any_op, counting) as doors:
        for door in doors:
            for seed in range(3):
                x = randn(3, seed=seed)
                assert_same(unhashable_for_capture_before_any_op(x), door(x))
    assert counting.graph_count >= 1


def break_in_try_with_cells(x):
    n = 2

    def scale(t):
        return t * n

    y = x.sin()
    try:
        print("in try")
        n = 3
        z = scale(y)
    except ValueError:
        z = y
    return z + n


def test_a_break_inside_a_try_block_of_a_frame_with_cells(capsys):
    counting = CountingBackend()
    with both_doors(break_in_try_with_cells, counting) as doors:
        for door in doors:
            for seed in range(3):
                x = randn(3, seed=seed)
                assert_same(break_in_try_with_cells(x), door(x))
    assert counting.graph_count >= 3  # a graph before the break per door, and the one after it (shared)


def cells_and_unhashable_key(x):
    k = 3
    get = lambda: k  # noqa: E731
    d = {_Key(1): 5}
    k = 4
    return x + d[_Key(1)] + get()


def test_a_step_function_over_the_frame_cells():
    counting = CountingBackend()
    with both_doors(cells_and_unhashable_key, counting) as doors:
        for door in doors:
            for seed in range(3):
                x = randn(3, seed=seed)
                assert_same(cells_and_unhashable_key(x), door(x))
    # what follows the breaks is compiled, once: `get`, made by each call and handed over unread at the second
    # break, is captured by structure there (it used to recompile once for a second lambda)
    assert counting.graph_count == 1


def cell_holds_a_graph_tensor(x, log):
    t0 = torch.sin(x)

    def inner(p):
        return torch.maximum(p, t0)

    t1 = inner(x)
    log.append(t1)
    print("break")  # only the cell holds t0 from here on
    return t0 * 2


def test_a_cell_holding_a_tensor_computed_before_the_break(capsys):
    with both_doors(cell_holds_a_graph_tensor) as doors:
        for door in doors:
            x = randn(3)
            assert_same(cell_holds_a_graph_tensor(x, []), door(x, []))


def closures_on_both_sides(x):
    a = x + 1

    def before():
        return a * 2

    print("break")
    a = a + 1

    def after():
        return a + 10

    return before, after


def test_a_closure_made_after_the_break_shares_the_cell_of_its_call(capsys):
    # the function made in the resume function is rebuilt over the cell of that call (the resume function's own
    # closure), not the first call's
    with both_doors(closures_on_both_sides) as doors:
        for door in doors:
            for seed in range(3):
                x = randn(3, seed=seed)
                before_e, after_e = closures_on_both_sides(x)
                before_c, after_c = door(x)
                assert_same(before_e(), before_c())
                assert_same(after_e(), after_c())
                assert before_c.__closure__[0] is after_c.__closure__[0]
