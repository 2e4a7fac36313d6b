"""Capture: sets, frozensets and deques passed in as arguments (read, iterated, mutated and written back),
collections.Counter (made inside and passed in; most_common through heapq's C helpers), OrderedDict.move_to_end;
one graph, as eager, through jit.compile and register + enabled(); a changed argument recompiles.
"""

import collections

import torch

import jitcore as jit
from tests.support import check_against_eager, check_registered_against_eager, randn


def one_graph_both_doors(fn, *arg_sets):
    check_against_eager(fn, *arg_sets, expected_graphs=1)
    assert check_registered_against_eager(fn, *arg_sets).graph_count == 1


def test_a_set_passed_in_is_read_and_iterated_in_its_own_order():
    def f(x, s):
        total = x * len(s) + (2 in s)
        for k in s:
            total = total + k
        return total, s & {1, 9}, sorted(s)

    one_graph_both_doors(f, (randn(3, seed=1), {3, 1, 2}))
    one_graph_both_doors(f, (randn(3, seed=2), {40, 5, 1}))


def test_a_set_passed_in_is_mutated_and_written_back():
    def f(x, s):
        s.add(4)
        s.discard(1)
        s |= {9}
        s -= {2}
        s.update([7, 8])
        return x + len(s)

    one_graph_both_doors(f, (randn(3, seed=1), {1, 2, 3}))


def test_a_frozenset_passed_in():
    def f(x, s):
        return x + sum(s), s | {3}, frozenset({1}) <= s

    one_graph_both_doors(f, (randn(3, seed=1), frozenset({1, 2})))


def test_a_set_with_other_members_recompiles():
    def f(x, s):
        return x + (1 in s) + len(s)

    compiled = jit.compile(f, backend="eager")
    for s in ({1, 2}, {1, 2}, {2, 3}, {True, 2}, {1.0, 2}):
        torch.testing.assert_close(compiled(randn(3, seed=1), set(s)), f(randn(3, seed=1), set(s)))


def test_a_deque_passed_in_is_read_and_mutated():
    def f(x, d):
        first = d[0] + d[-1] + len(d)
        d.append(4)
        d.appendleft(0)
        v = d.pop()
        d.rotate(1)
        return x * first + v + d.popleft()

    one_graph_both_doors(f, (randn(3, seed=1), collections.deque([1, 2, 3], maxlen=4)))
    one_graph_both_doors(f, (randn(3, seed=2), collections.deque([5, 6])))


def test_a_deque_of_tensors_passed_in_gets_appends():
    def f(x, d):
        d.append(x * 2)
        return sum(d)

    one_graph_both_doors(f, (randn(3, seed=1), collections.deque([randn(3, seed=2), randn(3, seed=3)])))


def test_counter_made_inside_most_common_and_elements():
    def f(x):
        c = collections.Counter("abracadabra")
        c.update(["a", "z"])
        return x * c["a"], c.most_common(2), c["missing"], sorted(c.elements())[:3]

    one_graph_both_doors(f, (randn(3, seed=1),))


def test_a_counter_passed_in_is_counted_into_and_written_back():
    def f(x, c):
        c["a"] += 2
        c["b"] += 1
        c.update("aab")
        return x * c["a"] + c.total(), c.most_common(1)

    one_graph_both_doors(f, (randn(3, seed=1), collections.Counter({"a": 1})))


def test_ordered_dict_move_to_end_inside_and_passed_in():
    def f(x, d):
        d.move_to_end("a")
        d.move_to_end("c", last=False)
        made = collections.OrderedDict.fromkeys("xyz", 1)
        made.move_to_end("x")
        return x * d["b"], list(d), list(made)

    one_graph_both_doors(f, (randn(3, seed=1), collections.OrderedDict([("a", 1), ("b", 2), ("c", 3)])))
