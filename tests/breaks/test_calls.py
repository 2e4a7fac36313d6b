"""Graph breaks on calls that cannot be traced and on tensor-to-Python conversions, at several stack depths.

Each test compiles a few lines that break once (print, logging, a C function outside torch, a `jit.disable`d
function, file I/O, `.item()`, `.tolist()`, `.numpy()`), compares results, printed output and inputs with eager, and
counts the prefix and resume graphs where the count is determined by the code.
"""

import logging
import math
import os
import time

import numpy as np
import pytest
import torch

import jitcore as jit
from tests.breaks.helpers import check_breaks, compare_printing
from tests.support import Args, randn

_LOG = logging.getLogger("tests.breaks.calls")


def _print_and_return(t):
    print("arg", t.shape)
    return t


def _g(t):
    return t * 3


def _kw_target(a, key=None):
    return a * 2 if key is None else a * 2 + 1


def _print_helper():
    print("helper")
    return 5


def _spread(a, b, *, scale=1.0, shift=0.0):
    return (a + b) * scale + shift


# Unsupported calls between tensor ops


def test_print_between_two_tensor_ops_makes_two_graphs(counting, capsys):
    def f(x):
        y = x + 1
        print("between")
        return y * 2

    check_breaks(f, (randn(4, 3, seed=1),), counting=counting, capsys=capsys, expected_graphs=2)


def test_print_of_intermediate_tensor_prints_eager_values(counting, capsys):
    def f(x):
        y = torch.sin(x) + 1
        print(y)
        return y.cos()

    check_breaks(f, (randn(3, seed=1),), (randn(3, seed=2),), counting=counting, capsys=capsys)


def test_print_with_sep_and_end_keywords_matches_eager(counting, capsys):
    def f(x):
        y = x.relu()
        print("a", x.shape[0], sep="|", end="!\n")
        return y - 1

    check_breaks(f, (randn(4, 2, seed=1),), counting=counting, capsys=capsys, expected_graphs=2)


def test_logging_call_between_tensor_ops_logs_once_and_makes_two_graphs(counting, caplog):
    def f(x):
        y = x * 3
        _LOG.warning("value count %d", y.numel())
        return y + 1

    x = randn(5, seed=1)
    with caplog.at_level(logging.WARNING, logger=_LOG.name):
        expected = f(x.clone())
        eager_messages = [r.getMessage() for r in caplog.records]
        caplog.clear()
        actual = jit.compile(f, backend=counting)(x.clone())
        compiled_messages = [r.getMessage() for r in caplog.records]
    torch.testing.assert_close(actual, expected)
    assert compiled_messages == eager_messages == ["value count 5"]
    assert counting.graph_count == 2


def test_time_sleep_zero_between_tensor_ops_makes_two_graphs(counting, capsys):
    def f(x):
        y = x.exp()
        time.sleep(0)
        return y / 2

    check_breaks(f, (randn(3, 3, seed=1),), counting=counting, capsys=capsys, expected_graphs=2)


def test_os_getpid_result_used_after_break_matches_eager(counting, capsys):
    def f(x):
        y = x + 1
        pid = os.getpid()
        return y * (pid % 7 + 1)

    check_breaks(f, (randn(3, seed=1),), (randn(3, seed=2),), counting=counting, capsys=capsys,
                 expected_graphs=2)


def test_math_floor_of_item_between_tensor_ops_matches_eager(counting, capsys):
    def f(x):
        y = x * 4
        k = math.floor(y.sum().item())
        return y + k

    check_breaks(f, (randn(6, seed=1),), counting=counting, capsys=capsys)


def test_disabled_function_between_tensor_ops_runs_natively_exactly_once(counting, capsys):
    calls = []

    @jit.disable
    def native(t):
        calls.append(1)
        return t * 3

    def f(x):
        y = x + 1
        z = native(y)
        return z - y

    x = randn(4, seed=1)
    compiled = jit.compile(f, backend=counting)
    for _ in range(3):
        torch.testing.assert_close(compiled(x), (x + 1) * 3 - (x + 1))
    assert len(calls) == 3
    assert counting.graph_count == 2


def test_file_write_to_tmp_path_between_tensor_ops_matches_eager(counting, capsys, tmp_path):
    def f(x, path):
        y = x.abs()
        with open(path, "a") as handle:
            handle.write(f"{y.shape[0]}\n")
        return y + 2

    x = randn(3, seed=1)
    eager_path, compiled_path = tmp_path / "eager.txt", tmp_path / "compiled.txt"
    compiled = jit.compile(f, backend=counting)
    for _ in range(2):
        torch.testing.assert_close(compiled(x, str(compiled_path)), f(x, str(eager_path)))
    assert compiled_path.read_text() == eager_path.read_text() == "3\n3\n"


def test_file_read_value_used_after_break_matches_eager(counting, capsys, tmp_path):
    path = tmp_path / "scale.txt"
    path.write_text("2.5")

    def f(x, name):
        y = x - 1
        scale = float(open(name).read())
        return y * scale

    check_breaks(f, (randn(4, seed=1), str(path)), counting=counting, capsys=capsys, expected_graphs=2)


def test_helper_with_print_runs_exactly_once_per_call(counting, capsys):
    calls = []

    def noisy(t):
        calls.append(1)
        print("noisy", t.shape)

    def f(x):
        y = x * 2
        noisy(y)
        return y + 1

    compiled = jit.compile(f, backend=counting)
    x = randn(3, seed=1)
    for _ in range(4):
        torch.testing.assert_close(compiled(x), x * 2 + 1)
    assert len(calls) == 4
    assert capsys.readouterr().out == "noisy torch.Size([3])\n" * 4


