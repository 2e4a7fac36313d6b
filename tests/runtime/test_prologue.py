"""The dispatch prologue keeps the original function's behaviour: arguments, cells, tracebacks, fallthrough."""
import dis
import traceback

import pytest

from jitcore.runtime.prologue import build_prologue_code, FALLTHROUGH


def _install(fn, dispatch):
    fn.__code__ = build_prologue_code(fn.__code__, dispatch)
    return fn


def test_dispatch_result_is_returned():
    def f(a, b):
        return a + b

    _install(f, lambda a, b, cells: ("dispatched", a, b))
    assert f(1, 2) == ("dispatched", 1, 2)


def test_fallthrough_runs_original_body():
    def f(a, b=10, *rest, k=3, **kw):
        return a + b + sum(rest) + k + sum(kw.values())

    seen = []

    def dispatch(a, b, k, rest, kw, cells):
        seen.append((a, b, k, rest, kw, cells))
        return FALLTHROUGH

    _install(f, dispatch)
    assert f(1, 2, 3, 4, k=5, z=6) == 21
    assert f(1) == 14
    assert seen[0] == (1, 2, 5, (3, 4), {"z": 6}, None)


def test_closure_cells_are_passed():
    def outer(k):
        def inner(v):
            return v + k
        return inner

    inner = outer(5)
    got = []
    _install(inner, lambda v, cells: got.append(cells[0].cell_contents) or FALLTHROUGH)
    assert inner(1) == 6
    assert got == [5]


def test_argument_that_is_a_cell_is_passed_by_value():
    def f(a):
        def g():
            return a * 2
        return g()

    got = []
    _install(f, lambda a, cells: got.append(a) or FALLTHROUGH)
    assert f(21) == 42
    assert got == [21]


def test_traceback_points_at_original_line():
    def f(a):
        return 1 / a

    _install(f, lambda a, cells: FALLTHROUGH)
    with pytest.raises(ZeroDivisionError) as info:
        f(0)
    frames = traceback.extract_tb(info.value.__traceback__)
    assert frames[-1].line.strip() == "return 1 / a"


def test_prologue_code_is_valid_for_dis():
    def f(x, y):
        return x * y

    code = build_prologue_code(f.__code__, lambda x, y, cells: FALLTHROUGH)
    names = [i.opname for i in dis.get_instructions(code)]
    assert names[0] == "RESUME" and "CALL" in names
    assert code.co_varnames == f.__code__.co_varnames
