"""Capture: operator.itemgetter / attrgetter / methodcaller passed in (not only made inside), and `in` on
nn.ModuleDict, nn.ModuleList, nn.ParameterDict and nn.ParameterList: one graph, as eager, through jit.compile and
register + enabled(); a container changed between calls recompiles.
"""

import operator

import torch
from torch import nn

import jitcore as jit
from tests.support import CountingBackend, check_against_eager, check_registered_against_eager, randn


def one_graph_both_doors(fn, *arg_sets):
    check_against_eager(fn, *arg_sets, expected_graphs=1)
    assert check_registered_against_eager(fn, *arg_sets).graph_count == 1


class Outer:
    def __init__(self):
        self.inner = Inner()
        self.w = 3


class Inner:
    v = 2


PICK = operator.itemgetter(1, 0)
FIELD = operator.attrgetter("inner.v", "w")
SCALE = operator.methodcaller("mul", 4)
ADD = operator.methodcaller("add", 1, alpha=2)


def test_getters_passed_in_are_called_in_the_graph():
    def f(x, pick, field, scale, add, obj):
        a, b = pick([x, x * 2, x * 3])
        v, w = field(obj)
        return scale(a) + add(b) * v + w

    one_graph_both_doors(f, (randn(3, seed=1), PICK, FIELD, SCALE, ADD, Outer()))


def test_a_getter_with_other_arguments_recompiles_a_new_equal_one_does_not():
    def f(x, g):
        return g([x, x * 2, x * 3])

    counting = CountingBackend()
    compiled = jit.compile(f, backend=counting)
    x = randn(3, seed=1)
    for getter in (operator.itemgetter(1), operator.itemgetter(1), operator.itemgetter(2), operator.itemgetter(0),
                   operator.methodcaller("__getitem__", 1), operator.methodcaller("__getitem__", 1)):
        torch.testing.assert_close(compiled(x, getter), f(x, getter))
    assert counting.graph_count == 4


def test_a_getter_passed_in_and_returned_is_the_same_object():
    def f(x, g):
        return x + 1, g

    out = jit.compile(f, backend="eager")(randn(3, seed=1), PICK)
    assert out[1] is PICK


def containers():
    torch.manual_seed(0)
    return (nn.ModuleDict({"a": nn.Linear(3, 3), "b": nn.ReLU()}), nn.ModuleList([nn.Linear(3, 3), nn.Tanh()]),
            nn.ParameterDict({"w": nn.Parameter(torch.ones(3))}), nn.ParameterList([nn.Parameter(torch.ones(3))]))


def test_in_on_module_and_parameter_containers():
    def f(x, md, ml, pd, pl):
        if "a" in md and "zz" not in md:
            x = md["a"](x)
        if "w" in pd and "v" not in pd:
            x = x * pd["w"]
        return x + (ml[1] in ml) + (md["a"] in ml) + (pl[0] in pl)

    one_graph_both_doors(f, (randn(2, 3, seed=1), *containers()))


def test_a_key_added_to_a_module_dict_later_is_seen():
    def f(x, md):
        return x + 1 if "extra" in md else x - 1

    md = containers()[0]
    compiled = jit.compile(f, backend="eager")
    x = randn(3, seed=1)
    torch.testing.assert_close(compiled(x, md), f(x, md))
    md["extra"] = nn.Identity()
    torch.testing.assert_close(compiled(x, md), f(x, md))