# Tensor-to-Python conversions


def test_item_result_used_in_later_tensor_op_makes_two_graphs(counting, capsys):
    def f(x):
        y = x + 1
        v = y.sum().item()
        return y * v

    check_breaks(f, (randn(4, seed=1),), counting=counting, capsys=capsys, expected_graphs=2)


def test_item_returned_as_python_float_matches_eager(counting, capsys):
    def f(x):
        return (x * 2).max().item()

    check_breaks(f, (randn(5, seed=1),), (randn(5, seed=2),), counting=counting, capsys=capsys)


def test_item_of_int_tensor_used_as_python_int_matches_eager(counting, capsys):
    def f(x):
        n = (x > 0).sum().item()
        return x[:n] * 2 if n > 0 else x * 0

    check_breaks(f, (randn(6, seed=1),), (randn(6, seed=3),), counting=counting, capsys=capsys)


def test_tolist_result_used_in_python_loop_matches_eager(counting, capsys):
    def f(x):
        total = 0.0
        for v in (x * 2).tolist():
            total += v
        return x + total

    check_breaks(f, (randn(4, seed=1),), counting=counting, capsys=capsys)


def test_tolist_returned_matches_eager(counting, capsys):
    def f(x):
        return (x + 1).round().tolist()

    check_breaks(f, (randn(2, 3, seed=1),), counting=counting, capsys=capsys)


def test_numpy_result_returned_matches_eager(counting):
    def f(x):
        return (x * 3).numpy()

    x = randn(2, 3, seed=1)
    compiled = jit.compile(f, backend=counting)
    actual = compiled(x)
    assert isinstance(actual, np.ndarray)
    np.testing.assert_allclose(actual, f(x))
    assert counting.graph_count >= 1


def test_numpy_then_tensor_op_after_break_matches_eager(counting, capsys):
    def f(x):
        y = x * 2
        a = y.numpy()
        return torch.from_numpy(a * 2) + y

    check_breaks(f, (randn(3, seed=1),), (randn(3, seed=2),), counting=counting, capsys=capsys)


# Breaks at different stack depths


def test_print_mid_expression_matches_eager(counting, capsys):
    def f(x):
        return x * 2 + (print(x) or 1)

    check_breaks(f, (randn(3, seed=1),), (randn(3, seed=2),), counting=counting, capsys=capsys)


def test_print_inside_nested_call_argument_list_matches_eager(counting, capsys):
    def f(x):
        return torch.add(x, _g(_print_and_return(x)))

    check_breaks(f, (randn(2, 3, seed=1),), counting=counting, capsys=capsys)


def test_print_inside_list_comprehension_matches_eager(counting, capsys):
    def f(xs):
        return [print(t) or t * 2 for t in xs]

    check_breaks(f, ([randn(2, seed=1), randn(2, seed=2), randn(2, seed=3)],), counting=counting, capsys=capsys)


def test_item_inside_keyword_argument_matches_eager(counting, capsys):
    def f(x):
        return torch.clamp(x, min=float(x.max().item()) - 1)

    check_breaks(f, (randn(5, seed=1),), (randn(5, seed=2),), counting=counting, capsys=capsys)


def test_print_helper_as_keyword_argument_matches_eager(counting, capsys):
    def f(a):
        return _kw_target(a, key=_print_helper())

    check_breaks(f, (randn(3, seed=1),), counting=counting, capsys=capsys)


def test_star_args_and_star_kwargs_call_after_print_matches_eager(counting, capsys):
    def f(x, y):
        args = (x, y)
        kwargs = {"scale": 2.0}
        print("spread")
        kwargs["shift"] = 1.0
        return _spread(*args, **kwargs)

    check_breaks(f, (randn(3, seed=1), randn(3, seed=2)), counting=counting, capsys=capsys)


def test_print_inside_star_args_tuple_matches_eager(counting, capsys):
    def f(x, y):
        return _spread(*(x, print("mid") or y), **{"scale": 3.0})

    check_breaks(f, (randn(3, seed=1), randn(3, seed=2)), counting=counting, capsys=capsys)


def test_disabled_function_called_with_star_args_and_kwargs_matches_eager(counting, capsys):
    spread = jit.disable(lambda a, b, *, scale=1.0: (a - b) * scale)

    def f(x, y):
        pair = [x + 1, y]
        return spread(*pair, **{"scale": 0.5}) + x

    x, y = randn(3, seed=1), randn(3, seed=2)
    compiled = jit.compile(f, backend=counting)
    torch.testing.assert_close(compiled(x, y), f(x, y))
    assert counting.graph_count == 2


def test_print_with_keyword_arguments_passed_through_args_object(counting, capsys):
    def f(x, *, factor):
        print("factor", factor)
        return x * factor

    check_breaks(f, Args(randn(3, seed=1), factor=2), Args(randn(3, seed=2), factor=2), counting=counting,
                 capsys=capsys)


@pytest.mark.parametrize("shape", [(3,), (2, 5)])
def test_print_break_new_values_of_same_shape_add_no_graph(counting, capsys, shape):
    def f(x):
        y = x.sum(0)
        print("shape", x.shape)
        return y * 2

    compiled = check_breaks(f, (randn(*shape, seed=1),), counting=counting, capsys=capsys, expected_graphs=2)
    compare_printing(f, compiled, (randn(*shape, seed=7),), capsys)
    assert counting.graph_count == 2
