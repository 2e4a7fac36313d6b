"""Capture: generators run lazily, as Python runs them.

A generator called inside the function resumes up to its next `yield` only when its consumer asks, so its side
effects interleave with the consumer's and stop where the consumer stops (`break`, `any()`, a partial `next()`).
zip/enumerate/map/filter over generators stay lazy. `contextlib.contextmanager` context managers (a generator
suspended across the `with` body) work the same way. Each case matches eager, side effects included, in one graph.
"""

import contextlib
import functools

import torch

from tests.support import check_against_eager, randn


def counting(log, n):
    for i in range(n):
        log.append(("gen", i))
        yield i


def test_break_stops_the_generator_where_python_stops_it():
    def f(x, log):
        for v in counting(log, 5):
            log.append(("body", v))
            if v == 1:
                break
        return x + v

    check_against_eager(f, (randn(3, seed=1), []))


def test_partial_next_runs_only_to_the_first_yield():
    def f(x, log):
        it = counting(log, 3)
        first = next(it)
        second = next(it)
        return x * (first + second + 1)

    check_against_eager(f, (randn(3, seed=1), []))


def test_any_short_circuits_a_generator():
    def f(x, log):
        found = any(v >= 1 for v in counting(log, 4))
        return x + found

    check_against_eager(f, (randn(3, seed=1), []))


def test_zip_and_enumerate_over_generators_stay_lazy():
    def f(x, log):
        total = x
        for i, (a, b) in enumerate(zip(counting(log, 3), counting(log, 2))):
            log.append(("body", i))
            total = total + a * b
        return total

    check_against_eager(f, (randn(3, seed=1), []))


def test_map_and_filter_over_a_generator_stay_lazy():
    def f(x, log):
        total = x
        for v in filter(lambda v: v % 2 == 0, map(lambda v: v * 3, counting(log, 5))):
            log.append(("body", v))
            total = total + v
        return total

    check_against_eager(f, (randn(3, seed=1), []))


def test_exception_raised_in_a_generator_reaches_the_consumer_handler():
    def failing(limit):
        for i in range(10):
            if i == limit:
                raise ValueError("stop")
            yield i

    def f(x):
        seen = []
        try:
            for v in failing(2):
                seen.append(v)
        except ValueError:
            seen.append(-1)
        return x * len(seen), seen

    check_against_eager(f, (randn(3, seed=1),))


def test_functools_reduce_calls_in_order():
    def f(x, y):
        return functools.reduce(lambda a, b: a * 2 + b, [x, y, x]), functools.reduce(max, [1, 5, 3], 0)

    check_against_eager(f, (randn(3, seed=1), randn(3, seed=2)))


@contextlib.contextmanager
def scaled(log, factor):
    log.append("enter")
    try:
        yield factor
    finally:
        log.append("exit")


def test_contextmanager_runs_enter_body_and_exit_in_order():
    def f(x, log):
        with scaled(log, 3) as k:
            log.append("body")
            y = x * k
        return y + 1

    check_against_eager(f, (randn(3, seed=1), []))


def test_contextmanager_nested_with_values():
    def f(x, log):
        with scaled(log, 2) as a, scaled(log, 5) as b:
            y = x * a + b
        return y

    check_against_eager(f, (randn(3, seed=1), []))


def test_deleting_an_attribute_of_an_object_made_inside():
    class Box:
        def __init__(self, v):
            self.v = v
            self.tmp = 1

    def f(x):
        box = Box(x)
        del box.tmp
        return box.v * 2, hasattr(box, "tmp")

    check_against_eager(f, (randn(3, seed=1),))


def test_string_join_consumes_a_generator_of_constants():
    def f(x):
        return x * len("-".join(str(s) for s in x.shape)), ",".join(map(str, x.shape))

    check_against_eager(f, (randn(3, 4, seed=1),))


def _guarded_gen(log):
    try:
        yield 1
        yield 2
    finally:
        log.append("closed")


def test_generator_left_suspended_in_try_runs_its_cleanup_like_eager():
    """Python closes the dropped generator (its `finally` runs); jitcore runs such a frame natively."""
    def f(x, log):
        it = _guarded_gen(log)
        a = next(it)
        return x + a

    check_against_eager(f, (randn(3, seed=1), []), expected_graphs=0)


def test_generator_left_suspended_before_a_graph_break_runs_its_cleanup_like_eager(capsys):
    def f(x, log):
        a = next(_guarded_gen(log))
        print("after", a)
        return x + a

    from tests.support import compare_call
    import jitcore as jit
    compiled = jit.compile(f)
    for _ in range(2):
        compare_call(f, compiled, (randn(3, seed=1), []))
    out = capsys.readouterr().out
    assert out.count("after 1") == 4


def test_generator_without_cleanup_left_suspended_stays_in_the_graph():
    def plain():
        yield 1
        yield 2

    def f(x):
        return x + next(plain())

    check_against_eager(f, (randn(3, seed=1),))
