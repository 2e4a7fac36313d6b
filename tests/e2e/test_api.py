"""Public API behaviours beyond plain capture: disable, allow_in_graph, fullgraph, explain, fallbacks, strict."""
import dataclasses
import operator
import os
import shutil
import subprocess
import sys

import pytest
import torch

import jitcore as jit
from jitcore.config import config
from jitcore.report.console import EVENTS
from tests.support import CountingBackend

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _printing(x):
    y = x + 1
    print("inside")
    return y * 2


def test_unsupported_call_splits_the_frame_around_the_call(counting, capsys):
    """The print runs natively between a prefix graph (x + 1) and the resume function's graph (y * 2)."""
    compiled = jit.compile(_printing, backend=counting)
    x = torch.randn(3)
    out = compiled(x)
    torch.testing.assert_close(out, (x + 1) * 2)
    assert capsys.readouterr().out == "inside\n"
    assert counting.graph_count == 2
    torch.testing.assert_close(compiled(x), (x + 1) * 2)
    assert capsys.readouterr().out == "inside\n"
    assert counting.graph_count == 2


def test_break_is_reported_once_and_not_recaptured(counting):
    from jitcore.runtime.cache import STATS
    compiled = jit.compile(_printing, backend=counting)
    x = torch.randn(3)
    compiled(x)
    captures = STATS.captures
    for _ in range(3):
        compiled(x)
    assert STATS.captures == captures == 2  # the frame and its resume function
    breaks = [message for topic, message in EVENTS if topic == "breaks"]
    assert len(breaks) == 1
    assert "print" in breaks[0] and "test_api.py" in breaks[0]


def test_fullgraph_raises_graph_break_error_naming_file_and_line():
    compiled = jit.compile(_printing, backend="eager", fullgraph=True)
    with pytest.raises(jit.GraphBreakError) as info:
        compiled(torch.randn(3))
    err = info.value
    assert err.filename.endswith("test_api.py")
    assert err.source_line == 'print("inside")'
    assert f"test_api.py:{err.lineno}" in str(err)
    assert isinstance(err, jit.JitError)


def test_disabled_helper_makes_caller_run_natively(counting):
    @jit.disable
    def helper(t):
        return t * 3

    def f(x):
        return helper(x) + 1

    x = torch.randn(2)
    torch.testing.assert_close(jit.compile(f, backend=counting)(x), x * 3 + 1)
    # helper runs natively (its multiplication is in no graph); the rest is the resume function's graph
    assert counting.graph_count == 1
    assert [n.target for n in counting.graphs[0].graph.nodes if n.op == "call_function"] == [operator.add]


def test_disabled_function_compiled_directly_runs_natively(counting):
    @jit.disable
    def g(x):
        return x - 1

    x = torch.randn(2)
    torch.testing.assert_close(jit.compile(g, backend=counting)(x), x - 1)


def test_allow_in_graph_keeps_call_as_one_node(counting):
    def helper(t):
        return torch.sin(t) * 2

    jit.allow_in_graph(helper)

    def f(x):
        return helper(x) + 1

    x = torch.randn(4)
    torch.testing.assert_close(jit.compile(f, backend=counting)(x), torch.sin(x) * 2 + 1)
    targets = [n.target for n in counting.graphs[0].graph.nodes if n.op == "call_function"]
    assert helper in targets


def test_is_compiling_is_true_only_while_tracing(counting):
    def f(x):
        return x + (1 if jit.is_compiling() else 100)

    x = torch.zeros(1)
    assert jit.is_compiling() is False
    torch.testing.assert_close(jit.compile(f, backend=counting)(x), x + 1)


def _two_graphs_of_work(x, y):
    return torch.relu(x @ y).sum(), x.shape[0]


def test_explain_reports_graph_ops_guards_and_time():
    report = jit.explain(_two_graphs_of_work, torch.randn(3, 4), torch.randn(4, 2))
    assert report.graph_count == 1
    assert report.graph_break_count == 0
    assert report.break_reasons == []
    assert report.ops_per_graph == [3]
    assert len(report.guards) >= 3  # global state + x + y
    assert "capture" in report.compile_time
    text = str(report)
    assert "graphs: 1" in text and "x: TensorMatch" in text


def test_explain_reports_break_with_user_location():
    report = jit.explain(_printing, torch.randn(3))
    assert report.graph_break_count == 1
    brk = report.breaks[0]
    assert brk.filename.endswith("test_api.py")
    assert brk.source_line.strip() == 'print("inside")'
    assert "print" in report.break_reasons[0]


def test_explain_runs_the_function_once(capsys):
    jit.explain(_printing, torch.randn(3))
    assert capsys.readouterr().out == "inside\n"


def test_explain_of_module_captures_forward():
    report = jit.explain(torch.nn.Linear(3, 2), torch.randn(1, 3))
    assert report.graph_count == 1 and report.ops_per_graph == [1]


def _failing_backend(gm, example_inputs):
    raise RuntimeError("backend exploded")


