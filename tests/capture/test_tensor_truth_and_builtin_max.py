"""Capture: the truth of a tensor with more or fewer than one element raises Python's RuntimeError whatever its
values (a traced `except` catches it, one graph), and max()/min() over values that are not constants run Python's
own loop (each item compared with the best so far): over tensors of one element that is a data-dependent break,
over larger ones the RuntimeError eager raises. Through jit.compile and register + enabled()."""

from tests.support import both_doors, check_against_eager, check_registered_against_eager, outcome, randn


def test_truth_of_a_tensor_of_many_or_no_elements_raises_and_is_caught_in_one_graph():
    def f(x):
        try:
            if x:
                return x
        except RuntimeError as e:
            return x + 1, str(e)

    def g(x):
        try:
            return x if x[:0] else x * 2
        except RuntimeError as e:
            return x - 1, e.args

    for fn in (f, g):
        check_against_eager(fn, (randn(2, 3, seed=1),), expected_graphs=1)
        assert check_registered_against_eager(fn, (randn(2, 3, seed=1),)).graph_count == 1


def test_max_and_min_over_tensors_follow_pythons_loop():
    def many(x):
        return max(x, x * 2)

    def single(x):
        return max(x.sum(), x.mean()) + min([x.amax(), -x.amax()])

    with both_doors(many) as doors:
        for door in doors:
            assert outcome(door, randn(2, 3, seed=1)) == outcome(many, randn(2, 3, seed=1))
    check_against_eager(single, (randn(3, seed=1),), (randn(3, seed=2),), expected_graphs=None)
    check_registered_against_eager(single, (randn(3, seed=1),), (randn(3, seed=2),))
