"""Capture: map(), filter() and reversed(list) are iterators over the list as it is at each step, as in CPython:
a list that grows or shrinks inside `for v in map(f, lst)` is seen, map's function and filter's predicate run
between the loop's statements (their side effects interleave with the body's), reversed() reads the list at an
index from the end (inserts shift it, appends are not seen); one graph, as eager, through jit.compile and
register + enabled()."""

import torch

from tests.support import check_against_eager, check_registered_against_eager, randn


def one_graph_both_doors(fn, *arg_sets):
    check_against_eager(fn, *arg_sets, expected_graphs=1)
    assert check_registered_against_eager(fn, *arg_sets).graph_count == 1


def test_map_over_a_list_that_grows_sees_the_new_items():
    def f(x, lst):
        out = []
        for v in map(lambda a: a * 2, lst):
            if len(lst) < 5:
                lst.append(1)
            out.append(v)
        return x + len(out), out

    one_graph_both_doors(f, (randn(3, seed=1), [1, 2, 3]), (randn(3, seed=2), [1, 2, 3]))


def test_filter_over_a_list_that_shrinks_stops_early():
    def f(x, lst):
        out = []
        for v in filter(None, lst):
            lst.pop()
            out.append(v)
        return x * len(out), out

    one_graph_both_doors(f, (randn(3, seed=1), [1, 0, 2, 3, 4]))


def test_map_and_filter_call_their_function_between_the_loops_steps():
    def f(x, lst):
        log = []

        def double(a):
            log.append(("map", a))
            return a * 2

        def odd(a):
            log.append(("filter", a))
            return a % 2

        for v in filter(odd, map(double, lst)):
            log.append(("body", v))
        for v in filter(odd, lst):
            log.append(("body", v))
        return x + len(log), log

    one_graph_both_doors(f, (randn(3, seed=1), [1, 2, 3]))


def test_reversed_list_reads_at_an_index_from_the_end():
    def f(x, lst):
        out = []
        for v in reversed(lst):
            if v == 2:
                lst.insert(0, 9)  # shifts the items the iterator has still to read
            lst.append(7)  # not seen: the index counts down from the first length
            out.append(v)
        return x + sum(out), out

    def g(x, lst):
        out = []
        for v in reversed(lst):
            if len(lst) > 1:
                lst.pop()  # the index runs past the end: the iterator stops
            out.append(v)
        return x - sum(out), out

    one_graph_both_doors(f, (randn(3, seed=1), [1, 2, 3]))
    one_graph_both_doors(g, (randn(3, seed=2), [1, 2, 3, 4]))


def test_map_over_tensors_and_two_lists():
    def f(x, ts, a, b):
        return sum(map(torch.sin, ts)) + x + sum(map(lambda p, q: p * q, a, b)), list(map(str, a))

    one_graph_both_doors(f, (randn(3, seed=1), [randn(3, seed=2), randn(3, seed=3)], [1, 2, 3], [4, 5]))
