"""Capture: `yield from`, generator.send/throw/close inside compiled code (capture/values/generator.py,
capture/opcodes/generators.py), compared with eager through jit.compile and register + enabled(), one graph.
"""

import torch

from tests.support import check_against_eager, check_registered_against_eager, randn


def one_graph_both_doors(fn, *arg_sets):
    check_against_eager(fn, *arg_sets, expected_graphs=1)
    assert check_registered_against_eager(fn, *arg_sets).graph_count == 1


def _sub(t, log):
    log.append("sub start")
    got = yield t + 1
    log.append(("sub got", got))
    yield t + 2
    return 7


def test_yield_from_returns_the_sub_generators_return_value():
    def f(x, log):
        def outer(t):
            r = yield from _sub(t, log)
            log.append(("r", r))
            yield t * r
        return [v for v in outer(x)]

    one_graph_both_doors(f, (randn(3, seed=1), []))


def test_yield_from_a_list_a_range_and_a_tuple_of_tensors():
    def f(x):
        def g():
            yield from [1, 2]
            yield from range(3)
            yield from (x, x * 2)
        return [v if isinstance(v, int) else v.sum() for v in g()]

    one_graph_both_doors(f, (randn(3, seed=1),))


def test_send_reaches_the_yield_and_through_yield_from():
    def f(x, log):
        def outer(t):
            r = yield from _sub(t, log)
            yield r * 10
        g = outer(x)
        first = next(g)
        second = g.send(5)
        third = g.send(6)
        return first + second + third

    one_graph_both_doors(f, (randn(3, seed=1), []))


def test_send_past_the_return_raises_stopiteration_with_its_value():
    def f(x):
        def avg():
            total, n = 0.0, 0
            while n < 2:
                total += yield
                n += 1
            return total / n
        g = avg()
        next(g)
        g.send(1.0)
        try:
            g.send(4.0)
        except StopIteration as e:
            return x * e.value, e.args

    one_graph_both_doors(f, (randn(3, seed=1),))


def test_send_of_a_value_to_a_just_started_generator_raises_typeerror():
    def f(x):
        def g():
            yield 1
        try:
            g().send(3)
        except TypeError:
            return x + 1
        return x

    one_graph_both_doors(f, (randn(3, seed=1),))


def test_throw_is_caught_by_the_generators_own_handler():
    def f(x, log):
        def g():
            try:
                yield 1
            except ValueError as e:
                log.append(("caught", e.args))
                yield 100
            yield 3
        it = g()
        a = next(it)
        b = it.throw(ValueError("boom"))
        return x + a + b + next(it)

    one_graph_both_doors(f, (randn(3, seed=1), []))


def test_throw_not_caught_runs_finally_and_reaches_the_caller():
    def f(x, log):
        def g():
            try:
                yield 1
            finally:
                log.append("finally")
        it = g()
        next(it)
        try:
            it.throw(KeyError)
        except KeyError:
            log.append("caught")
        log.append(list(it))
        return x + len(log)

    one_graph_both_doors(f, (randn(3, seed=1), []))


def test_throw_into_yield_from_goes_to_the_sub_generator_first():
    def f(x, log):
        def inner():
            try:
                yield 1
            except ValueError:
                log.append("inner caught")
                return 5
        def outer():
            r = yield from inner()
            log.append(("outer got", r))
            yield r
        g = outer()
        next(g)
        return x * g.throw(ValueError("v"))

    one_graph_both_doors(f, (randn(3, seed=1), []))


def test_close_runs_finally_and_exhausts_the_generator():
    def f(x, log):
        def g():
            try:
                yield 1
                yield 2
            finally:
                log.append("closed")
        it = g()
        next(it)
        it.close()
        it.close()
        return x + len(log), list(it)

    one_graph_both_doors(f, (randn(3, seed=1), []))


def test_close_of_a_generator_that_yields_again_raises_runtimeerror():
    def f(x):
        def stubborn():
            try:
                yield 1
            except GeneratorExit:
                pass
            yield 2
        it = stubborn()
        next(it)
        try:
            it.close()
        except RuntimeError as e:
            return x + 1, e.args
        return x

    one_graph_both_doors(f, (randn(3, seed=1),))


def test_close_inside_yield_from_closes_the_sub_generator_first():
    def f(x, log):
        def inner():
            try:
                yield 1
            finally:
                log.append("inner closed")
        def outer():
            try:
                yield from inner()
            finally:
                log.append("outer closed")
        g = outer()
        next(g)
        g.close()
        return x * 2

    one_graph_both_doors(f, (randn(3, seed=1), []))


def test_yield_from_opcodes_occur():
    import dis

    def outer():
        yield from ()
    names = {i.opname for i in dis.get_instructions(outer)}
    assert {"GET_YIELD_FROM_ITER", "SEND", "END_SEND", "CLEANUP_THROW"} <= names
