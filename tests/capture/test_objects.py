"""Capture: user-defined objects: attribute reads (guarded), inlined method calls, objects created inside.

Each test passes an instance of a small user class to the compiled function, or creates one inside it, and requires
eager-equal results with exactly one graph. Objects created inside and returned are compared field by field; objects
mutated by the function are compared with an eager twin after each call.
"""

import torch

import jitcore as jit
from tests.support import assert_same, check_against_eager, compare_call, randn


class Affine:
    def __init__(self, scale, shift):
        self.scale = scale
        self.shift = shift

    def apply(self, x):
        return x * self.scale + self.shift

    def twice(self, x):
        return self.apply(self.apply(x))

    @property
    def ratio(self):
        return self.scale / (1 + abs(self.shift))


class Shifted(Affine):
    def apply(self, x):
        return super().apply(x) - 1


class Point:
    dims = 2

    def __init__(self, x, y):
        self.x = x
        self.y = y

    def norm(self):
        return (self.x**2 + self.y**2).sqrt()

    @classmethod
    def origin_like(cls, t):
        return cls(torch.zeros_like(t), torch.zeros_like(t))


class Accumulator:
    def __init__(self):
        self.total = 0.0
        self.count = 0

    def add(self, value):
        self.total = self.total + value
        self.count += 1


class Callable:
    def __init__(self, factor):
        self.factor = factor

    def __call__(self, x):
        return x * self.factor


class Sequence:
    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        return self.items[index]


class Vector:
    def __init__(self, data):
        self.data = data

    def __add__(self, other):
        return Vector(self.data + other.data)


class Slotted:
    __slots__ = ("weight",)

    def __init__(self, weight):
        self.weight = weight


# Attribute reads


def test_float_attribute_read_matches_eager():
    def f(x, obj):
        return x * obj.scale + obj.shift

    obj = Affine(2.0, 0.5)
    check_against_eager(f, (randn(4, 3, seed=1), obj), (randn(4, 3, seed=2), obj))


def test_tensor_attribute_read_matches_eager():
    def f(x, point):
        return x + point.x * point.y

    point = Point(randn(3, seed=3), randn(3, seed=4))
    check_against_eager(f, (randn(4, 3, seed=1), point), (randn(4, 3, seed=2), point))


def test_class_attribute_read_through_instance_matches_eager():
    def f(x, point):
        return x * point.dims

    point = Point(1.0, 2.0)
    check_against_eager(f, (randn(4, 3, seed=1), point))


def test_slotted_attribute_read_matches_eager():
    def f(x, obj):
        return x * obj.weight

    obj = Slotted(1.5)
    check_against_eager(f, (randn(4, 3, seed=1), obj))


def test_property_on_user_object_matches_eager():
    def f(x, obj):
        return x * obj.ratio

    obj = Affine(3.0, -0.5)
    check_against_eager(f, (randn(4, 3, seed=1), obj))


def test_attribute_change_between_calls_recompiles_and_matches_eager(counting):
    """`obj.scale` is guarded: the changed value gives a new graph, equal to eager."""

    def f(x, obj):
        return obj.apply(x)

    obj = Affine(2.0, 0.5)
    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (randn(4, 3, seed=1), obj))
    obj.scale = -1.0
    compare_call(f, compiled, (randn(4, 3, seed=2), obj))
    assert counting.graph_count == 2


def test_tensor_attribute_replaced_between_calls_matches_eager(counting):
    """A tensor attribute is an input: replacing it (same shape) uses the new values."""

    def f(x, point):
        return x + point.x

    point = Point(randn(3, seed=3), randn(3, seed=4))
    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (randn(4, 3, seed=1), point))
    point.x = randn(3, seed=5)
    compare_call(f, compiled, (randn(4, 3, seed=2), point))
    assert counting.graph_count == 1


# Method calls


def test_method_call_is_inlined_matches_eager():
    def f(x, obj):
        return obj.apply(x)

    obj = Affine(2.0, 0.5)
    check_against_eager(f, (randn(4, 3, seed=1), obj), (randn(4, 3, seed=2), obj))


def test_method_calling_another_method_matches_eager():
    def f(x, obj):
        return obj.twice(x)

    obj = Affine(0.5, 1.0)
    check_against_eager(f, (randn(4, 3, seed=1), obj))


def test_inherited_method_with_super_call_matches_eager():
    def f(x, obj):
        return obj.twice(x)

    obj = Shifted(2.0, 0.0)
    check_against_eager(f, (randn(4, 3, seed=1), obj))


def test_bound_method_passed_as_argument_matches_eager():
    def f(x, fn):
        return fn(x) + 1

    obj = Affine(3.0, 0.0)
    check_against_eager(f, (randn(4, 3, seed=1), obj.apply))


def test_callable_object_call_matches_eager():
    def f(x, fn):
        return fn(x) - 1

    fn = Callable(4.0)
    check_against_eager(f, (randn(4, 3, seed=1), fn))


def test_user_len_and_getitem_matches_eager():
    def f(seq):
        total = seq[0]
        for i in range(1, len(seq)):
            total = total + seq[i]
        return total

    seq = Sequence([randn(3, seed=1), randn(3, seed=2), randn(3, seed=3)])
    check_against_eager(f, (seq,))


# Objects created inside the function


def test_object_created_inside_used_for_compute_matches_eager():
    def f(x):
        affine = Affine(x.shape[0], 1.0)
        return affine.apply(x)

    check_against_eager(f, (randn(4, 3, seed=1),), (randn(4, 3, seed=2),))


def test_object_created_by_classmethod_matches_eager():
    def f(x):
        origin = Point.origin_like(x)
        return (Point(x, x + 1).norm() - origin.norm()).sum()

    check_against_eager(f, (randn(4, 3, seed=1),))


def test_object_created_inside_and_returned_matches_eager(counting):
    def f(x):
        return Point(x * 2, x.sum())

    compiled = jit.compile(f, backend=counting)
    for seed in (1, 2):
        x = randn(4, 3, seed=seed)
        expected, actual = f(x), compiled(x)
        assert type(actual) is Point
        assert_same(vars(expected), vars(actual))
    assert counting.graph_count == 1


def test_operator_overload_returns_new_object_matches_eager(counting):
    def f(x, y):
        return Vector(x) + Vector(y * 2)

    compiled = jit.compile(f, backend=counting)
    for seed in (1, 2):
        x, y = randn(3, seed=seed), randn(3, seed=seed + 10)
        expected, actual = f(x, y), compiled(x, y)
        assert type(actual) is Vector
        assert_same(expected.data, actual.data)
    assert counting.graph_count == 1


def test_object_mutated_inside_is_returned_with_state_matches_eager(counting):
    def f(x):
        acc = Accumulator()
        for row in x.unbind(0):
            acc.add(row)
        return acc

    compiled = jit.compile(f, backend=counting)
    x = randn(4, 3, seed=1)
    expected, actual = f(x), compiled(x)
    assert type(actual) is Accumulator
    assert_same(vars(expected), vars(actual))
    assert counting.graph_count == 1


def test_input_object_attribute_mutation_is_seen_by_caller(counting):
    """The caller's object gets eager's total and count; the second call sees new types and values, a new graph."""

    def f(x, acc):
        acc.add(x.sum())
        return x * 2

    compiled = jit.compile(f, backend=counting)
    eager_acc, compiled_acc = Accumulator(), Accumulator()
    for seed in (1, 2):
        x = randn(4, 3, seed=seed)
        assert_same(f(x, eager_acc), compiled(x, compiled_acc))
        assert_same(vars(eager_acc), vars(compiled_acc), "accumulator")
    assert counting.graph_count == 2
