"""contextlib.ExitStack inside a compiled function stays in one graph: `types.MethodType(fn, obj)` binds a Python
function to a traced value, and `sys.exc_info()` / `sys.exception()` read where no traced handler runs stand for
what the caller handles (rebuilt by the entry; any use of it breaks the graph). Inside a traced handler they are
the exception it handles.
"""

import contextlib
import sys
import types

import torch

from tests.support import CountingBackend, both_doors, check_against_eager, outcome, randn

LOG = []


class Resource:
    def __init__(self, n):
        self.n = n

    def __enter__(self):
        LOG.append(("open", self.n))
        return self

    def __exit__(self, *exc):
        LOG.append(("close", self.n, exc[0] is not None))


def exit_stack(x):
    with contextlib.ExitStack() as stack:
        a = stack.enter_context(Resource(1))
        b = stack.enter_context(Resource(2))
        y = x + a.n + b.n
    return y * 2


def test_exit_stack_is_one_graph_and_closes_in_order():
    LOG.clear()
    check_against_eager(exit_stack, (randn(3, seed=1),), expected_graphs=1)
    assert LOG == [("open", 1), ("open", 2), ("close", 2, False), ("close", 1, False)] * 4  # eager and compiled, twice each


class Scaler:
    def __init__(self, k):
        self.k = k


def scale(self, x):
    return x * self.k


def bound_method(x):
    method = types.MethodType(scale, Scaler(3))
    return method(x), method.__self__.k


def test_method_type_binds_a_function_to_an_object():
    check_against_eager(bound_method, (randn(3, seed=1),), expected_graphs=1)


def handled_exception(x):
    try:
        raise ValueError("inner")
    except ValueError as e:
        return x + 1, type(sys.exception()).__name__, sys.exception() is e


def handled_info(x):
    y = x + 1
    try:
        raise ValueError("inner")
    except ValueError:
        kind, exc, tb = sys.exc_info()  # the traceback needs the real frames: a break, nothing else
        return y, kind.__name__, str(exc), tb is not None


def test_exc_info_inside_a_handler_is_the_handled_exception():
    check_against_eager(handled_exception, (randn(3, seed=1),), expected_graphs=1)
    check_against_eager(handled_info, (randn(3, seed=1),), expected_graphs=1)


def caller_info(x):
    y = x + 1
    info = sys.exc_info()
    return y, info[0], info[1]


def test_exc_info_outside_handlers_is_what_the_caller_handles():
    counting = CountingBackend()
    with both_doors(caller_info, counting) as doors:
        for door in doors:
            x = torch.ones(2)
            assert outcome(door, x)[1][1:] == (None, None)
            try:
                raise KeyError("outer")
            except KeyError as outer:
                for _ in range(2):
                    result = door(x)
                    assert result[1] is KeyError and result[2] is outer
    assert counting.graph_count == 2  # one per door: the compiled copy and the registered function


def test_using_what_the_caller_handles_breaks_and_stays_right():
    def f(x):
        y = x * 2
        if sys.exception() is None:
            return y + 1
        return y - 1

    with both_doors(f, CountingBackend()) as doors:
        for door in doors:
            x = torch.ones(2)
            assert torch.equal(door(x), torch.full((2,), 3.0))
            try:
                raise ValueError
            except ValueError:
                assert torch.equal(door(x), torch.full((2,), 1.0))
