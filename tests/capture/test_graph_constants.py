"""Constants passed to graph operations reach the graph module either as code FX writes (numbers, strings, dtypes,
devices, None, slices and tuples of them) or as attributes of the graph module read by get_attr nodes (classes,
functions, objects, NumPy scalars): the graph's code always compiles, and the operation sees the very object."""
import operator

import numpy as np
import pytest
import torch
import torch.fx

from jitcore.capture.graph import GraphBuilder
from tests.support import arg_sets, check_against_eager, check_registered_against_eager


@pytest.fixture(autouse=True)
def _strict(monkeypatch):
    """An internal error is raised, not contained: a fallback would hide it behind eager's own result."""
    import jitcore as jit
    monkeypatch.setattr(jit.config, "strict", True)


def test_tensor_type_with_a_tensor_class_and_its_name_matches_eager():
    def f(a, b):
        m = a.type(torch.HalfTensor)
        return m, b.type(m.type()), b.type(torch.DoubleTensor)

    counting = check_against_eager(f, *arg_sets((4, 3), (4, 3)))
    check_registered_against_eager(f, *arg_sets((4, 3), (4, 3)))
    get_attrs = [n for n in counting.graphs[0].graph.nodes if n.op == "get_attr"]
    assert {getattr(counting.graphs[0], n.target) for n in get_attrs} == {torch.HalfTensor, torch.DoubleTensor}


def test_graph_attribute_constant_runs_under_aot_eager():
    def f(a, b):
        return b.type(a.type(torch.HalfTensor).type()) * 2

    check_against_eager(f, *arg_sets((4, 3), (4, 3)), backend="aot_eager")


class _Scale:
    def __init__(self, k):
        self.k = k


def _scaled(x, fn, scale):
    return fn(x) * scale.k


@pytest.mark.parametrize("constant", [_Scale, len, _scaled, _Scale(2), np.float32(2.0), torch.tensor(3.0)],
                         ids=["class", "builtin", "function", "object", "numpy scalar", "tensor"])
def test_constant_without_source_form_becomes_a_graph_attribute(constant):
    builder = GraphBuilder()
    x = builder.graph.placeholder("x")
    node = builder.create_node("call_function", operator.is_, (x, [constant, (1, constant)]), {}, None)
    builder.output([node])
    gm = torch.fx.GraphModule(builder.root, builder.graph)
    get_attrs = [n for n in gm.graph.nodes if n.op == "get_attr"]
    assert len(get_attrs) == 1, "one attribute per object, however often it is passed"
    assert getattr(gm, get_attrs[0].target) is constant
    captured = []
    gm.graph.find_nodes(op="call_function", target=operator.is_)[0].target = lambda a, b: captured.append(b)
    gm.recompile()
    gm(torch.zeros(1))
    assert captured[0][0] is constant and captured[0][1][1] is constant


@pytest.mark.parametrize("constant", [3, 2.5, float("inf"), True, None, "s", torch.float16, torch.device("cpu"),
                                      slice(1, None), (1, "a"), Ellipsis, 1j])
def test_constant_with_source_form_stays_in_the_code(constant):
    builder = GraphBuilder()
    x = builder.graph.placeholder("x")
    node = builder.create_node("call_function", operator.add, (x, constant), {}, None)
    builder.output([node])
    gm = torch.fx.GraphModule(builder.root, builder.graph)
    assert not [n for n in gm.graph.nodes if n.op == "get_attr"]
    assert list(gm.graph.nodes)[1].args[1] == constant
