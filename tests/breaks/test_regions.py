"""Graph breaks inside `with` blocks and `try` regions.

Inside a region the resume function starts at the breaking instruction itself, so the context manager's state, the
exception handlers and `finally` blocks still apply: grad mode, __enter__/__exit__ side effects (exactly once), the
`except` clause an exception raised after the break reaches (same type and message), and `finally` running once.
Each function does marker tensor work (torch.sin before the break, torch.cos after it) that must reach a graph:
a region may not make the frame fall back to plain Python.
"""

import pytest
import torch

import jitcore as jit
from tests.breaks.helpers import assert_in_graphs, check_breaks
from tests.support import randn


class _Recorder:
    """A user-defined context manager that logs its __enter__/__exit__ calls into `log`."""

    def __init__(self, log, name="cm", suppress=False):
        self.log = log
        self.name = name
        self.suppress = suppress

    def __enter__(self):
        self.log.append(f"enter {self.name}")
        return self

    def __exit__(self, exc_type, exc, tb):
        self.log.append(f"exit {self.name} {exc_type.__name__ if exc_type else None}")
        return self.suppress


def _grad_input(seed):
    return randn(3, seed=seed).requires_grad_(True)


# torch.no_grad


def test_print_inside_no_grad_result_requires_grad_matches_eager(counting, capsys):
    def f(x):
        with torch.no_grad():
            y = torch.sin(x)
            print("inside")
            z = torch.cos(y)
        return z, x * 3

    check_breaks(f, (_grad_input(1),), counting=counting, capsys=capsys)
    assert_in_graphs(counting, torch.sin, torch.cos)


def test_item_inside_no_grad_result_requires_grad_matches_eager(counting, capsys):
    def f(x):
        with torch.no_grad():
            s = torch.sin(x).sum().item()
            y = torch.cos(x) * s
        return y + x

    check_breaks(f, (_grad_input(1),), counting=counting, capsys=capsys)
    assert_in_graphs(counting, torch.sin, torch.cos)


def test_tensor_branch_inside_no_grad_matches_eager(counting, capsys):
    def f(x):
        with torch.no_grad():
            if torch.sin(x).sum() > 0:
                y = torch.cos(x)
            else:
                y = x * 3
        return y, x + 1

    check_breaks(f, (_grad_input(1),), (-_grad_input(1).detach().abs().requires_grad_(True),),
                 counting=counting, capsys=capsys)
    assert_in_graphs(counting, torch.sin, torch.cos)


def test_grad_mode_is_restored_after_no_grad_block_with_break(counting, capsys):
    def f(x):
        with torch.no_grad():
            print("no grad", torch.is_grad_enabled())
        print("after", torch.is_grad_enabled())
        return x * 2

    check_breaks(f, (_grad_input(1),), counting=counting, capsys=capsys)
    assert torch.is_grad_enabled()


def test_print_inside_enable_grad_within_no_grad_matches_eager(counting, capsys):
    def f(x):
        with torch.no_grad():
            a = torch.sin(x)
            with torch.enable_grad():
                print("grad", torch.is_grad_enabled())
                b = torch.cos(x)
            c = x * 4
        return a, b, c

    check_breaks(f, (_grad_input(1),), counting=counting, capsys=capsys)
    assert_in_graphs(counting, torch.sin, torch.cos)


def test_work_after_enable_grad_exit_within_no_grad_after_a_break_is_compiled(counting, capsys):
    # the resume function runs enable_grad's real __exit__ (torch._C._set_grad_enabled): it stays in the graph,
    # so the work after it, inside no_grad and after it, is compiled and the grad modes match eager's
    def f(x):
        with torch.no_grad():
            with torch.enable_grad():
                b = torch.cos(x)
                if b.sum() > 0:
                    b = b + 1
            c = torch.tan(b)
        d = torch.exp(c)
        return b, c, d, torch.is_grad_enabled()

    check_breaks(f, (_grad_input(2),), counting=counting, capsys=capsys)
    assert_in_graphs(counting, torch.cos, torch.tan, torch.exp)
    assert counting.graph_count == 2


