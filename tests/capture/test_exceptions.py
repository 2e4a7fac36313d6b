"""Capture: exceptions raised and caught inside traced code.

`try`/`except`/`finally`, `raise`, `assert`, custom exception classes, errors raised by operations jitcore models
(a missing dict key, a bad int() literal) and caught by the traced code, and iteration protocols that end with an
exception (`collections.abc.Sequence.__iter__` stops at IndexError). Each must match eager; where the exception is
caught inside the traced code the function stays one graph. An exception nobody catches reaches the caller exactly
as eager raises it; a graph break inside an except block still gives eager's result.
"""

from collections.abc import Sequence

import pytest
import torch

import jitcore as jit
from tests.support import check_against_eager, compare_call, randn


class Rows(Sequence):
    """A sequence whose iteration is collections.abc's: __getitem__ until IndexError."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i >= self.n:
            raise IndexError("row index out of range")
        return i + 1


class CodedError(ValueError):
    def __init__(self, message, code):
        super().__init__(message)
        self.code = code


def test_caught_builtin_exception_is_one_graph():
    def f(x):
        try:
            raise ValueError("bad")
        except ValueError:
            x = x + 1
        return x * 2

    check_against_eager(f, (randn(3, seed=1),))


def test_exception_raised_in_helper_caught_by_caller():
    def helper(x, limit):
        if limit < 0:
            raise IndexError("negative")
        return x * limit

    def f(x):
        try:
            return helper(x, -1)
        except IndexError:
            return helper(x, 2)

    check_against_eager(f, (randn(3, seed=1),))


def test_abc_sequence_iteration_ends_at_index_error():
    def f(x):
        for r in Rows(3):
            x = x * r
        return x, list(Rows(2))

    check_against_eager(f, (randn(3, seed=1),))


def test_custom_exception_with_python_init_keeps_attributes():
    def f(x):
        try:
            raise CodedError("bad", 7)
        except CodedError as e:
            return x * e.code + len(e.args), e.args[0]

    check_against_eager(f, (randn(3, seed=1),))


def test_except_tuple_and_order_of_clauses():
    def f(x, which):
        try:
            if which == 0:
                raise KeyError("k")
            raise TypeError("t")
        except (ValueError, KeyError):
            return x + 1
        except TypeError:
            return x - 1

    check_against_eager(f, (randn(3, seed=1), 0), (randn(3, seed=1), 1), expected_graphs=2)


def test_missing_dict_key_from_modelled_lookup_is_caught():
    def f(x, d):
        try:
            scale = d["scale"]
        except KeyError:
            scale = 3
        return x * scale

    check_against_eager(f, (randn(3, seed=1), {"shift": 1}))


def test_bad_int_literal_is_caught():
    def f(x, text):
        try:
            n = int(text)
        except ValueError:
            n = -1
        return x * n

    check_against_eager(f, (randn(3, seed=1), "zz"))


def test_assert_that_fails_inside_try_is_caught():
    def f(x):
        try:
            assert x.shape[0] == 5, "need five"
        except AssertionError as e:
            return x - 1, e.args
        return x

    check_against_eager(f, (randn(3, seed=1),))


def test_finally_runs_on_normal_and_exceptional_paths():
    log = []

    def f(x, fail):
        try:
            try:
                if fail:
                    raise RuntimeError("stop")
                x = x + 1
            finally:
                x = x * 2
        except RuntimeError:
            x = x - 5
        return x

    check_against_eager(f, (randn(3, seed=1), True), (randn(3, seed=1), False), expected_graphs=2)
    assert log == []


def test_bare_raise_in_handler_reraises_to_outer_handler():
    def f(x):
        try:
            try:
                raise KeyError("inner")
            except KeyError:
                x = x + 1
                raise
        except LookupError:
            x = x * 3
        return x

    check_against_eager(f, (randn(3, seed=1),))


def test_raise_from_sets_cause():
    def f(x):
        try:
            try:
                raise KeyError("a")
            except KeyError as e:
                raise ValueError("b") from e
        except ValueError as e:
            return x + (e.__cause__ is not None)

    check_against_eager(f, (randn(3, seed=1),))


def test_uncaught_exception_reaches_caller_like_eager():
    def f(x):
        y = x + 1
        if y.shape[0] == 3:
            raise CodedError("three", 3)
        return y

    compiled = jit.compile(f)
    for _ in range(2):
        with pytest.raises(CodedError, match="three"):
            compiled(randn(3, seed=1))
    compare_call(f, compiled, (randn(4, seed=1),))


def test_uncaught_exception_keeps_side_effects_before_it():
    seen = []

    def f(x):
        seen.append(1)
        raise ValueError("after append")

    compiled = jit.compile(f)
    with pytest.raises(ValueError, match="after append"):
        compiled(randn(3, seed=1))
    assert seen == [1]


def test_graph_break_inside_except_block_matches_eager(capsys):
    def f(x):
        try:
            y = x * 2
            raise ValueError("go to handler")
        except ValueError as e:
            print("handled", e)
            y = y + 1
        return y.sin()

    compiled = jit.compile(f)
    x = randn(3, seed=1)
    expected = f(x)
    eager_out = capsys.readouterr().out
    for _ in range(2):
        torch.testing.assert_close(compiled(x), expected)
        assert capsys.readouterr().out == eager_out


def test_exception_from_helper_escaping_try_with_other_type_propagates():
    def helper(x):
        raise TypeError("not caught here")

    def f(x):
        try:
            return helper(x)
        except KeyError:
            return x

    compiled = jit.compile(f)
    with pytest.raises(TypeError, match="not caught here"):
        compiled(randn(3, seed=1))


def test_exception_object_returned_is_rebuilt():
    def f(x):
        try:
            raise CodedError("kept", 5)
        except CodedError as e:
            err = e
        return x + 1, err

    compiled = jit.compile(f)
    out, err = compiled(randn(3, seed=1))
    assert type(err) is CodedError and err.args == ("kept",) and err.code == 5


def test_unmatched_except_clause_reraises_from_python_in_strict_mode(monkeypatch):
    """The helper's IndexError passes an `except` for another type: the call runs natively inside the try region
    and the continuation that re-raises must not be traced as a traced exception (found by the fuzzer)."""
    monkeypatch.setattr(jit.config, "strict", True)

    def check(v, limit):
        if v > limit:
            raise IndexError(f"got {v} > {limit}")
        return v

    def f(x, w):
        t0 = x.clamp(min=-1.0)
        try:
            k = check(w.size(1), 1)
            t1 = t0 * k
        except CodedError:
            t1 = t0
        return t1

    compiled = jit.compile(f)
    for _ in range(3):
        with pytest.raises(IndexError, match="got 2 > 1"):
            compiled(randn(3, seed=1), randn(4, 2, seed=2))
    compare_call(f, compiled, (randn(3, seed=1), randn(4, 1, seed=2)))
