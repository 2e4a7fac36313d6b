"""Capture: a class statement inside the compiled function is traced (Note [Classes made inside],
capture/values/class_statement.py): its body runs in the trace, the entry makes a new class each call with
`type(name, bases, namespace)`, and no guard is taken on the class, so the code around it is one graph that is not
compiled again on later calls. Statements it does not model (exception bases, class keywords, mutable class
attributes, class writes) break there and run natively, as before."""

import abc

import pytest
import torch

import jitcore as jit
from tests.support import (CountingBackend, assert_same, both_doors, check_against_eager,
                           check_registered_against_eager, outcome, randn)


@pytest.fixture(autouse=True)
def _strict(monkeypatch):
    # a fault of jitcore raises instead of falling back natively (which would still give eager's results)
    monkeypatch.setattr(jit.config, "strict", True)


def class_then_method(x):
    y = x.sin()

    class Local:
        k = 2

        def go(self, t):
            return t * self.k
    return Local().go(y) + 1


def test_one_graph_and_no_recompile_over_many_calls():
    counting = CountingBackend()
    with both_doors(class_then_method, counting) as doors:
        for door in doors:
            for seed in range(6):
                x = randn(2, 3, seed=seed)
                assert_same(class_then_method(x), door(x))
    assert counting.graph_count == 2  # one per door


def returns_instance(x, log):
    class Box:
        log.append("body")

        def __init__(self, v):
            self.v = v

        def double(self):
            return self.v * 2
    return Box(x * 2)


def test_a_new_class_each_call_and_its_body_runs_each_call():
    counting = CountingBackend()
    compiled = jit.compile(returns_instance, backend=counting)
    x = randn(3)
    eager_log, compiled_log = [], []
    e1, e2 = returns_instance(x, eager_log), returns_instance(x, eager_log)
    c1, c2 = compiled(x, compiled_log), compiled(x, compiled_log)
    assert compiled_log == eager_log == ["body", "body"]
    assert type(c1) is not type(c2)
    assert type(c1).__qualname__ == type(e1).__qualname__ and type(c1).__module__ == type(e1).__module__
    assert_same(e2.v, c2.v)
    assert_same(e2.double(), c2.double())  # the rebuilt class's methods run outside
    assert counting.graph_count == 1


def super_static_class_methods(x):
    class Base:
        def f(self, t):
            return t + 1

    class Child(Base):
        def f(self, t):
            return super().f(t) * 2

        @staticmethod
        def s(t):
            return t - 1

        @classmethod
        def c(cls, t):
            return t * len(cls.__name__)
    obj = Child()
    return obj.f(x) + Child.s(x) + obj.c(x), isinstance(obj, Base), issubclass(Child, Base), obj


def test_super_staticmethod_classmethod_and_isinstance():
    counting = check_against_eager(lambda x: super_static_class_methods(x)[:3], (randn(3),))
    assert counting.graph_count == 1
    check_registered_against_eager(lambda x: super_static_class_methods(x)[:3], (randn(3),))
    obj = jit.compile(super_static_class_methods, backend="eager")(randn(3))[3]
    assert_same(obj.f(randn(2)), super_static_class_methods(randn(2))[3].f(randn(2)))  # super() outside too


def property_with_setter(x):
    class P:
        def __init__(self):
            self._v = 3

        @property
        def v(self):
            return self._v * 2

        @v.setter
        def v(self, val):
            self._v = val
    p = P()
    p.v = 5
    return x + p.v, p


def test_property_with_a_setter():
    check_against_eager(lambda x: property_with_setter(x)[0], (randn(3),))
    p = jit.compile(property_with_setter, backend="eager")(randn(3))[1]
    assert p.v == 10
    p.v = 1
    assert p.v == 2


def abstract_classes(x):
    class A(abc.ABC):
        @abc.abstractmethod
        def go(self, t): ...

    class B(A):
        def go(self, t):
            return t * 3
    try:
        A()
        raised = False
    except TypeError:
        raised = True
    return B().go(x), isinstance(B(), A), raised


