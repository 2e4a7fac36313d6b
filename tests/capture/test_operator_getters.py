"""Capture: operator.itemgetter/attrgetter/methodcaller, functools.lru_cache and functools.wraps inside compiled
code (capture/values/getters.py), and the builtins that take a key (sorted, list.sort, max, min).
"""

import functools
import operator

import jitcore as jit
from tests.support import check_against_eager, randn


def one_graph(fn, *arg_sets):
    check_against_eager(fn, *arg_sets)
    jit.compile(fn, backend="eager", fullgraph=True)(*[a.clone() if hasattr(a, "clone") else list(a)
                                                       for a in arg_sets[0]])


def test_itemgetter_attrgetter_and_methodcaller_ask_the_protocol():
    def f(x):
        second = operator.itemgetter(1)
        pair = operator.itemgetter(0, 2)((1, 2, 3))
        rows = operator.attrgetter("shape")(x)[0]
        total = operator.methodcaller("sum", dim=0)(x)
        return second([x, x * 3]) + pair[1] + rows + total

    one_graph(f, (randn(2, 3, seed=1),))


def test_lru_cache_runs_the_function_once_per_arguments():
    def f(x, log):
        @functools.lru_cache(maxsize=None)
        def fib(n):
            log.append(n)
            return n if n < 2 else fib(n - 1) + fib(n - 2)
        return x + fib(10) + fib(10)

    one_graph(f, (randn(3, seed=1), []))


def test_functools_wraps_copies_the_wrapped_functions_attributes():
    def f(x):
        def deco(fn):
            @functools.wraps(fn)
            def wrapper(*args):
                return fn(*args) * 2
            return wrapper

        @deco
        def double(t):
            """Doubles."""
            return t + t
        return double(x), double.__name__, double.__doc__, double.__wrapped__ is not None

    one_graph(f, (randn(3, seed=1),))


def test_sort_sorted_max_and_min_by_a_key_over_tensors():
    def f(x):
        items = [x * 3, x, x * 2]
        weights = {0: 3, 1: 1, 2: 2}
        order = sorted(range(3), key=lambda i: weights[i])
        items.sort(key=lambda t: 0)
        biggest = max(["a", "bbb", "cc"], key=len)
        light = min([(x, 2), (x * 2, 1)], key=operator.itemgetter(1))
        return items[0] + order[0] + len(biggest) + light[0] + max([], key=len, default=5)

    one_graph(f, (randn(3, seed=1),))


def test_pure_classmethods_and_slices_of_constants_fold():
    def f(x):
        return x + int.from_bytes(b"\x01", "big") + slice(1, 5).indices(3)[1] + (255).bit_length() + (
            callable(None) * 10) + callable(len)

    one_graph(f, (randn(3, seed=1),))
