"""Regression tests for the measured pitfalls of DESIGN §4, one each, plus generators and coroutines.

try regions (exception-table depths, the exception state left behind), unbound locals at the break, NULL stack slots
(method calls, PUSH_NULL calls, inlined comprehensions' saved variables), KW_NAMES and its CALL, cells and free
variables at a break; generators and coroutines run natively and cannot be compiled themselves.
"""

import asyncio
import sys

import pytest
import torch

import jitcore as jit
from tests.breaks.helpers import check_breaks, compare_printing
from tests.support import randn


class _Acc:
    def __init__(self):
        self.items = []

    def add(self, value):
        self.items.append(value)
        return len(self.items)


def _kw(t, k=None):
    return t * 2 if k is None else t + k


def _gen(t, n):
    for i in range(n):
        print("yield", i)
        yield t * i


async def _coro(t):
    await asyncio.sleep(0)
    return t * 3


# try regions


def test_break_in_try_with_loop_iterator_on_stack_then_exception_reaches_handler(counting, capsys):
    def f(x, items):
        try:
            for v in items:
                x = x + v
                print(v)
                if v == 3:
                    raise ValueError(f"bad {v}")
        except ValueError as error:
            return x, str(error)
        return x, None

    check_breaks(f, (randn(2, seed=1), [1, 2, 3, 4]), (randn(2, seed=1), [1, 2]), counting=counting,
                 capsys=capsys)


def test_break_in_inner_try_exception_caught_by_outer_handler(counting, capsys):
    def f(x):
        try:
            try:
                y = x * 2
                print("inner")
                raise KeyError("deep")
            except ValueError:
                return x
            finally:
                print("inner finally")
        except KeyError as error:
            return y, repr(error)

    check_breaks(f, (randn(2, seed=1),), counting=counting, capsys=capsys)


def test_break_in_try_with_values_on_stack_then_exception_reaches_handler(counting, capsys):
    def f(x):
        try:
            return [x, x * 2, (print("mid") or 1) / 0]
        except ZeroDivisionError as error:
            return [x, str(error)]

    check_breaks(f, (randn(2, seed=1),), counting=counting, capsys=capsys)


def test_exception_escaping_try_after_break_leaves_no_exception_state(counting):
    def f(x):
        try:
            v = x.sum().item()
            return [1, 2][int(v) + 100]
        except KeyError:
            return None

    compiled = jit.compile(f, backend=counting)
    before = sys.exc_info()[1]
    for fn in (f, compiled, compiled):
        with pytest.raises(IndexError, match="list index out of range"):
            fn(torch.ones(2))
        assert sys.exc_info()[1] is before, f"exception state left behind: {sys.exc_info()[1]!r}"


def test_exception_caught_inside_after_break_leaves_no_exception_state(counting, capsys):
    def f(x):
        try:
            print("in try")
            raise ValueError("handled")
        except ValueError:
            pass
        return x + 1

    compiled = jit.compile(f, backend=counting)
    before = sys.exc_info()[1]
    for _ in range(2):
        torch.testing.assert_close(compiled(torch.ones(2)), torch.ones(2) + 1)
        assert sys.exc_info()[1] is before, f"exception state left behind: {sys.exc_info()[1]!r}"


# Unbound locals at the break


def test_local_bound_only_in_branch_not_taken_raises_unbound_local_error_like_eager(counting, capsys):
    def f(x, flag):
        if flag:
            z = x * 2
        print("break")
        return z + 1

    check_breaks(f, (randn(2, seed=1), False), counting=counting, capsys=capsys)


def test_local_bound_in_branch_taken_works_after_break(counting, capsys):
    def f(x, flag):
        if flag:
            z = x * 2
        print("break")
        return z + 1

    check_breaks(f, (randn(2, seed=1), True), counting=counting, capsys=capsys)


def test_local_assigned_only_after_break_in_loop_unbound_when_loop_empty(counting, capsys):
    def f(x, n):
        for i in range(n):
            print(i)
            last = x * i
        return last

    check_breaks(f, (randn(2, seed=1), 0), (randn(2, seed=1), 3), counting=counting, capsys=capsys)


def test_deleted_local_used_after_break_raises_unbound_local_error(counting, capsys):
    def f(x):
        y = x + 1
        del y
        print("deleted")
        return y

    check_breaks(f, (randn(2, seed=1),), counting=counting, capsys=capsys)


def test_unbound_local_at_tensor_branch_raises_like_eager(counting, capsys):
    def f(x):
        if x.sum() > 0:
            w = x * 3
        return w

    check_breaks(f, (torch.ones(2),), (-torch.ones(2),), counting=counting, capsys=capsys)


# NULL stack slots


