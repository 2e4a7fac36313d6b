"""Capture: itertools over values (capture/values/itertools_rules.py). Each iterator pulls its inputs when
CPython's would, so a generator feeding it interleaves its side effects with the consumer's as in eager Python, and
infinite ones (count, cycle, repeat) are as long as the consumer takes. Each case matches eager in one graph.
"""

import itertools
import operator

import jitcore as jit
from tests.support import check_against_eager, randn


def one_graph(fn, *arg_sets):
    check_against_eager(fn, *arg_sets)
    jit.compile(fn, backend="eager", fullgraph=True)(*[a.clone() if hasattr(a, "clone") else type(a)(a)
                                                       for a in arg_sets[0]])


def logged(log, items):
    for item in items:
        log.append(("gen", item))
        yield item


def test_chain_and_chain_from_iterable_over_tensors_and_lists():
    def f(x):
        total = sum(itertools.chain([x], [x * 2], (x * 3,)))
        flat = list(itertools.chain.from_iterable([[1, 2], [3]]))
        return total + sum(flat), flat

    one_graph(f, (randn(3, seed=1),))


def test_chain_reads_a_generator_only_when_it_reaches_it():
    def f(x, log):
        out = x
        for v in itertools.chain([10], logged(log, [1, 2])):
            log.append(("body", v))
            out = out + v
        return out

    one_graph(f, (randn(3, seed=1), []))


def test_product_combinations_and_permutations():
    def f(x):
        out = x
        for a, b in itertools.product([1, 2], [3, 4]):
            out = out + a * b
        n = len(list(itertools.product(range(2), repeat=3)))
        c = sum(a * b for a, b in itertools.combinations([1, 2, 3], 2))
        r = len(list(itertools.combinations_with_replacement([1, 2, 3], 2)))
        p = list(itertools.permutations(range(3)))
        return out + n + c + r + len(p), p

    one_graph(f, (randn(3, seed=1),))


def test_zip_longest_fills_and_stops_with_the_last_input():
    def f(x, log):
        out = []
        for a, b in itertools.zip_longest([x, x + 1], logged(log, [x])):
            out.append(a if b is None else a + b)
        return out, list(itertools.zip_longest([1, 2, 3], ["a"], fillvalue=0))

    one_graph(f, (randn(3, seed=1), []))


def test_accumulate_with_and_without_a_function():
    def f(x):
        sums = list(itertools.accumulate([x, x, x]))
        products = list(itertools.accumulate([1, 2, 3, 4], operator.mul, initial=2))
        return sums[-1], products

    one_graph(f, (randn(3, seed=1),))


def test_islice_of_infinite_iterators_takes_only_what_is_asked():
    def f(x):
        a = sum(itertools.islice(itertools.count(5), 3))
        b = sum(itertools.islice(itertools.cycle([1, 2]), 5))
        c = list(itertools.islice(range(10), 2, 8, 3))
        return x + a + b + sum(itertools.repeat(x, 3)) + sum(c)

    one_graph(f, (randn(3, seed=1),))


def test_islice_does_not_read_a_generator_past_its_stop():
    def f(x, log):
        it = logged(log, [1, 2, 3, 4])
        first = list(itertools.islice(it, 2))
        log.append(("after", len(first)))
        return x + sum(first) + next(it)

    one_graph(f, (randn(3, seed=1), []))


def test_groupby_groups_consecutive_keys():
    def f(x):
        total = x
        keys = []
        for k, g in itertools.groupby("aabbbca"):
            keys.append(k)
            total = total + len(list(g))
        by_parity = [(k, list(g)) for k, g in itertools.groupby([1, 3, 2, 4, 5], key=lambda v: v % 2)]
        return total, keys, by_parity

    one_graph(f, (randn(3, seed=1),))


def test_groupby_group_is_over_once_the_outer_iterator_moves_on():
    def f(x):
        groups = list(itertools.groupby("aab"))
        return x + len(list(groups[0][1])) + len(list(groups[1][1]))

    one_graph(f, (randn(3, seed=1),))


def test_starmap_pairwise_tee_and_the_filters():
    def f(x):
        s = sum(itertools.starmap(operator.mul, [(1, 2), (3, 4)]))
        d = sum(b - a for a, b in itertools.pairwise([1, 4, 9]))
        a, b = itertools.tee([1, 2, 3])
        kept = list(itertools.filterfalse(lambda v: v % 2, range(6)))
        taken = list(itertools.takewhile(lambda v: v < 3, [1, 2, 5, 1]))
        dropped = list(itertools.dropwhile(lambda v: v < 3, [1, 2, 5, 1]))
        chosen = list(itertools.compress("abcd", [1, 0, 1]))
        return x + s + d + sum(a) + sum(b), kept, taken, dropped, chosen

    one_graph(f, (randn(3, seed=1),))


def test_tee_branches_share_one_pass_over_a_generator():
    def f(x, log):
        a, b = itertools.tee(logged(log, [1, 2, 3]))
        first = next(a)
        log.append(("between", first))
        return x + sum(b) + sum(a)

    one_graph(f, (randn(3, seed=1), []))
