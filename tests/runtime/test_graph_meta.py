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


def test_user_backends_get_marked_graphs_as_under_torch_compile(counting):
    """A user's callable may wrap Inductor or AOTAutograd (a counting backend around compile_fx): its graphs carry
    the static marks torch.compile's carry; the eager backend, which reads none, gets plain graphs."""
    model = torch.nn.Linear(2, 2)
    compiled = jit.compile(model, backend=counting)
    compiled(torch.randn(1, 2))
    gm = counting.graphs[0]
    assert "dynamo_compile_id" in gm.meta
    kinds = [node.meta.get("tensor_dict", {}).get("_dynamo_static_input_type")
             for node in gm.graph.nodes if node.op == "placeholder"]
    assert sorted(map(bool, kinds)) == [False, True, True]  # the input, then weight and bias


def test_backends_tagged_debug_get_graphs_without_marks(monkeypatch):
    """Backends that read no marks (eager is tagged so) get the graph as captured."""
    graphs = []
    from jitcore.backends import registry
    monkeypatch.setattr(registry, "_registry", registry._Registry(registry._BUILTINS))

    def debug(gm, example_inputs):
        graphs.append(gm)
        return gm.forward
    backends.register_backend("debug_recording", debug, tags=("debug",))
    jit.compile(torch.nn.Linear(2, 2), backend="debug_recording")(torch.randn(1, 2))
    assert "dynamo_compile_id" not in graphs[0].meta


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
