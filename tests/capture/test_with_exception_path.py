"""Capture: a with-block whose body raises (WITH_EXCEPT_START): __exit__ runs with the exception and may swallow
it; contextlib helpers whose exit runs on the exception path; unittest's `with self.assertRaises(...)`;
str()/repr()/.args of exceptions raised and caught inside; `with torch.inference_mode():` inside the function.
Each compared with eager through jit.compile and register + enabled(), in one graph.
"""

import contextlib
import dis
import unittest

import torch

import jitcore as jit
from tests.support import check_against_eager, check_registered_against_eager, randn


def one_graph_both_doors(fn, *arg_sets):
    check_against_eager(fn, *arg_sets, expected_graphs=1)
    assert check_registered_against_eager(fn, *arg_sets).graph_count == 1


class Recorder:
    def __init__(self, log, swallow=()):
        self.log, self.swallow = log, swallow

    def __enter__(self):
        self.log.append("enter")
        return self

    def __exit__(self, typ, val, tb):
        self.log.append((typ.__name__, val.args) if typ else "clean")
        return typ is not None and issubclass(typ, self.swallow)


def test_exit_that_returns_true_swallows_the_exception():
    def f(x, log):
        with Recorder(log, swallow=KeyError):
            y = x + 1
            raise KeyError("k")
        return y * 2

    one_graph_both_doors(f, (randn(3, seed=1), []))
    assert any(i.opname == "WITH_EXCEPT_START" for i in dis.get_instructions(f))


def test_exit_that_returns_false_lets_the_exception_reach_an_outer_handler():
    def f(x, log):
        try:
            with Recorder(log, swallow=KeyError):
                raise ValueError("v", 2)
        except ValueError as e:
            log.append(("outer", e.args))
        return x + len(log)

    one_graph_both_doors(f, (randn(3, seed=1), []))


def test_contextmanager_finally_runs_on_the_exception_path():
    def f(x, log):
        @contextlib.contextmanager
        def cm():
            log.append("in")
            try:
                yield
            finally:
                log.append("out")
        try:
            with cm():
                raise RuntimeError("r")
        except RuntimeError:
            log.append("caught")
        return x * len(log)

    one_graph_both_doors(f, (randn(3, seed=1), []))


def test_contextmanager_that_catches_swallows_and_one_that_reraises_chains():
    def f(x):
        @contextlib.contextmanager
        def ignoring(*types):
            try:
                yield
            except types:
                pass

        @contextlib.contextmanager
        def wrapping():
            try:
                yield
            except KeyError as e:
                raise ValueError("wrapped") from e
        with ignoring(KeyError, IndexError):
            {}["missing"]
        try:
            with wrapping():
                raise KeyError("k")
        except ValueError as e:
            return x + 1, str(e), type(e.__cause__).__name__, e.__cause__.args

    one_graph_both_doors(f, (randn(3, seed=1),))


def test_suppress_keeps_the_work_done_before_the_error():
    def f(x):
        with contextlib.suppress(ZeroDivisionError):
            x = x * 2
            1 / 0
        return x + 1

    one_graph_both_doors(f, (randn(3, seed=1),))


def test_grad_mode_is_restored_when_an_exception_leaves_no_grad():
    def f(x):
        try:
            with torch.no_grad():
                y = x * 2
                raise ValueError("v")
        except ValueError:
            pass
        return y + x, torch.is_grad_enabled()

    one_graph_both_doors(f, (randn(3, seed=1).requires_grad_(),))


class _Case(unittest.TestCase):
    def runTest(self):
        pass


def test_assert_raises_as_a_context_manager():
    def f(x):
        case = _Case()
        with case.assertRaises(ValueError) as caught:
            raise ValueError("bad", 1)
        with case.assertRaises(KeyError):
            {}["miss"]
        return x + 1, caught.exception.args

    one_graph_both_doors(f, (randn(3, seed=1),))


class CodeError(Exception):
    def __init__(self, code):
        super().__init__(f"code={code}")
        self.code = code


def test_str_repr_and_args_of_exceptions_raised_and_caught():
    def f(x):
        out = []
        for exc in (ValueError("bad value", 3), KeyError("k"), CodeError(7), StopIteration()):
            try:
                raise exc
            except Exception as e:
                out.append((str(e), repr(e), e.args, f"{e}", f"{e!r}"))
        try:
            {"a": 1}["b"]
        except KeyError as e:
            out.append((str(e), e.args))
        return x * len(out), out

    one_graph_both_doors(f, (randn(3, seed=1),))


def test_inference_mode_inside_the_function_is_one_graph():
    def f(x):
        with torch.inference_mode():
            y = x * 2
        with torch.inference_mode(False):
            z = x.sin()
        return y + 1, z

    one_graph_both_doors(f, (randn(3, seed=1),))

    def g(x):
        with torch.inference_mode():
            y = x * 2
        return y, x + 1

    for backend in ("eager", "aot_eager"):
        out = jit.compile(g, backend=backend)(randn(3, seed=2))
        expected = g(randn(3, seed=2))
        assert not torch.is_inference_mode_enabled()
        assert [t.is_inference() for t in out] == [t.is_inference() for t in expected], backend
        torch.testing.assert_close(out, expected)


def test_is_inference_of_a_tensor_made_in_inference_mode_matches_eager():
    def f(x):
        with torch.inference_mode():
            y = x * 2
        return y + 1, y.is_inference(), x.is_inference()

    check_against_eager(f, (randn(3, seed=1),), expected_graphs=None)
    check_registered_against_eager(f, (randn(3, seed=1),))


def test_assert_raises_regex_and_re_on_constants():
    import re

    def f(x):
        case = _Case()
        with case.assertRaisesRegex(KeyError, "mi+ss"):
            {}["miss"]
        found = re.search(r"(\d+)x(\d+)", f"shape {x.shape[0]}x{x.shape[1]}")
        return x * int(found.group(1)), found.groups(), re.sub("a", "b", "banana")

    one_graph_both_doors(f, (randn(2, 3, seed=1),))
