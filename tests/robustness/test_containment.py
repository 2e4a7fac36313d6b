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
    import jitcore.runtime.cache as cache

    def broken(*args, **kwargs):
        raise RuntimeError("injected capture fault")

    monkeypatch.setattr(cache, "capture_frame", lambda *a, **k: (_ for _ in ()).throw(
        cache.CaptureInternalError("injected capture fault")))
    _check_contained("capture", counting)


def test_fault_in_guard_building_is_contained(monkeypatch, counting):
    import guards
    monkeypatch.setattr(guards, "compile_tree", _raise_after_first(guards.compile_tree))
    _check_contained("codegen", counting)


def test_fault_in_codegen_is_contained(monkeypatch, counting):
    import jitcore.runtime.cache as cache

    def broken(*args, **kwargs):
        raise ValueError("injected codegen fault")

    monkeypatch.setattr(cache, "build_entry", broken)
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
    import jitcore.runtime.cache as cache
    from jitcore.config import config
    monkeypatch.setattr(config, "strict", True)
    monkeypatch.setattr(cache, "build_entry", lambda *a, **k: (_ for _ in ()).throw(ValueError("injected")))
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
