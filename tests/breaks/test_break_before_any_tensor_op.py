"""A graph break before the frame's first tensor operation still compiles what follows: the entry runs the breaking
instruction natively and the resume function after it is captured. Checked for several kinds of break at the top
of a function, through `jit.compile` and `register` + `enabled()`, against eager (result and printed output)."""
import operator
import zlib

import pytest

import jitcore as jit
from tests.breaks.helpers import assert_in_graphs, compare_printing
from tests.support import CountingBackend, both_doors, randn


@pytest.fixture(autouse=True)
def _strict(monkeypatch):
    monkeypatch.setattr(jit.config, "strict", True)


def _both_doors(fn, make_args, capsys):
    counting = CountingBackend()
    with both_doors(fn, counting) as doors:
        for door in doors:
            for seed in (1, 2):
                compare_printing(fn, door, make_args(seed), capsys)
    return counting


def _x(seed):
    return (randn(4, 3, seed=seed),)


def test_print_first_then_tensor_work_is_captured(capsys):
    def f(x):
        print("start")
        return x.sin() + 1

    assert_in_graphs(_both_doors(f, _x, capsys), operator.add)


def test_c_function_call_first_then_tensor_work_is_captured(capsys):
    def f(x):
        n = zlib.crc32(b"abc") % 7
        return x * n

    assert_in_graphs(_both_doors(f, _x, capsys), operator.mul)


def test_item_first_then_tensor_work_is_captured(capsys):
    def f(x):
        s = x.sum().item()
        return x.cos() - s

    assert_in_graphs(_both_doors(f, _x, capsys), operator.sub)


def test_list_append_and_print_first_then_tensor_work_is_captured(capsys):
    def f(x, log):
        log.append(len(log))
        print("calls", len(log))
        return x.exp() * 2

    assert_in_graphs(_both_doors(f, lambda seed: (randn(3, seed=seed), [0] * seed), capsys), operator.mul)


def test_tensor_condition_first_then_each_branch_is_captured(capsys):
    def f(x):
        if x.sum() > 0:
            return x + 10
        return x - 10

    counting = _both_doors(f, lambda seed: (randn(3, seed=seed) + (5 if seed == 1 else -5),), capsys)
    assert_in_graphs(counting, operator.add, operator.sub)