def test_backward_through_graphs_around_print_in_no_grad_matches_eager(counting, capsys):
    def f(x, w):
        y = x * w
        with torch.no_grad():
            print("scale")
            scale = y.abs().max()
        return (y / scale).sum()

    x, w = randn(4, seed=1), randn(4, seed=2)
    w_eager, w_compiled = w.clone().requires_grad_(True), w.clone().requires_grad_(True)
    f(x, w_eager).backward()
    jit.compile(f, backend=counting)(x, w_compiled).backward()
    torch.testing.assert_close(w_compiled.grad, w_eager.grad)


# User-defined context managers


def test_print_inside_user_context_manager_enters_and_exits_once(counting, capsys):
    def f(x, log):
        with _Recorder(log):
            y = torch.sin(x)
            print("body")
            y = torch.cos(y)
        log.append("after")
        return y

    check_breaks(f, (randn(2, seed=1), []), counting=counting, capsys=capsys)
    assert_in_graphs(counting, torch.sin)


def test_user_context_manager_log_equal_eager_after_several_calls(counting, capsys):
    def f(x, log):
        with _Recorder(log, "outer"):
            y = torch.sin(x)
            with _Recorder(log, "inner"):
                print("body")
            y = torch.cos(y)
        return y

    eager_log, compiled_log = [], []
    compiled = jit.compile(f, backend=counting)
    for seed in range(3):
        torch.testing.assert_close(compiled(randn(2, seed=seed), compiled_log), f(randn(2, seed=seed), eager_log))
    assert compiled_log == eager_log
    assert eager_log.count("enter outer") == 3
    assert_in_graphs(counting, torch.sin)


def test_exception_after_break_in_user_context_manager_reaches_exit(counting, capsys):
    def f(x, log):
        y = torch.sin(x)
        with _Recorder(log):
            print("body")
            raise ValueError(f"bad {y.shape[0]}")
        return x

    check_breaks(f, (randn(2, seed=1), []), counting=counting, capsys=capsys)
    assert_in_graphs(counting, torch.sin)


def test_suppressing_context_manager_after_break_swallows_exception(counting, capsys):
    def f(x, log):
        y = torch.sin(x)
        with _Recorder(log, suppress=True):
            print("body")
            raise KeyError("swallowed")
        log.append("after")
        return torch.cos(y)

    check_breaks(f, (randn(2, seed=1), []), counting=counting, capsys=capsys)
    assert_in_graphs(counting, torch.sin)


def test_context_manager_value_bound_with_as_is_usable_after_break(counting, capsys):
    def f(x, log):
        with _Recorder(log, "named") as cm:
            print("body")
            name = cm.name
        return torch.cos(x) + len(name)

    check_breaks(f, (randn(2, seed=1), []), counting=counting, capsys=capsys)


# try / except / finally


def test_exception_after_break_in_try_reaches_same_except_with_message(counting, capsys):
    def f(x):
        try:
            y = torch.sin(x)
            print("in try")
            raise ValueError(f"size {y.shape[0]}")
        except ValueError as error:
            return torch.cos(x), str(error)

    check_breaks(f, (randn(3, seed=1),), counting=counting, capsys=capsys)
    assert_in_graphs(counting, torch.sin)


def test_exception_after_break_in_try_skips_non_matching_handler(counting, capsys):
    def f(x):
        try:
            print("in try")
            torch.sin(x).sum().item()
            raise KeyError("k")
        except ValueError:
            return x * 2
        except KeyError as error:
            return torch.cos(x), repr(error)

    check_breaks(f, (randn(3, seed=1),), counting=counting, capsys=capsys)


def test_finally_runs_once_after_break_in_try(counting, capsys):
    def f(x, log):
        try:
            y = torch.sin(x)
            print("try")
            return torch.cos(y)
        finally:
            log.append("finally")

    check_breaks(f, (randn(2, seed=1), []), counting=counting, capsys=capsys)
    assert_in_graphs(counting, torch.sin)