def test_backend_failure_falls_back_to_native_and_says_which_backend():
    def f(x):
        return x * 2

    x = torch.randn(3)
    torch.testing.assert_close(jit.compile(f, backend=_failing_backend)(x), x * 2)
    messages = [m for topic, m in EVENTS if topic == "fallbacks"]
    assert any("_failing_backend" in m and "f()" in m and "backend exploded" in m for m in messages)


def test_backend_failure_raises_under_fullgraph():
    def f(x):
        return x * 2

    with pytest.raises(jit.BackendCompileError, match="backend exploded"):
        jit.compile(f, backend=_failing_backend, fullgraph=True)(torch.randn(3))


def test_internal_capture_error_falls_back_once(monkeypatch, counting):
    from jitcore.capture.opcodes import HANDLERS
    from jitcore.runtime.cache import STATS
    handler = HANDLERS["BINARY_OP"]

    def broken(state, inst, lhs, rhs):
        raise ZeroDivisionError("injected")

    monkeypatch.setitem(HANDLERS, "BINARY_OP", dataclasses.replace(handler, fn=broken))

    def f(x):
        return x + 1

    compiled = jit.compile(f, backend=counting)
    x = torch.randn(2)
    for _ in range(3):
        torch.testing.assert_close(compiled(x), x + 1)
    assert STATS.captures == 1
    assert any("internal error during capture" in m and "BINARY_OP" in m for t, m in EVENTS if t == "fallbacks")


def test_internal_error_raises_in_strict_mode(monkeypatch):
    from jitcore.capture.opcodes import HANDLERS
    handler = HANDLERS["BINARY_OP"]

    def broken(state, inst, lhs, rhs):
        raise ZeroDivisionError("injected")

    monkeypatch.setitem(HANDLERS, "BINARY_OP", dataclasses.replace(handler, fn=broken))
    monkeypatch.setattr(config, "strict", True)
    with pytest.raises(jit.InternalError, match="injected"):
        jit.compile(lambda x: x + 1, backend="eager")(torch.randn(2))


def test_debug_checks_verify_stack_effects_while_capturing(monkeypatch, counting):
    monkeypatch.setattr(config, "debug_checks", True)

    def f(x, ys):
        a, b = ys
        d = {"k": x * a, "j": [b, x]}
        return d["k"] + d["j"][1][0:2].sum(), (a, *ys)

    x = torch.randn(3)
    out = jit.compile(f, backend=counting)(x, (2, 3))
    torch.testing.assert_close(out[0], f(x, (2, 3))[0])
    assert counting.graph_count == 1


def test_cache_limit_hit_is_told_once_with_the_changing_value():
    def f(x):
        return x + 1

    compiled = jit.compile(f, backend="eager", cache_limit=1)
    for n in (2, 3, 4):
        compiled(torch.ones(n))
    limit = [m for t, m in EVENTS if t == "recompiles" and "cache_limit" in m]
    assert len(limit) == 1
    assert "x" in limit[0] and "shape" in limit[0]


def test_recompile_reason_names_the_changed_value(monkeypatch):
    monkeypatch.setattr(config, "log", "recompiles")

    def f(x):
        return x + 1

    compiled = jit.compile(f, backend="eager")
    compiled(torch.ones(4, 2))
    compiled(torch.ones(7, 2))
    reasons = [m for t, m in EVENTS if t == "recompiles"]
    assert len(reasons) == 1
    assert "x" in reasons[0] and "4 -> 7" in reasons[0] and "f()" in reasons[0]


def test_bad_log_topic_is_a_clear_error():
    with pytest.raises(jit.JitError, match="unknown JITCORE_LOG topic 'recompile'.*recompiles"):
        config.log = "recompile"


def test_unknown_backend_error_names_the_backend():
    with pytest.raises(jit.UnknownBackendError, match="no_such_backend"):
        jit.compile(lambda x: x, backend="no_such_backend")


@pytest.mark.skipif(shutil.which("python3.11") is None, reason="needs a python3.11 interpreter")
def test_import_on_other_python_names_the_needed_version():
    proc = subprocess.run(["python3.11", "-c", "import jitcore"], cwd=_REPO, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": _REPO, "PYENV_VERSION": "3.11.7"})
    assert proc.returncode != 0
    assert "jitcore needs CPython 3.12" in proc.stderr
    assert sys.version_info[:2] == (3, 12)


def test_compiled_function_keeps_name_doc_and_wrapped():
    def named(x):
        """doc"""
        return x

    compiled = jit.compile(named, backend="eager")
    assert compiled.__name__ == "named" and compiled.__doc__ == "doc" and compiled.__wrapped__ is named


def test_compile_of_bound_method_and_callable_object(counting):
    class Scaler:
        def __init__(self):
            self.k = 3

        def __call__(self, x):
            return x * self.k

        def half(self, x):
            return x / 2

    s = Scaler()
    x = torch.randn(2)
    # attribute reads of plain user objects are not captured yet: they fall back, with eager results
    torch.testing.assert_close(jit.compile(s, backend=counting)(x), x * 3)
    torch.testing.assert_close(jit.compile(s.half, backend=counting)(x), x / 2)


def test_counting_backend_is_a_plain_callable():
    assert callable(CountingBackend())
