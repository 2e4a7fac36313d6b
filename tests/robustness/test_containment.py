"""Faults inside jitcore never reach the user's program: each stage, injected, gives eager's result, is reported
once with the function and stage, and is not retried on every call."""
import pytest
import torch

import jitcore as jit
from jitcore.report.console import EVENTS
from jitcore.runtime.cache import STATS


def _f(x, y):
    return torch.relu(x * 2 + y).sum(dim=0)


def _args():
    return torch.randn(4, 3), torch.randn(4, 3)


def _fallbacks():
    return [m for t, m in EVENTS if t == "fallbacks"]


def _check_contained(stage_word, counting):
    compiled = jit.compile(_f, backend=counting)
    x, y = _args()
    for _ in range(3):
        torch.testing.assert_close(compiled(x, y), _f(x, y))
    assert STATS.captures == 1, "the failing capture must not be retried on every call"
    messages = _fallbacks()
    assert len(messages) == 1 and stage_word in messages[0] and "_f" in messages[0], messages


def test_fault_in_capture_is_contained(monkeypatch, counting):
    import jitcore.runtime.pipeline as pipeline

    monkeypatch.setattr(pipeline, "capture_frame", lambda *a, **k: (_ for _ in ()).throw(
        pipeline.CaptureInternalError("injected capture fault")))
    _check_contained("capture", counting)


def test_fault_in_graph_module_construction_is_contained(monkeypatch, counting):
    import torch.fx

    class Broken(torch.fx.GraphModule):
        def __init__(self, *args, **kwargs):
            raise RuntimeError("injected graph module fault")

    monkeypatch.setattr(torch.fx, "GraphModule", Broken)
    _check_contained("graph module", counting)


def test_fault_in_guard_building_is_contained(monkeypatch, counting):
    from jitcore import guards
    monkeypatch.setattr(guards, "compile_tree", _raise_after_first(guards.compile_tree))
    _check_contained("codegen", counting)


def test_fault_in_guard_building_for_a_frame_that_cannot_be_captured_is_contained(monkeypatch, counting):
    from jitcore import guards
    import jitcore.runtime.pipeline as pipeline
    from jitcore.capture.breaks import GraphBreak
    monkeypatch.setattr(guards, "compile_tree", _raise_after_first(guards.compile_tree))
    monkeypatch.setattr(pipeline, "capture_frame", lambda *a, **k: (_ for _ in ()).throw(
        GraphBreak("recursion_limit", "injected")))
    _check_contained("guard codegen", counting)


def test_fault_in_codegen_is_contained(monkeypatch, counting):
    import jitcore.runtime.pipeline as pipeline

    def broken(*args, **kwargs):
        raise ValueError("injected codegen fault")

    monkeypatch.setattr(pipeline, "build_entry", broken)
    _check_contained("codegen", counting)


def test_fault_in_backend_is_contained():
    calls = []

    def exploding(gm, example_inputs):
        calls.append(1)
        raise RuntimeError("injected backend fault")

    compiled = jit.compile(_f, backend=exploding)
    x, y = _args()
    for _ in range(3):
        torch.testing.assert_close(compiled(x, y), _f(x, y))
    assert len(calls) == 1
    assert len(_fallbacks()) == 1 and "exploding" in _fallbacks()[0]


def test_fault_in_guard_evaluation_is_a_miss_not_an_error(counting):
    class Hostile:
        def __init__(self):
            self.scale = 2.0
            self.armed = False

        def __getattribute__(self, name):
            if name == "scale" and object.__getattribute__(self, "armed"):
                raise RuntimeError("hostile attribute")
            return object.__getattribute__(self, name)

    def f(x, h):
        return x * h.scale

    h = Hostile()
    compiled = jit.compile(f, backend=counting)
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x, h), f(x, h))
    h.armed = True
    with pytest.raises(RuntimeError, match="hostile attribute"):
        f(x, h)
    with pytest.raises(RuntimeError, match="hostile attribute"):
        compiled(x, h)


def test_fault_in_strict_mode_is_raised_with_the_stage(monkeypatch):
    import jitcore.runtime.pipeline as pipeline
    from jitcore.config import config
    monkeypatch.setattr(config, "strict", True)
    monkeypatch.setattr(pipeline, "build_entry", lambda *a, **k: (_ for _ in ()).throw(ValueError("injected")))
    with pytest.raises(jit.InternalError, match="codegen of _f"):
        jit.compile(_f, backend="eager")(*_args())


def _raise_after_first(original):
    state = {"calls": 0}

    def compile_tree(*args, **kwargs):
        state["calls"] += 1
        raise RuntimeError("injected guard-building fault")

    return compile_tree


def test_fault_while_rebuilding_the_result_runs_natively_once_reported(monkeypatch, counting):
    from jitcore.codegen.transform import EntryCodegen
    original = EntryCodegen.tensor_output

    def broken(self, value):
        return "___no_such_name_" + original(self, value)

    monkeypatch.setattr(EntryCodegen, "tensor_output", broken)
    compiled = jit.compile(_f, backend=counting)
    x, y = _args()
    for _ in range(3):
        torch.testing.assert_close(compiled(x, y), _f(x, y))
    messages = _fallbacks()
    assert len(messages) == 1 and "rebuilding the result of _f" in messages[0]


class _FailsOnFirstRun:
    """A backend whose compiled graph raises the first time it runs, as a backend compiling lazily may."""

    def __init__(self):
        self.runs = 0

    def __call__(self, gm, example_inputs):
        def run(*inputs):
            self.runs += 1
            if self.runs == 1:
                raise RuntimeError("injected first-run fault")
            return gm(*inputs)
        return run


def test_fault_in_the_compiled_graphs_first_run_is_contained():
    backend = _FailsOnFirstRun()
    compiled = jit.compile(_f, backend=backend)
    x, y = _args()
    for _ in range(3):
        torch.testing.assert_close(compiled(x, y), _f(x, y))
    assert backend.runs == 1, "after its first run failed, the compiled graph must not run again"
    assert STATS.captures == 1
    messages = _fallbacks()
    assert len(messages) == 1 and "first run" in messages[0] and "_f" in messages[0], messages


def test_fault_in_the_compiled_graphs_first_run_under_strict_mode_is_raised_with_the_stage(monkeypatch):
    from jitcore.config import config
    monkeypatch.setattr(config, "strict", True)
    with pytest.raises(jit.BackendCompileError, match="first run"):
        jit.compile(_f, backend=_FailsOnFirstRun())(*_args())


def test_error_of_the_program_on_the_first_run_is_raised_as_it_came_and_not_contained():
    runs = []

    def backend(gm, example_inputs):
        def run(*inputs):
            runs.append(1)
            return gm(*inputs)
        return run

    def g(x, index):
        return torch.index_select(x, 0, index) * 2

    compiled = jit.compile(g, backend=backend)
    x = torch.randn(4, 3)
    with pytest.raises(IndexError) as eager_error:
        g(x, torch.tensor([7]))
    with pytest.raises(IndexError) as compiled_error:
        compiled(x, torch.tensor([7]))
    assert str(compiled_error.value) == str(eager_error.value)
    assert _fallbacks() == []
    torch.testing.assert_close(compiled(x, torch.tensor([1])), g(x, torch.tensor([1])))
    assert len(runs) == 2, "the entry keeps its compiled graph: the program failed, not the backend"