def test_finally_runs_once_when_exception_after_break_escapes(counting, capsys):
    def f(x, log):
        try:
            y = torch.sin(x)
            print("try")
            raise RuntimeError(f"escaping {y.shape}")
        finally:
            log.append("finally")

    check_breaks(f, (randn(2, seed=1), []), counting=counting, capsys=capsys)
    assert_in_graphs(counting, torch.sin)


def test_else_clause_runs_after_break_in_try_without_exception(counting, capsys):
    def f(x, log):
        try:
            print("try")
            y = torch.sin(x)
        except ValueError:
            log.append("except")
            y = x
        else:
            log.append("else")
        return torch.cos(y)

    check_breaks(f, (randn(2, seed=1), []), counting=counting, capsys=capsys)


def test_print_inside_except_handler_matches_eager(counting, capsys):
    def f(x):
        try:
            raise ValueError("first")
        except ValueError as error:
            print("handling", error)
            y = torch.sin(x)
        return torch.cos(y)

    check_breaks(f, (randn(2, seed=1),), counting=counting, capsys=capsys)


def test_print_inside_finally_block_matches_eager(counting, capsys):
    def f(x):
        try:
            y = torch.sin(x)
        finally:
            print("finally")
        return torch.cos(y)

    check_breaks(f, (randn(2, seed=1),), counting=counting, capsys=capsys)
    assert_in_graphs(counting, torch.sin, torch.cos)


def test_exception_after_item_in_try_propagates_to_caller_unchanged(counting, capsys):
    def f(x):
        try:
            v = torch.sin(x).sum().item()
            return [1, 2][int(v) + 100]
        except KeyError:
            return None

    check_breaks(f, (torch.ones(2),), counting=counting, capsys=capsys)
    assert_in_graphs(counting, torch.sin)


def test_try_inside_with_break_and_exception_matches_eager(counting, capsys):
    def f(x, log):
        with _Recorder(log):
            try:
                print("inner")
                y = torch.sin(x).sum().item()
                raise ZeroDivisionError(f"at {y:.2f}")
            except ZeroDivisionError as error:
                log.append(str(error))
        return torch.cos(x)

    check_breaks(f, (randn(2, seed=1), []), counting=counting, capsys=capsys)


def test_file_write_inside_with_open_block_matches_eager(counting, capsys, tmp_path):
    def f(x, path):
        with open(path, "a") as handle:
            y = torch.sin(x)
            handle.write(f"{y.shape[0]}\n")
            print("written")
        return torch.cos(y)

    compiled = jit.compile(f, backend=counting)
    eager_path, compiled_path = tmp_path / "eager.txt", tmp_path / "compiled.txt"
    for seed in range(2):
        torch.testing.assert_close(compiled(randn(2, seed=seed), str(compiled_path)),
                                   f(randn(2, seed=seed), str(eager_path)))
    assert compiled_path.read_text() == eager_path.read_text() == "2\n2\n"


# Tensor work after a break inside a region: the resume function is captured, so this work reaches a graph


def test_tensor_work_after_print_inside_try_is_compiled(counting, capsys):
    def f(x):
        try:
            y = torch.sin(x)
            print("in try")
            z = torch.cos(y)
        except ValueError:
            z = x
        return z

    check_breaks(f, (randn(3, seed=1),), counting=counting, capsys=capsys)
    assert_in_graphs(counting, torch.sin, torch.cos)


def test_tensor_work_after_print_inside_user_context_manager_is_compiled(counting, capsys):
    def f(x, log):
        with _Recorder(log):
            y = torch.sin(x)
            print("body")
            y = torch.cos(y)
        return y

    check_breaks(f, (randn(2, seed=1), []), counting=counting, capsys=capsys)
    assert_in_graphs(counting, torch.sin, torch.cos)


def test_tensor_work_after_region_with_break_is_compiled(counting, capsys):
    def f(x):
        try:
            print("in try")
        finally:
            pass
        return torch.cos(x)

    check_breaks(f, (randn(3, seed=1),), counting=counting, capsys=capsys)
    assert_in_graphs(counting, torch.cos)
