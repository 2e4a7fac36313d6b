"""Containers changed while they are iterated or viewed: iterators and dict views read the container as it is at
each step, like CPython's (a list's iterator by index, a dict's and a set's checking the size between steps and
raising RuntimeError after the changes made so far; keys(), values() and items() are live views).

Each case runs eagerly, through `jit.compile(backend="eager")` and through `register` + `enabled()`, and compares
results, exceptions (type and message) and the arguments afterwards."""
import copy

import pytest

from tests.support import assert_same, both_doors, outcome, randn


def _check(fn, *arg_sets):
    """fn compiled and registered agrees with eager on every arg set (twice each: the second call is a hit): the
    same result or exception, the same arguments afterwards. Each call gets its own deep copy of the arguments
    (sets included)."""
    with both_doors(fn) as (compiled, registered):
        for arg_set in arg_sets:
            eager_args = copy.deepcopy(arg_set)
            expected = outcome(fn, *eager_args)
            for runner in (compiled, compiled, registered, registered):
                args = copy.deepcopy(arg_set)
                got = outcome(runner, *args)
                assert got[0] == expected[0], f"eager {expected}, compiled {got}"
                assert_same(expected[1], got[1])
                assert_same(eager_args, args, "args after the call")


# -- lists: the iterator walks by index ------------------------------------------------------------------------
def list_grows_while_iterated(x):
    items = [1, 1]
    for _ in items:
        if len(items) < 5:
            items.append(1)
    return x + len(items), items


def list_argument_grows_while_iterated(x, items):
    seen = 0
    for v in items:
        seen += v
        if len(items) < 6:
            items.append(v + 1)
    return x * seen


def list_shrinks_while_iterated(x, items):
    taken = []
    for v in items:
        taken.append(v)
        items.pop()
    return x + len(taken), taken


def list_iterator_stays_exhausted(x):
    items = [1]
    it = iter(items)
    first = next(it)
    end = next(it, None)
    items.append(2)
    return x + first, end, next(it, "done")


def list_grows_across_a_graph_break(x, items):
    for v in items:
        print(v)
        if len(items) < 4:
            items.append(v + 10)
        x = x + v
    return x


def enumerate_sees_growth(x, items):
    for i, v in enumerate(items):
        if len(items) < 4:
            items.append(v + 1)
        x = x + i * v
    return x, list(enumerate(items, 5))


def zip_sees_growth(x, items):
    out = []
    for a, b in zip(items, (1, 2, 3, 4, 5)):
        if len(items) < 4:
            items.append(a)
        out.append(a + b)
    return x, out, list(zip(items, items))


def enumerate_across_a_graph_break(x, items):
    for i, v in enumerate(items):
        print(i, v)
        if len(items) < 4:
            items.append(v + 1)
        x = x + i * v
    return x


def zip_of_list_and_dict_across_a_graph_break(x, items, d):
    for a, k in zip(items, d):
        print(a, k)
        x = x + a
    return x


def enumerate_of_a_dict_that_grows(x, d):
    for i, k in enumerate(d):
        d[k + "x"] = i
    return x


