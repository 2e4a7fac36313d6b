"""Capture: exception chaining inside traced code is Python's.

A `raise` with arguments inside an `except` or `finally` (and an error an operation raises there) gets the
exception being handled as `__context__`; `raise X from Y` sets `__cause__` and `__suppress_context__`, `from None`
suppresses; assigning `__context__`/`__cause__` to an exception made inside is kept; a bare `raise` chains nothing;
the cycle CPython cuts is cut; a generator's handlers are its own while it is suspended; PEP 479's RuntimeError is
raised from the StopIteration. Below the traced handlers is what the caller of the compiled function handles:
exceptions that leave the frame (returned or raised) carry it as Python gives it. `sys.exc_info()`,
`sys.exception()` and `generator.throw()` give Python's answers. Every case is compared with eager through
`jit.compile` and `register` + `enabled()`, exceptions by type, message, context, cause and suppression.
"""
from __future__ import annotations

import sys

import pytest
import torch

import jitcore as jit
from tests.support import CountingBackend


def _describe(value, depth=0):
    """A comparable picture of a result: tensors as lists, exceptions with their whole chain."""
    if isinstance(value, BaseException):
        if depth > 6:
            return "..."
        return (type(value).__name__, str(value), _describe(value.__context__, depth + 1),
                _describe(value.__cause__, depth + 1), value.__suppress_context__)
    if isinstance(value, torch.Tensor):
        return ("tensor", value.tolist())
    if isinstance(value, (tuple, list)):
        return type(value).__name__, [_describe(v, depth) for v in value]
    return value


def _outcome(fn, *args):
    try:
        return "returned", _describe(fn(*args))
    except Exception as exc:  # noqa: BLE001 - compared with eager's
        return "raised", _describe(exc)


def check_chaining(fn, *args, graphs=None, outer=None):
    """fn through eager, jit.compile and register+enabled agree (twice each); `outer`: the calls are made while
    the caller handles this exception. `graphs`: graphs the compiled copy must make."""
    def calling(g):
        if outer is None:
            return _outcome(g, *args)
        try:
            raise outer
        except type(outer):
            return _outcome(g, *args)

    expected = calling(fn)
    counting = CountingBackend()
    compiled = jit.compile(fn, backend=counting)
    assert [calling(compiled) for _ in range(2)] == [expected] * 2
    if graphs is not None:
        assert counting.graph_count == graphs
    jit.register(fn)
    try:
        with jit.enabled(backend=CountingBackend()):
            assert [calling(fn) for _ in range(2)] == [expected] * 2
    finally:
        jit.unregister(fn)
    return expected


X = torch.arange(3.0)


def test_raise_inside_except_chains_the_handled_exception_and_stays_one_graph():
    def f(x):
        try:
            try:
                raise ValueError("a")
            except ValueError:
                raise KeyError("b")
        except KeyError as e:
            return x + 1, type(e.__context__).__name__, e.__cause__, e.__suppress_context__

    assert check_chaining(f, X, graphs=1)[1][1][1] == "ValueError"


def test_raise_inside_finally_chains_the_exception_on_its_way_out():
    def f(x):
        try:
            try:
                raise ValueError("a")
            finally:
                raise KeyError("b")
        except KeyError as e:
            return x + 1, e

    check_chaining(f, X, graphs=1)


def test_raise_from_sets_cause_context_and_suppression():
    def f(x):
        try:
            try:
                raise ValueError("a")
            except ValueError as v:
                raise KeyError("b") from v
        except KeyError as e:
            return x * 2, e, e.__cause__ is e.__context__

    assert check_chaining(f, X, graphs=1)[1][1][2] is True


def test_raise_from_none_and_from_a_class():
    def f(x, which):
        try:
            try:
                raise ValueError("a")
            except ValueError:
                if which:
                    raise KeyError("b") from None
                raise KeyError("c") from TypeError
        except KeyError as e:
            return x - 1, e

    check_chaining(f, X, True)
    check_chaining(f, X, False)


@pytest.mark.parametrize("caught", [True, False])
def test_exceptions_leaving_the_frame_keep_their_chain(caught):
    def f(x, caught):
        try:
            raise ValueError("a")
        except ValueError:
            try:
                raise KeyError("b")
            except KeyError as k:
                if caught:
                    return x + 1, k
                raise RuntimeError("c") from k

    check_chaining(f, X, caught)


