"""Capture: class attributes written inside the call (`Cls.counter += 1`, `type(obj).attr = v`, `del Cls.attr`)
and `del obj.attr` / `delattr(obj, name)` on objects that existed before the call: later reads in the call (through
the class or its instances) see the write, it is written back after the graph, and the next call's guards see the
new class state (as eager, through jit.compile and register + enabled()).
"""

import torch

import jitcore as jit
from tests.support import CountingBackend, assert_same, randn


class Counter:
    count = 0
    scale = 2


class Sub(Counter):
    pass


class Holder:
    def __init__(self):
        self.a = 1
        self.b = 2


def reset():
    Counter.count, Counter.scale = 0, 2
    for name in ("extra", "count", "scale"):
        if name in vars(Sub):
            delattr(Sub, name)


def run_both_doors(fn, calls, make_args, graphs=True):
    """Eager, jit.compile and register + enabled(): each from a fresh class state, `calls` calls each; the
    results and the class state after them must agree."""
    outcomes = []
    for door in ("eager", "compile", "register"):
        reset()
        counting = CountingBackend()
        if door == "compile":
            target = jit.compile(fn, backend=counting)
        elif door == "register":
            jit.register(fn)

            def target(*args):
                with jit.enabled(backend=counting):
                    return fn(*args)
        else:
            target = fn
        try:
            results = [target(*make_args()) for _ in range(calls)]
        finally:
            if door == "register":
                jit.unregister(fn)
        extra = vars(Sub).get("extra")
        outcomes.append((results, (Counter.count, Counter.scale, extra(None) if callable(extra) else extra),
                         counting))
    (expected, state, _), *compiled = outcomes
    for results, compiled_state, counting in compiled:
        assert_same(results, expected)
        assert compiled_state == state
        assert counting.graph_count >= 1 or not graphs
    return [c for _, _, c in compiled]


def test_class_counter_incremented_on_every_call():
    def f(x):
        Counter.count += 1
        return x * Counter.count

    for counting in run_both_doors(f, 3, lambda: (randn(3, seed=1),)):
        assert counting.graph_count == 3  # the count is a constant of each graph, as under torch.compile


def test_instances_and_subclasses_read_the_class_write():
    def f(x):
        Counter.scale = Counter.scale + 1
        made = Counter()
        return x * made.scale + Sub.scale

    run_both_doors(f, 2, lambda: (randn(3, seed=1),))


def test_type_of_an_instance_written_through():
    def f(x, obj):
        type(obj).count += 2
        return x + obj.count

    run_both_doors(f, 2, lambda: (randn(3, seed=1), Counter()))


def test_a_class_attribute_deleted_falls_back_to_the_base():
    def f(x):
        Sub.scale = 10
        first = Sub.scale
        del Sub.scale
        return x * first + Sub.scale

    run_both_doors(f, 2, lambda: (randn(3, seed=1),))


def test_writing_a_method_onto_a_class_is_a_clean_break():
    def f(x):
        Sub.extra = lambda self: 5
        return x + 1

    run_both_doors(f, 1, lambda: (randn(3, seed=1),), graphs=False)


def test_del_and_delattr_of_attributes_of_an_object_passed_in():
    def f(x, h):
        del h.a
        delattr(h, "b")
        h.c = 5
        return x * h.c, hasattr(h, "a"), sorted(vars(h))

    for make in (Holder,):
        h_eager, h_compiled = make(), make()
        expected = f(randn(3, seed=1), h_eager)
        counting = CountingBackend()
        got = jit.compile(f, backend=counting)(randn(3, seed=1), h_compiled)
        assert_same(got, expected)
        assert vars(h_compiled) == vars(h_eager) and counting.graph_count == 1
    h_registered = Holder()
    jit.register(f)
    try:
        with jit.enabled(backend="eager"):
            got = f(randn(3, seed=1), h_registered)
    finally:
        jit.unregister(f)
    assert_same(got, expected)
    assert vars(h_registered) == vars(h_eager)