@pytest.mark.parametrize("fn, arg_sets", [
    (enumerate_sees_growth, [(randn(3), [1, 2])]),
    (zip_sees_growth, [(randn(3), [1, 2])]),
    (enumerate_across_a_graph_break, [(randn(3), [1, 2])]),
    (zip_of_list_and_dict_across_a_graph_break, [(randn(3), [1, 2, 3], {"a": 1, "b": 2})]),
    (enumerate_of_a_dict_that_grows, [(randn(3), {"a": 1})]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_enumerate_and_zip_read_live_iterators(fn, arg_sets):
    _check(fn, *arg_sets)


@pytest.mark.parametrize("fn, arg_sets", [
    (list_grows_while_iterated, [(randn(3),)]),
    (list_argument_grows_while_iterated, [(randn(3), [1, 2]), (randn(3), [5])]),
    (list_shrinks_while_iterated, [(randn(3), [1, 2, 3, 4])]),
    (list_iterator_stays_exhausted, [(randn(3),)]),
    (list_grows_across_a_graph_break, [(randn(3), [1, 2])]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_list_iteration_sees_changes(fn, arg_sets):
    _check(fn, *arg_sets)


# -- dicts and sets: a change of size raises at the next step ---------------------------------------------------
def dict_argument_emptied_while_iterated(x, d):
    for k in d:
        del d[k]
    return x


def dict_grows_while_iterated(x):
    d = {1: 1}
    for k in d:
        d[k + 1] = 1
    return x + len(d)


def dict_change_caught(x, d):
    log = []
    try:
        for k, v in d.items():
            log.append(k)
            d[k + "!"] = v
    except RuntimeError as exc:
        log.append(str(exc))
    return x + len(d), log


def dict_values_changed_in_place(x, d):
    total = 0
    for k in d:
        d[k] = 10
        total += d[k]
    for v in d.values():
        total += v
    return x + total


def dict_change_after_graph_break(x, d):
    for k in d:
        print(k)
        d["new" + k] = 1
    return x


def dict_changed_then_restored(x, d):
    out = []
    for k in d:
        d["tmp"] = 1
        del d["tmp"]
        out.append(k)
    return x, out


def set_argument_grows_while_iterated(x, s):
    for v in s:
        s.add(v + 100)
    return x


def set_change_caught(x):
    s = {1, 2, 3}
    try:
        for v in s:
            s.discard(v)
    except RuntimeError as exc:
        return x + len(s), str(exc)
    return x, "no error"


@pytest.mark.parametrize("fn, arg_sets", [
    (dict_argument_emptied_while_iterated, [(randn(3), {"a": 1, "b": 2})]),
    (dict_grows_while_iterated, [(randn(3),)]),
    (dict_change_caught, [(randn(3), {"a": 1, "b": 2})]),
    (dict_values_changed_in_place, [(randn(3), {"a": 1, "b": 2})]),
    (dict_change_after_graph_break, [(randn(3), {"a": 1})]),
    (dict_changed_then_restored, [(randn(3), {"a": 1, "b": 2})]),
    (set_argument_grows_while_iterated, [(randn(3), {1, 2})]),
    (set_change_caught, [(randn(3),)]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_dict_and_set_iteration_checks_size(fn, arg_sets):
    _check(fn, *arg_sets)


# -- dict views are live -----------------------------------------------------------------------------------------
def keys_view_sees_insert(x):
    d = {1: 1}
    k = d.keys()
    d[4] = 2
    return x + (4 in k) + len(k), list(k)


def views_of_an_argument(x, d):
    keys, values, items = d.keys(), d.values(), d.items()
    d["z"] = 3
    del d["a"]
    return x + len(keys) + sum(values), list(keys), list(values), list(items), ("z", 3) in items, 1 in values


def keys_view_set_operations(x, d):
    k = d.keys()
    d["c"] = 3
    return (x, sorted(k & {"a", "c", "q"}), sorted(k | {"q"}), sorted(k - {"a"}), sorted(k ^ {"a", "q"}),
            k == {"a", "b", "c"}, k.isdisjoint({"q"}), sorted(d.items() & {("a", 1), ("c", 0)}))


def view_iterated_while_dict_changes(x, d):
    out = []
    try:
        for k, v in d.items():
            out.append(v)
            d.pop(k)
    except RuntimeError as exc:
        out.append(str(exc))
    return x, out


def view_returned(x, d):
    v = d.values()
    d["q"] = 5
    return x, list(v), len(v)


@pytest.mark.parametrize("fn, arg_sets", [
    (keys_view_sees_insert, [(randn(3),)]),
    (views_of_an_argument, [(randn(3), {"a": 1, "b": 2})]),
    (keys_view_set_operations, [(randn(3), {"a": 1, "b": 2})]),
    (view_iterated_while_dict_changes, [(randn(3), {"a": 1, "b": 2})]),
    (view_returned, [(randn(3), {"a": 1})]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_dict_views_are_live(fn, arg_sets):
    _check(fn, *arg_sets)


def test_live_iteration_stays_in_one_graph():
    from tests.support import check_against_eager
    check_against_eager(list_grows_while_iterated, (randn(3),))
    check_against_eager(keys_view_sees_insert, (randn(3),))
    check_against_eager(dict_change_counted, (randn(3), {"a": 1, "b": 2}))


def dict_change_counted(x, d):
    steps = 0
    try:
        for k in d:
            steps += 1
            d[k + "!"] = 1
    except RuntimeError:
        steps += 10
    return x + steps + len(d)
