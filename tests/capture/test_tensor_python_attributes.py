"""Capture: a tensor passed in (or a parameter) with Python attributes of its own (`param.tag = 5`, as libraries
mark parameters) is read as Python reads it: `hasattr`, `getattr(t, name, default)` and `t.name` see its
__dict__ (they answered from the fake tensor, which has none: a silent wrong result), guarded so that adding or
removing the attribute recompiles; a missing attribute raises AttributeError, which a traced `except` catches in
one graph. As eager, through jit.compile and register + enabled()."""

import torch

import jitcore as jit
from tests.support import CountingBackend, both_doors, check_against_eager, check_registered_against_eager, randn

LINEAR = torch.nn.Linear(3, 3)
LINEAR.weight.tag = 5


def tagged(seed, tag=3):
    t = randn(3, seed=seed)
    if tag is not None:
        t.tag = tag
    return t


def test_attributes_of_a_tensor_input_and_of_a_parameter():
    def f(x):
        return (x + hasattr(x, "tag") + getattr(x, "tag", 0) + getattr(LINEAR.weight, "tag", 0)
                + hasattr(LINEAR.weight, "missing"))

    counting = CountingBackend()
    with both_doors(f, counting) as doors:  # not cloned: a clone has no attributes of its own
        for door in doors:
            for seed in (1, 2, 1):
                torch.testing.assert_close(door(tagged(seed)), f(tagged(seed)))
    assert counting.graph_count == 2  # one per door


def test_adding_or_removing_the_attribute_recompiles():
    def f(x):
        return x + getattr(x, "tag", 0) * 10 + hasattr(x, "other")

    compiled = jit.compile(f, backend="eager")
    for tag in (None, 3, None, 7):
        x = tagged(1, tag)
        torch.testing.assert_close(compiled(x), f(x))


def test_a_missing_attribute_raises_attribute_error_caught_in_one_graph():
    def f(x):
        try:
            return x.not_an_attribute
        except AttributeError as e:
            return x + 1, str(e)

    check_against_eager(f, (randn(3, seed=1),), expected_graphs=1)
    assert check_registered_against_eager(f, (randn(3, seed=1),)).graph_count == 1