def test_method_call_with_print_in_argument_matches_eager(counting, capsys):
    def f(x, acc):
        n = acc.add(print(x.shape) or x.shape[0])
        return x * n, acc.items

    acc_eager, acc_compiled = _Acc(), _Acc()
    compiled = jit.compile(f, backend=counting)
    for seed in range(2):
        compare_printing(lambda x: f(x, acc_eager), lambda x: compiled(x, acc_compiled), (randn(3, seed=seed),),
                         capsys)
    assert acc_compiled.items == acc_eager.items == [3, 3]


def test_list_append_with_print_in_argument_matches_eager(counting, capsys):
    def f(x, out):
        out.append(print("appending") or x * 2)
        return len(out)

    check_breaks(f, (randn(2, seed=1), []), counting=counting, capsys=capsys)


def test_tensor_method_with_print_in_argument_matches_eager(counting, capsys):
    def f(x):
        return x.add(print("adding") or 1).mul(2)

    check_breaks(f, (randn(3, seed=1),), counting=counting, capsys=capsys)


def test_builtin_call_with_print_in_argument_matches_eager(counting, capsys):
    def f(x):
        return x * len(print("len") or [x, x, x])

    check_breaks(f, (randn(3, seed=1),), counting=counting, capsys=capsys)


def test_inlined_comprehension_saved_variable_is_restored_after_break(counting, capsys):
    def f(xs):
        t = "saved"
        ys = [print(t) or t * 2 for t in xs]
        return ys, t

    check_breaks(f, ([randn(2, seed=1), randn(2, seed=2)],), counting=counting, capsys=capsys)


def test_inlined_comprehension_with_item_break_matches_eager(counting, capsys):
    def f(xs):
        v = 10
        values = [v.sum().item() for v in xs]
        return values, v

    check_breaks(f, ([randn(2, seed=1), randn(2, seed=2), randn(2, seed=3)],), counting=counting, capsys=capsys)


def test_inlined_comprehension_variable_unbound_before_stays_unbound(counting, capsys):
    def f(xs, flag):
        ys = [print("c") or t + 1 for t in xs]
        if flag:
            t = 0
        return ys, t

    check_breaks(f, ([randn(2, seed=1)], False), ([randn(2, seed=1)], True), counting=counting, capsys=capsys)


# KW_NAMES and its CALL


def test_print_inside_keyword_argument_keeps_kw_names_with_call(counting, capsys):
    def f(x):
        return _kw(x, k=print("k"))

    check_breaks(f, (randn(3, seed=1),), counting=counting, capsys=capsys)


def test_print_inside_second_keyword_argument_of_torch_call(counting, capsys):
    def f(x):
        return torch.clamp(x, min=-0.5, max=print("max") or 0.5)

    check_breaks(f, (randn(5, seed=1),), counting=counting, capsys=capsys)


def test_keyword_call_of_printing_helper_with_keyword_names(counting, capsys):
    def show(t, *, label):
        print(label, t.shape)
        return t

    def f(x):
        return show(x * 2, label="doubled") + 1

    check_breaks(f, (randn(3, seed=1),), counting=counting, capsys=capsys)


# Cells and free variables


def test_closure_with_free_variables_broken_at_keyword_call(counting, capsys):
    def make(scale, offset):
        def f(x):
            y = x * scale
            return _kw(y, k=print("k", offset) or offset)

        return f

    f = make(3.0, 2.0)
    check_breaks(f, (randn(3, seed=1),), counting=counting, capsys=capsys)


def test_cell_variable_live_at_break_is_shared_with_inner_function(counting, capsys):
    def f(x):
        k = 3
        g = lambda t: t * k  # noqa: E731 - k is a cell of f
        print("break")
        k = 5
        return g(x) + k

    check_breaks(f, (randn(3, seed=1),), counting=counting, capsys=capsys)


def test_closure_cell_read_after_break_sees_current_value(counting, capsys):
    def make():
        state = {"n": 1}
        factor = 2

        def f(x):
            print("factor", factor)
            return x * factor + state["n"]

        return f

    check_breaks(make(), (randn(3, seed=1),), counting=counting, capsys=capsys)


# Generators and coroutines


def test_compiled_function_calling_generator_helper_matches_eager(counting, capsys):
    def f(x):
        return sum(_gen(x, 3)) + 1

    check_breaks(f, (randn(2, seed=1),), counting=counting, capsys=capsys)


def test_compiled_function_iterating_generator_with_next_matches_eager(counting, capsys):
    def f(x):
        g = _gen(x, 4)
        first = next(g)
        second = next(g)
        return first + second * 2

    check_breaks(f, (randn(2, seed=1),), counting=counting, capsys=capsys)


def test_compile_on_generator_function_raises_jit_error():
    with pytest.raises(jit.JitError):
        jit.compile(_gen, backend="eager")


def test_compile_on_coroutine_function_raises_jit_error():
    with pytest.raises(jit.JitError):
        jit.compile(_coro, backend="eager")


def test_compiled_function_running_coroutine_matches_eager(counting, capsys):
    def f(x):
        return asyncio.run(_coro(x)) - 1

    check_breaks(f, (randn(2, seed=1),), counting=counting, capsys=capsys)
