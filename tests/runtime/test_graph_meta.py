"""Graphs handed to backends say which inputs are module parameters/buffers (static addresses), as Dynamo's do,
so AOTAutograd and Inductor skip per-call alignment checks and cudagraph copies for them."""
import torch

from jitcore import backends
import jitcore as jit


def test_parameters_and_buffers_are_marked_static_and_arguments_are_not(counting, monkeypatch):
    """Marks go to backends tagged as running AOTAutograd; here the recording backend, so tagged, stands in."""
    from jitcore.backends import registry
    monkeypatch.setattr(registry, "_registry", registry._Registry(registry._BUILTINS))
    backends.register_backend("recording_aot", counting, tags=(backends.AOT_AUTOGRAD,))
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4)).eval()
    compiled = jit.compile(model, backend="recording_aot")
    compiled(torch.randn(3, 4))
    gm = counting.graphs[0]
    marks = {}
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            marks[node._dynamo_source.name] = node.meta.get("tensor_dict", {}).get("_dynamo_static_input_type")
    static = {name for name, kind in marks.items() if kind}
    assert static == {name for name in marks if name.startswith("self")}, marks
    assert any("running_mean" in name for name in static) and any("weight" in name for name in static)
    assert len(marks) - len(static) == 1  # the input


def test_user_backends_get_graphs_without_marks(counting):
    compiled = jit.compile(torch.nn.Linear(2, 2), backend=counting)
    compiled(torch.randn(1, 2))
    assert "dynamo_compile_id" not in counting.graphs[0].meta


def test_marked_graph_trains_through_aot_eager_like_eager():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    twin = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    twin.load_state_dict(model.state_dict())
    compiled = jit.compile(model, backend="aot_eager")
    x = torch.randn(5, 4)
    compiled(x).square().mean().backward()
    twin(x).square().mean().backward()
    for a, b in zip(model.parameters(), twin.parameters()):
        torch.testing.assert_close(a.grad, b.grad)
