"""Capture: dict subclasses made inside the function and passed in, the shape of Hugging Face's ModelOutput.

A `@dataclass` over an OrderedDict subclass whose `__setattr__` also stores items and whose `__getitem__` takes
strings or positions is built inside the function, indexed, and returned; the returned object must equal eager's
in type, items, order and attributes. One passed in is read by attribute, key and position.
"""

from collections import OrderedDict
from dataclasses import dataclass, fields
from typing import Optional

import torch

import jitcore as jit
from tests.support import check_against_eager, randn


class Output(OrderedDict):
    def __post_init__(self):
        for field in fields(self):
            value = self.__dict__.get(field.name)
            if value is not None:
                self[field.name] = value

    def __setattr__(self, name, value):
        if name in {f.name for f in fields(self)} and value is not None:
            super().__setitem__(name, value)
        super().__setattr__(name, value)

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        super().__setattr__(key, value)

    def __getitem__(self, k):
        if isinstance(k, str):
            return dict(self.items())[k]
        return self.to_tuple()[k]

    def to_tuple(self):
        return tuple(self[k] for k in self.keys())


@dataclass
class ModelOut(Output):
    logits: Optional[torch.Tensor] = None
    hidden: Optional[torch.Tensor] = None
    steps: Optional[int] = None


class Bag(dict):
    def total(self):
        return sum(self.values())


def _same_output(expected, actual):
    assert type(actual) is type(expected)
    assert list(actual.keys()) == list(expected.keys())
    assert set(actual.__dict__) == set(expected.__dict__)
    for key in expected:
        torch.testing.assert_close(actual[key], expected[key])


def test_model_output_built_and_indexed_inside_is_one_graph():
    def f(x):
        out = ModelOut(logits=x * 2, hidden=None)
        out.steps = 3
        return out[0] + out["logits"] + out.logits + len(out)

    check_against_eager(f, (randn(3, seed=1),))


def test_model_output_returned_matches_eager_object():
    def f(x):
        return ModelOut(logits=x.relu(), hidden=x + 1)

    compiled = jit.compile(f)
    x = randn(4, seed=2)
    for _ in range(2):
        _same_output(f(x), compiled(x))
    assert compiled(x).hidden is not None and compiled(x).steps is None


def test_model_output_passed_in_is_read_by_attribute_key_and_position(counting):
    def loss(out, target):
        return (out.logits - target).pow(2).mean() + out["logits"].sum() + out[0].sum() + (out.hidden is None)

    compiled = jit.compile(loss, backend=counting)
    a = ModelOut(logits=randn(3, seed=1))
    b = ModelOut(logits=randn(3, seed=2), hidden=randn(3, seed=3))
    for out in (a, b, a):
        torch.testing.assert_close(compiled(out, randn(3, seed=4)), loss(out, randn(3, seed=4)))
    assert counting.graph_count == 2


def test_plain_dict_subclass_made_inside_keeps_its_type_and_methods():
    def f(x):
        bag = Bag(a=x, b=2)
        bag["c"] = x + 1
        return bag, bag.total()

    check_against_eager(f, (randn(3, seed=1),))


def test_ordered_dict_subclass_keeps_insertion_order():
    class Ordered(OrderedDict):
        pass

    def f(x):
        d = Ordered()
        d["z"] = x
        d["a"] = x * 2
        return d

    check_against_eager(f, (randn(3, seed=1),))


class _RenamingMeta(type):
    """A metaclass that only rewrites a class attribute as it is set (Hugging Face's ModelOutput wraps the
    dataclass `__init__` this way): instances are made as `type` makes them."""

    def __setattr__(cls, name, value):
        if name == "__init__":
            init = value

            def __init__(self, *args, **kwargs):
                kwargs.pop("legacy", None)
                init(self, *args, **kwargs)

            value = __init__
        super().__setattr__(name, value)


class _MetaOutput(Output, metaclass=_RenamingMeta):
    pass


@dataclass
class MetaModelOut(_MetaOutput):
    logits: Optional[torch.Tensor] = None
    hidden: Optional[torch.Tensor] = None


def test_model_output_under_a_metaclass_that_only_sets_class_attributes_is_one_graph():
    def f(x):
        out = MetaModelOut(logits=x * 2, legacy=1)
        return out, out[0] + out["logits"]

    check_against_eager(f, (randn(3, seed=1),))


class _CountingMeta(type):
    made = 0

    def __call__(cls, *args, **kwargs):
        _CountingMeta.made += 1
        return super().__call__(*args, **kwargs)


class _Counted(Output, metaclass=_CountingMeta):
    pass


def test_dict_subclass_whose_metaclass_makes_instances_keeps_its_call():
    def f(x):
        out = _Counted()
        out["a"] = x + 1
        return out

    compiled = jit.compile(f)
    x = randn(3, seed=1)
    before = _CountingMeta.made
    _same_output(f(x), compiled(x))
    assert _CountingMeta.made == before + 2
