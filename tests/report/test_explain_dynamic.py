"""jit.explain() on dynamic shapes: which dims are dynamic and why (automatic dynamic after a recompile, with the
sizes it saw; dynamic=True; mark_dynamic with its bounds; maybe_mark_dynamic), the symbols in the graph code, and
the shape guards in the user's names; the copy explain() runs compiles what the user's own calls compile now,
through jit.compile and through register + enabled()."""
import torch

import jitcore as jit
from jitcore import events
from tests.support import recompile_messages


def _branches(x, y):
    if x.shape[0] > 4:
        return x.view(-1, 2) + y.sum()
    return x * 2


def _graph_lines(report):
    return [line for graph in report.graphs for line in graph.dynamic_dims]


def test_after_recompiles_explain_shows_the_automatic_dims_with_the_sizes_that_made_them_dynamic():
    compiled = jit.compile(_branches)
    for batch in (6, 7, 8):
        compiled(torch.randn(batch, 4), torch.randn(3))
    report = jit.explain(compiled, torch.randn(9, 4), torch.randn(3))
    (graph,) = report.graphs
    (line,) = graph.dynamic_dims
    symbol = line.split(" = ")[1].split(":")[0]
    assert line == f"x.shape[0] = {symbol}: automatic dynamic: changed 6 -> 7 at a recompile"
    assert f'{symbol}: "Sym({symbol})"' in graph.readable_code
    text = str(report)
    assert f"dynamic x.shape[0] = {symbol}: automatic dynamic: changed 6 -> 7" in " ".join(text.split())
    assert "x.shape[0] >= 5" in text  # the shape guard, in the user's names
    assert "automatic dynamic: changed 6 -&gt; 7" in report._repr_html_()


def test_a_registered_function_is_explained_with_what_its_calls_learnt():
    jit.register(_branches)
    try:
        with jit.enabled(backend="eager"):
            for batch in (6, 7):
                _branches(torch.randn(batch, 4), torch.randn(3))
        report = jit.explain(_branches, torch.randn(9, 4), torch.randn(3))
    finally:
        jit.unregister(_branches)
    assert [line.split(": ", 1)[1] for line in _graph_lines(report)] == ["automatic dynamic: changed 6 -> 7 at a "
                                                                         "recompile"]


def test_a_function_never_run_compiled_is_explained_static():
    def f(x):
        return x * 2

    assert _graph_lines(jit.explain(f, torch.randn(5, 4))) == []


def test_dynamic_true_mark_dynamic_and_maybe_mark_dynamic_are_named():
    def f(x, y):
        return x.sum(0) + y.sum()

    report = jit.explain(jit.compile(f, dynamic=True), torch.randn(5, 4), torch.randn(3))
    assert [line.split(": ", 1)[1] for line in _graph_lines(report)] == ["dynamic=True"] * 3
    x = torch.randn(5, 4)
    jit.mark_dynamic(x, 0, min=2, max=64)
    y = torch.randn(3)
    jit.maybe_mark_dynamic(y, 0)
    lines = _graph_lines(jit.explain(f, x, y))
    assert [line.split(" = ")[0] for line in lines] == ["x.shape[0]", "y.shape[0]"]
    assert lines[0].endswith(": jit.mark_dynamic(min=2, max=64)")
    assert lines[1].endswith(": jit.maybe_mark_dynamic")


def test_a_marked_dim_that_tracing_made_a_constant_says_so():
    def f(x):
        out = x
        for _ in range(x.shape[0]):
            out = out + 1
        return out

    x = torch.randn(3)
    jit.mark_dynamic(x, 0)
    assert _graph_lines(jit.explain(f, x)) == [
        "x.shape[0] = 3: asked dynamic (jit.mark_dynamic), made a constant while tracing"]
    y = torch.randn(1, 3)
    jit.mark_dynamic(y, 0)
    assert _graph_lines(jit.explain(lambda t: t * 2, y)) == [
        "t.shape[0] = 1: asked dynamic (jit.mark_dynamic), but sizes 0 and 1 are always specialised (broadcasting)"]


def test_the_recompile_message_says_which_dim_turns_dynamic(monkeypatch):
    found, listen = recompile_messages(monkeypatch)
    try:
        compiled = jit.compile(_branches)
        for batch in (6, 7, 8):
            compiled(torch.randn(batch, 4), torch.randn(3))
    finally:
        events.unsubscribe(listen)
    assert len(found) == 1 and "x.shape[0] changed 6 -> 7: now dynamic" in found[0]