def abstract_instantiated(x):
    class A(abc.ABC):
        @abc.abstractmethod
        def go(self, t): ...
    A()
    return x


def test_abstract_methods_and_instantiating_an_abstract_class():
    counting = check_against_eager(abstract_classes, (randn(3),))
    assert counting.graph_count == 1
    check_registered_against_eager(abstract_classes, (randn(3),))
    with both_doors(abstract_instantiated) as doors:
        for door in doors:
            assert outcome(door, randn(3)) == outcome(abstract_instantiated, randn(3))


def class_over_enclosing_values(x, n):
    scale = x.cos()

    class Scaled:
        k = n

        def go(self, t):
            return t * scale + self.k
    return Scaled().go(x)


def test_a_class_body_and_its_methods_read_the_enclosing_frame():
    counting = CountingBackend()
    with both_doors(class_over_enclosing_values, counting) as doors:
        for door in doors:
            for n in (1, 2, 2):
                x = randn(3, seed=n)
                assert_same(class_over_enclosing_values(x, n), door(x, n))


def break_inside_a_method(x):
    class Noisy:
        def __init__(self, t):
            self.t = t

        def go(self):
            print("inside", self.t.shape)
            return self.t * 2
    return Noisy(x.sin()).go() + 1


def test_a_break_inside_a_method_of_a_class_made_inside(capsys):
    with both_doors(break_inside_a_method) as doors:
        for door in doors:
            for seed in range(3):
                x = randn(3, seed=seed)
                assert_same(break_inside_a_method(x), door(x))


def exception_class_inside(x):
    class Oops(ValueError):
        pass
    try:
        raise Oops("bad")
    except ValueError as exc:
        return x + len(str(exc))


def mutable_class_attribute(x):
    class Reg:
        items = []
    Reg.items.append(1)
    Reg.count = 2
    return x + len(Reg.items) + Reg.count


@pytest.mark.parametrize("fn", [exception_class_inside, mutable_class_attribute])
def test_statements_it_does_not_model_break_and_stay_correct(fn):
    with both_doors(fn) as doors:
        for door in doors:
            for seed in range(3):
                x = randn(3, seed=seed)
                assert outcome(fn, x)[0] == outcome(door, x)[0]
                assert_same(fn(x), door(x))


def type_attributes_of_a_class_made_inside(x):
    class K:
        pass
    return x + len(K.__mro__), K.__name__, K.__qualname__


def test_the_stand_in_never_escapes_through_type_attributes():
    compiled = jit.compile(type_attributes_of_a_class_made_inside, backend="eager")
    eager = type_attributes_of_a_class_made_inside(randn(3))
    got = compiled(randn(3))
    assert_same(eager, got)


def module_class_inside(x):
    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = 2

        def forward(self, t):
            return t * self.scale
    block = Block()
    return block(x), block


def test_a_module_class_made_inside_breaks_and_stays_correct():
    with both_doors(module_class_inside) as doors:
        for door in doors:
            x = randn(3)
            got, block = door(x)
            assert_same(module_class_inside(x)[0], got)
            assert type(block).__qualname__.endswith("Block") and block.scale == 2
            assert_same(block(x), x * 2)


class WithMethods:
    def __init__(self, t):
        self.t = t

    def value(self):
        return self.t + 1


def subclass_of_outside_class_escapes(x):
    class Mine(WithMethods):
        def value(self):
            return super().value() * 2
    return Mine(x)


def test_an_instance_of_a_class_made_inside_escapes_with_the_real_class():
    compiled = jit.compile(subclass_of_outside_class_escapes, backend="eager")
    a, b = compiled(randn(3)), compiled(randn(3))
    assert type(a) is not type(b) and isinstance(a, WithMethods)
    assert type(a).__mro__[1] is WithMethods and "value" in vars(type(a))
    assert_same(a.value(), (randn(3) + 1) * 2)
