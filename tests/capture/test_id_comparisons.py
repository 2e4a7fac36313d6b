"""Capture: `id(a) == id(b)` is `a is b` (one graph: an in-place op's result, an alias through a list, distinct
inputs); any other use of the number id() returns breaks, since it differs from call to call. As eager, through
jit.compile and register + enabled()."""

from tests.support import check_against_eager, check_registered_against_eager, randn


def test_comparing_ids_is_comparing_identities_in_one_graph():
    def f(x, y, items):
        z = x.add_(1)
        same = (id(z) == id(x)) + (id(x) != id(y)) * 2 + (id(items[0]) == id(y)) * 4 + (id("a") == id("a")) * 8
        return x + same + (hash("a") == hash("a"))

    def args(seed):
        y = randn(3, seed=seed + 1)
        return randn(3, seed=seed), y, [y]

    check_against_eager(f, args(1), args(2), expected_graphs=1)
    assert check_registered_against_eager(f, args(1), args(2)).graph_count == 1


def test_other_uses_of_the_number_break_and_match_eager():
    def f(x):
        d = {id(x): 1}
        return x + d[id(x)], id(x) > 0

    check_against_eager(f, (randn(3, seed=1),), expected_graphs=None)
    check_registered_against_eager(f, (randn(3, seed=1),))
