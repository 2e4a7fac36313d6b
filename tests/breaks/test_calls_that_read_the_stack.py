"""Breaks: calls that read the call stack for where they were called from run in a function made from the user's
code (Note [Calls that read their frame], capture/continuation.py), not in jitcore's entry: a logging record's
funcName, lineno and filename, traceback's stack functions and warnings keep the user's function and line, in a
plain function, a try block, a closure (whose frame has free variables) and a callee the break runs natively.
Compared with eager through jit.compile and register + enabled()."""

import io
import logging
import traceback
import warnings

import pytest

from tests.support import both_doors, randn

_BUFFER = io.StringIO()
LOG = logging.getLogger("jitcore.tests.stack_readers")


@pytest.fixture(autouse=True)
def _handler():
    handler = logging.StreamHandler(_BUFFER)
    handler.setFormatter(logging.Formatter("%(funcName)s:%(lineno)d:%(filename)s:%(message)s"))
    LOG.addHandler(handler)
    LOG.propagate, LOG.level = False, logging.INFO
    yield
    LOG.removeHandler(handler)


def _logged():
    text = _BUFFER.getvalue()
    _BUFFER.seek(0)
    _BUFFER.truncate()
    return text


def same_as_eager(fn, read=_logged):
    """fn's result and what `read()` collects, eager against both doors."""
    expected = (fn(randn(3, seed=1)).tolist(), read())
    assert expected[1]
    with both_doors(fn) as doors:
        for door in doors:
            for _ in range(2):
                assert (door(randn(3, seed=1)).tolist(), read()) == expected


def test_a_log_record_names_the_users_function_and_line():
    def f(x):
        y = x + 1
        LOG.info("first %s", 3)
        if y.sum() > 0:
            logging.getLogger("jitcore.tests.stack_readers").warning("second")
        try:
            LOG.log(logging.INFO, "in a try")
        finally:
            y = y * 2
        return y

    same_as_eager(f)


def _helper(y):
    LOG.info("in a helper")
    return y + 1


def test_a_log_record_in_a_callee_and_in_a_closure():
    def f(x):
        return _helper(x * 2) - 1

    def make(k):
        def inner(x):
            y = x + k
            LOG.info("in a closure")
            return y * k
        return inner

    same_as_eager(f)
    same_as_eager(make(3))


def test_traceback_and_warnings_see_the_users_frame():
    seen = []

    def f(x):
        y = x + 1
        seen.append(traceback.format_stack(limit=1)[0].split(",")[1:])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            warnings.warn("careful")
        seen.append([(str(w.message), w.lineno, w.filename) for w in caught])
        return y * 2

    def read():
        out = list(seen)
        seen.clear()
        return out

    same_as_eager(f, read)
