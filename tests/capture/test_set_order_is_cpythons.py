"""Capture: a set's iteration order is CPython's, which depends on its table's history (Note [A set's order is its
history], capture/values/set_layout.py): sets made inside iterate, pop and come back in that order, and the
operations on a set passed in are replayed on it in the order the program made them (a delta would leave another
order). Each checked through jit.compile and register + enabled(), comparing `list()` of every set with eager's.

The int members are chosen to collide in CPython's 8-slot table (1, 9, 17 share slot 1), so the order differs
from the order of insertion and from a set rebuilt from the final members.
"""

import collections

import torch

from tests.support import CountingBackend, both_doors, randn


def ordered(value):
    """`value` with every set replaced by ('set', list(s)): == then compares iteration order too."""
    if isinstance(value, (set, frozenset)):
        return type(value).__name__, list(value)
    if isinstance(value, (tuple, list)):
        return type(value)(ordered(v) for v in value)
    if isinstance(value, dict):
        return {k: ordered(v) for k, v in value.items()}
    if isinstance(value, torch.Tensor):
        return value.tolist()
    return value


def same_order_as_eager(fn, make_args, graphs=1):
    """Eager and both doors on fresh arguments (twice each): results and the arguments afterwards, in order."""
    expected = [ordered((fn(*args), args)) for args in (make_args(), make_args())]
    counting = CountingBackend()
    with both_doors(fn, counting) as doors:
        for door in doors:
            actual = [ordered((door(*args), args)) for args in (make_args(), make_args())]
            assert actual == expected
    if graphs is not None:
        assert counting.graph_count == 2 * graphs  # one entry per door


def test_a_set_made_inside_iterates_in_cpythons_order_after_a_discard():
    def f(x):
        s = {1, 9}
        s.discard(1)
        s.add(17)  # takes the slot 1 left; eager order [17, 9], by insertion [9, 17]
        out = []
        for v in s:
            out.append(v)
        return x + out[0], out

    same_order_as_eager(f, lambda: (randn(3, seed=1),))


def test_a_set_made_inside_comes_back_with_its_table():
    def f(x):
        s = {1, 9}
        s.discard(1)
        s.add(17)
        return x + 1, s

    def g(x):  # the caller adds to the returned set: the rebuilt table must be eager's
        s = set()
        for v in (1, 9, 17, 25):
            s.add(v)
        s.discard(9)
        return x * 2, s

    same_order_as_eager(f, lambda: (randn(3, seed=1),))
    same_order_as_eager(lambda x: (lambda r: (r[0], r[1], r[1].add(33) or list(r[1])))(g(x)),
                        lambda: (randn(3, seed=2),))


def test_set_pop_made_inside_takes_cpythons_member_in_one_graph():
    def f(x):
        s = {17, 1, 9}
        a = s.pop()
        s.add(25)  # after a pop, CPython's next pop starts at its finger
        b = s.pop()
        return x * a + b, s

    same_order_as_eager(f, lambda: (randn(3, seed=1),))


def test_set_constructors_and_operators_keep_cpythons_order():
    def f(x, names):
        a = set(names)
        b = frozenset([9, 1, 17, 25, 33])
        c = (a | {"e", "f"}) - {"a"}
        d = {v for v in b if v != 9} ^ {41}
        e = b.union([49]).difference({1})
        f_ = set(dict.fromkeys([17, 1, 9]))
        return x + len(c), list(a), list(c), list(d), list(e), list(f_), frozenset(b) is b

    same_order_as_eager(f, lambda: (randn(3, seed=1), ["d", "a", "c", "b"]))


def test_operations_on_a_set_passed_in_are_replayed_in_order():
    def f(x, s):
        s.add(17)
        s.discard(1)  # eager: [9, 17]; discard-then-add would give [17, 9]
        return x + len(s)

    def g(x, s):
        other = {25, 17}
        other.discard(25)
        s |= other  # replayed with `other` rebuilt from its history
        s.update([33, 41])
        s.difference_update({9})
        s.add(9)
        s &= {1, 9, 17, 33}
        return x - len(s), s & {9, 1}

    same_order_as_eager(f, lambda: (randn(3, seed=1), {1, 9}))
    same_order_as_eager(g, lambda: (randn(3, seed=2), {1, 9}))


def test_a_set_made_from_a_set_passed_in_runs_in_python():
    """Its order comes from the real set's table, which the guards do not pin (two sets with the same members in
    the same order can still order a new member differently): `set(s)`, `s | t`, `s.copy()` ... break; `s & t`
    iterates the smaller set only, so it is captured."""
    def f(x, s):
        seen = set(s)
        seen.add(17)
        merged = s | {1, 25}
        counts = collections.Counter(sorted(seen))
        return x + counts[17], list(seen), list(merged), list(s & {25, 3, 1}), list(s.intersection({3, 17}))

    same_order_as_eager(f, lambda: (randn(3, seed=1), {25, 1, 3, 17}), graphs=None)
