"""`del name` of a global (DELETE_GLOBAL) is captured like an assignment: replayed after the graph, so the name is
gone afterwards; reads after it in the same call raise NameError (or find the builtin it shadowed), and a name that
is not there raises NameError as in eager. Both through `jit.compile` and `register` + `enabled()`."""
import dis
import operator

import pytest
import torch

import jitcore as jit
from tests.breaks.helpers import assert_in_graphs, call_capturing
from tests.support import Args, CountingBackend, assert_same, both_doors, randn

_THIS = globals()


@pytest.fixture(autouse=True)
def _strict(monkeypatch):
    """An internal error is raised, not contained: a fallback would hide it behind eager's own result."""
    monkeypatch.setattr(jit.config, "strict", True)


def _state():
    return {name: _THIS[name] for name in ("G", "len") if name in _THIS}


def _compare(fn, make_globals, capsys, calls=2):
    """Eager and each door on the same fresh globals, `calls` times in a row: results, exceptions, printed
    output and the globals after each call agree. Returns the counting backend."""
    counting = CountingBackend()
    try:
        with both_doors(fn, counting) as doors:
            for door in doors:
                runs = []
                for side in (fn, door):
                    for name in ("G", "len"):
                        _THIS.pop(name, None)
                    _THIS.update(make_globals())
                    outcomes = []
                    for call in range(calls):
                        out, result, error = call_capturing(side, Args(randn(3, seed=call)), capsys)
                        outcomes.append((out, result, repr(error), _state()))
                    runs.append(outcomes)
                for (e_out, e_result, e_error, e_state), (c_out, c_result, c_error, c_state) in zip(*runs):
                    assert (c_out, c_error) == (e_out, e_error)
                    assert_same(e_result, c_result)
                    assert_same(e_state, c_state, "globals after the call")
    finally:
        for name in ("G", "len"):
            _THIS.pop(name, None)
    return counting


def test_delete_global_after_reading_it_is_one_graph_and_the_name_is_gone(capsys):
    def f(x):
        global G
        y = x + G
        del G
        return y * 2

    assert "DELETE_GLOBAL" in {i.opname for i in dis.get_instructions(f)}
    counting = _compare(f, lambda: {"G": 1.5}, capsys)
    assert counting.graph_count == 2, "one graph per door, the first call's (the second raises NameError on G)"
    assert_in_graphs(counting, operator.add, operator.mul)


def test_read_after_delete_raises_name_error_caught_inside(capsys):
    def f(x):
        global G
        del G
        try:
            return x + G
        except NameError as error:
            return x - 1, str(error)

    _compare(f, lambda: {"G": 2}, capsys)


def test_delete_then_assign_again_leaves_the_new_value(capsys):
    def f(x):
        global G
        del G
        G = x.sum()
        return x * G

    _compare(f, lambda: {"G": 2}, capsys)


def test_delete_of_a_global_shadowing_a_builtin_uncovers_the_builtin(capsys):
    def f(x):
        global len
        a = len(x)
        del len
        return x + a + len([1, 2, 3])

    _compare(f, lambda: {"len": lambda s: 100}, capsys)


def test_delete_of_a_missing_global_raises_name_error(capsys):
    def f(x):
        global G
        y = x + 1
        del G
        return y

    _compare(f, lambda: {}, capsys)


def test_delete_before_a_graph_break_is_seen_by_the_code_after_it(capsys):
    def f(x):
        global G
        y = x * G
        del G
        print("G" in globals())
        return y + 1

    counting = _compare(f, lambda: {"G": 3}, capsys)
    assert_in_graphs(counting, operator.add)  # the code after the print is captured too
