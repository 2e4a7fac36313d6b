"""An object made inside the captured frame that is both replayed (stored into a global, an attribute, a list
passed in) and rebuilt (returned, on the stack or in a live local at a graph break) is built once, where the entry
first needs it, and is the same object in both places; the entry's code never reads it before binding it."""
import operator

import pytest
import torch

import jitcore as jit
from tests.breaks.helpers import assert_in_graphs, compare_printing
from tests.support import assert_same, both_doors, randn

STORED = None
LST = [1]


@pytest.fixture(autouse=True)
def _strict(monkeypatch):
    """An internal error is raised, not contained: a fallback would hide it behind eager's own result."""
    monkeypatch.setattr(jit.config, "strict", True)


def _fresh():
    globals().update(STORED=None, LST=[1])


def _run_both_doors(fn, arg_sets, capsys, counting):
    """Each call against eager (result, printed output, globals after), through compile and register+enabled."""
    try:
        with both_doors(fn, counting) as doors:
            for door in doors:
                for args in arg_sets:
                    for _ in range(2):
                        _fresh()
                        expected = fn(*args)
                        eager_state = (STORED, list(LST))
                        _fresh()
                        actual = door(*args)
                        assert_same(eager_state, (STORED, list(LST)), "globals after the call")
                        assert (actual is STORED) == (expected is eager_state[0]), "the stored object is the result"
                        _fresh()
                        compare_printing(fn, door, args, capsys)
    finally:
        _fresh()


def test_list_made_inside_stored_in_a_global_and_returned_is_one_object(capsys, counting):
    def f(x):
        global STORED
        STORED = [x.sin()]
        return STORED

    _run_both_doors(f, [(randn(3, seed=1),), (randn(3, seed=2),)], capsys, counting)
    assert counting.graph_count == 2, "one graph for each door"


def test_global_list_times_equals_then_imul_call_with_graph_breaks_allowed(capsys, counting):
    def f(x):
        global LST
        LST *= 2
        LST.__imul__(3)
        return x.sin()

    _run_both_doors(f, [(randn(3, seed=1),), (randn(3, seed=2),)], capsys, counting)


def test_global_rebound_to_a_new_list_before_a_break_keeps_its_identity_after(capsys, counting):
    def f(x):
        global STORED
        STORED = [x.cos(), 1]
        y = x.sin()
        print("made", len(STORED))
        STORED.append(2)
        return STORED, y * 2

    _run_both_doors(f, [(randn(3, seed=1),), (randn(3, seed=2),)], capsys, counting)
    assert_in_graphs(counting, operator.mul)  # the code after the print is captured too


def test_new_list_stored_on_a_passed_object_and_live_at_a_break_is_one_object(capsys, counting):
    class Box:
        pass

    def f(x, box):
        made = [x + 1]
        box.items = made
        print("stored")
        return made is box.items, x * 2

    for box in (Box(), Box()):
        assert compare_printing(f, jit.compile(f, backend=counting), (randn(3), box), capsys)[0] is True
