"""In-place operators on mutable containers change the container itself, with Python's semantics: the identity is
kept, so an alias sees the change, and a container passed in is changed after the call; a frozenset's and a
tuple's make a new object. Also explicit calls (`lst.__iadd__(...)`, `s.__ior__(...)`) and set.pop().

Each case runs eagerly, through `jit.compile(backend="eager")` and `register` + `enabled()` (tests.capture.
test_live_containers._check), and compares results, exceptions and the arguments afterwards."""
import pytest

import jitcore as jit
from tests.capture.test_live_containers import _check
from tests.support import CountingBackend, assert_same, check_against_eager, randn


def set_argument_in_place(x, s):
    alias = s
    s |= {9}
    alias &= {9, 1, 5}
    alias ^= {5, 7}
    alias -= {7}
    return x + len(s), s is alias


def set_dunder_calls(x, s):
    same = s.__ior__({4})
    return x + len(s), same is s, s.__iand__({4}), s.__ior__([1])


def frozenset_rebinds(x):
    a = frozenset({1})
    b = a
    a |= {2}
    return x + len(a) + len(b), type(a)


def set_operators_make_new_sets(x, s):
    other = {2, 3}
    return x, s | other, s & other, s - other, s ^ other, other - s, len(s)


def list_argument_in_place(x, items):
    alias = items
    items += [1]
    items *= 2
    same = items.__iadd__((5,))
    items.__imul__(2)
    return x + len(alias), same is items


def list_times_zero(x, items):
    items *= 0
    return x + len(items)


def tuple_rebinds(x):
    a = (1,)
    b = a
    a += (2,)
    a *= 2
    return x + len(a) + len(b)


def dict_argument_in_place(x, d):
    alias = d
    d |= {"z": 1}
    d.__ior__({"q": 2})
    return x + len(alias)


def set_pop_removes(x):
    s = {3}
    v = s.pop()
    return x + v + len(s)


def set_argument_pops(x, s):
    a = s.pop()
    b = s.pop()
    return x + a * 10 + b


def set_pop_empty(x):
    s = set()
    return s.pop()


@pytest.mark.parametrize("fn, arg_sets", [
    (set_argument_in_place, [(randn(3), {1, 2})]),
    (set_dunder_calls, [(randn(3), {1})]),
    (frozenset_rebinds, [(randn(3),)]),
    (set_operators_make_new_sets, [(randn(3), {1, 2})]),
    (list_argument_in_place, [(randn(3), [1, 2])]),
    (list_times_zero, [(randn(3), [1, 2])]),
    (tuple_rebinds, [(randn(3),)]),
    (dict_argument_in_place, [(randn(3), {"a": 1})]),
    (set_pop_removes, [(randn(3),)]),
    (set_argument_pops, [(randn(3), {5, 6, 7})]),
    (set_pop_empty, [(randn(3),)]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_in_place_operators_change_the_container(fn, arg_sets):
    _check(fn, *arg_sets)


def test_in_place_operators_stay_in_one_graph():
    backend = CountingBackend()
    compiled = jit.compile(set_argument_in_place, backend=backend)
    s = {1, 2}
    result, same = compiled(randn(3), s)
    assert s == {1, 5, 9} and same and backend.graph_count == 1
    assert_same(result, randn(3) + 3)
    check_against_eager(list_argument_in_place, (randn(3), [1, 2]))
    check_against_eager(dict_argument_in_place, (randn(3), {"a": 1}))
