"""Capture: explicit dunder calls on builtin values mean the operator or protocol they implement
(capture/values/dunders.py), bound (`lst.__getitem__(2)`) or unbound (`list.__getitem__(lst, 2)`), with Python's
NotImplemented where a binary slot does not take the operand's type. Each matches eager in one graph.
"""

import collections

import jitcore as jit
from tests.support import check_against_eager, randn


def one_graph(fn, *arg_sets):
    check_against_eager(fn, *arg_sets)
    jit.compile(fn, backend="eager", fullgraph=True)(*[a.clone() if hasattr(a, "clone") else list(a)
                                                       for a in arg_sets[0]])


def test_list_item_dunders_read_and_write_items():
    def f(x):
        lst = [x, x + 1, x + 2]
        lst.__setitem__(0, x * 3)
        lst.__delitem__(1)
        return lst.__getitem__(1) + lst.__getitem__(0) + lst.__len__() + lst.__contains__(lst[0])

    one_graph(f, (randn(3, seed=1),))


def test_inplace_dunders_mutate_a_list_argument():
    def f(x, lst):
        lst.__iadd__([7])
        same = lst.__imul__(2)
        return x + len(same) + (same is lst)

    one_graph(f, (randn(3, seed=1), [1, 2]))


def test_sequence_and_number_binary_dunders():
    def f(x):
        t = (x,).__mul__(3)
        joined = [1].__add__([2, 3])
        n = (3).__add__(4) + (10).__floordiv__(3) + (2).__rsub__(10)
        return t[2] * n + len(joined) + (2.5).__mul__(2.0) + (1.5).__neg__() + "ab".__add__("cd").__len__()

    one_graph(f, (randn(3, seed=1),))


def test_binary_dunder_answers_not_implemented_for_an_operand_it_does_not_take():
    def f(x):
        results = [(1).__eq__(1.0), [1].__eq__((1,)), (2).__add__(0.5), {1}.__or__([1]), [1].__lt__((1,))]
        return x + sum(r is NotImplemented for r in results) + ((1.0).__eq__(1) is True)

    one_graph(f, (randn(3, seed=1),))


def test_dict_and_set_dunders():
    def f(x):
        d = {"a": 1}
        d.__setitem__("b", 2)
        s = {1, 2}.__or__({3})
        return x + d.__getitem__("b") + d.__len__() + d.__contains__("a") + len(s) + s.__contains__(3)

    one_graph(f, (randn(3, seed=1),))


def test_unbound_slot_descriptors_work_like_bound_ones():
    def f(x):
        lst = [1, 2, 3]
        list.__setitem__(lst, 0, 10)
        return x + list.__getitem__(lst, 0) + int.__add__(1, 2) + tuple.__len__((1, 2)) + float.__gt__(2.0, 1.0)

    one_graph(f, (randn(3, seed=1),))


def test_namedtuple_keeps_tuples_dunders():
    Point = collections.namedtuple("Point", "a b")

    def f(x):
        p = Point(x, 2)
        return p.__getitem__(0) * p.__len__() + p.__contains__(p[0])

    one_graph(f, (randn(3, seed=1),))


def test_sequence_concatenation_with_another_kind_raises_type_error():
    def f(x):
        return x + len([1].__add__((2,)))

    check_against_eager(f, (randn(3, seed=1),), expected_graphs=None)