def test_context_assigned_to_an_exception_made_inside_is_kept():
    def f(x, raise_it):
        v = ValueError("v")
        v.__context__ = TypeError("t")
        if raise_it:
            raise v
        try:
            raise v
        except ValueError as e:
            return x + 1, e

    check_chaining(f, X, False)
    check_chaining(f, X, True)


def test_context_assigned_then_raised_inside_a_handler_is_replaced():
    def f(x):
        v = ValueError("v")
        v.__context__ = TypeError("t")
        try:
            try:
                raise KeyError("k")
            except KeyError:
                raise v
        except ValueError as e:
            return x + 1, e

    assert check_chaining(f, X)[1][1][1][2][0] == "KeyError"


def test_assigning_cause_sets_suppress_context():
    def f(x):
        e = ValueError("v")
        e.__cause__ = KeyError("c")
        before = e.__suppress_context__
        e.__suppress_context__ = False
        return x + 1, before, e

    check_chaining(f, X, graphs=1)


def test_bare_raise_does_not_chain_again_and_the_cycle_is_cut():
    def f(x):
        try:
            try:
                raise ValueError("a")
            except ValueError as a:
                try:
                    raise KeyError("b")
                except KeyError:
                    raise a
        except ValueError as e:
            return x + 1, e

    described = check_chaining(f, X)
    # a's context is b, whose context (a) was cut
    assert described[1][1][1][2][0] == "KeyError" and described[1][1][1][2][2] is None


def test_error_of_a_modelled_operation_chains_to_the_handled_exception():
    def f(x, d):
        try:
            raise ValueError("v")
        except ValueError:
            try:
                return d["missing"]
            except KeyError as k:
                return x + 1, k

    check_chaining(f, X, {})


def test_generator_suspended_in_its_handler_does_not_lend_its_exception():
    def f(x):
        def g():
            try:
                raise ValueError("in the generator")
            except ValueError:
                yield 1
            yield 2

        it = g()
        first = next(it)
        try:
            raise KeyError("k")
        except KeyError as e:
            return x + first, e, next(it)

    check_chaining(f, X)


def test_stop_iteration_leaving_a_generator_becomes_runtime_error_from_it():
    def f(x):
        def g():
            yield 1
            raise StopIteration(5)

        try:
            return list(g())
        except RuntimeError as e:
            return x + 1, e

    check_chaining(f, X)


def test_what_the_caller_handles_is_the_context_of_exceptions_raised_outside_handlers():
    def returns(x):
        try:
            raise ValueError("v")
        except ValueError as e:
            return x + 1, e

    def raises(x):
        v = ValueError("v")
        v.__context__ = TypeError("t")
        raise v

    for fn in (returns, raises):
        check_chaining(fn, X, outer=LookupError("outer"))
        check_chaining(fn, X)


def test_reading_the_context_of_an_exception_raised_outside_handlers_is_the_callers():
    def f(x):
        try:
            raise ValueError("v")
        except ValueError as e:
            return x + 1, e.__context__

    check_chaining(f, X, outer=LookupError("outer"))
    check_chaining(f, X)


def test_exc_info_and_exception_inside_and_outside_handlers():
    def f(x):
        before = sys.exc_info()[0], sys.exception()
        try:
            raise ValueError("a")
        except ValueError:
            t, v, tb = sys.exc_info()
            return x + 1, before, t.__name__, v, sys.exception() is v, tb is not None

    check_chaining(f, X)
    check_chaining(f, X, outer=LookupError("outer"))


def test_sys_exception_inside_a_traced_handler_is_the_handled_exception_in_one_graph():
    def f(x):
        try:
            try:
                raise ValueError("a")
            except ValueError:
                inner = sys.exception()
                raise KeyError("b")
        except KeyError:
            return x + 1, inner, sys.exception(), sys.exception().__context__ is inner

    assert check_chaining(f, X, graphs=1)[1][1][3] is True
    check_chaining(f, X, outer=LookupError("outer"))


def test_generator_throw_behaves_as_python():
    def f(x, caught):
        def g():
            try:
                yield 1
            except ValueError as e:
                yield str(e)
            yield 3

        it = g()
        a = next(it)
        if caught:
            return x + a, it.throw(ValueError("thrown")), next(it)
        it2 = g()
        next(it2)
        next(it2)
        return it2.throw(KeyError("k"))

    check_chaining(f, X, True)
    check_chaining(f, X, False)
