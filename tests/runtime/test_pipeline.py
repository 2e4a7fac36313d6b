"""The compile pipeline: the retry of a backend that fails on a marked graph, and the compiled graph an entry calls
once its first run succeeded."""
import torch

from jitcore import backends
import jitcore as jit
from jitcore.report.console import EVENTS


def _model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())


def test_a_backend_failing_on_a_marked_graph_gets_it_again_without_marks(monkeypatch):
    from jitcore.backends import registry
    monkeypatch.setattr(registry, "_registry", registry._Registry(registry._BUILTINS))
    received = []

    def picky(gm, example_inputs):
        received.append("dynamo_compile_id" in gm.meta)
        if received[-1]:
            raise RuntimeError("cannot read the marks")
        return gm.forward

    backends.register_backend("picky", picky, tags=(backends.AOT_AUTOGRAD,))
    model = _model()
    x = torch.randn(2, 4)
    compiled = jit.compile(model, backend="picky")
    torch.testing.assert_close(compiled(x), model(x))
    torch.testing.assert_close(compiled(x + 1), model(x + 1))
    assert received == [True, False]
    assert not [m for t, m in EVENTS if t == "fallbacks"]


def test_after_its_first_run_an_entry_calls_the_backends_graph_directly():
    compiled_graphs = []

    def backend(gm, example_inputs):
        def run(*inputs):
            return gm(*inputs)
        compiled_graphs.append(run)
        return run

    def f(x):
        return torch.relu(x) * 2

    compiled = jit.compile(f, backend=backend)
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x), f(x))
    (entry,) = compiled._jitcore_cache.entries
    assert compiled_graphs[0] in entry.run.__globals__.values()
