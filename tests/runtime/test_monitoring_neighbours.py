"""jitcore lives beside other sys.monitoring tools (coverage, profilers, debuggers): it never re-enables the events
they disabled for themselves (Note [Living beside other monitoring tools] in runtime/monitor.py)."""
import sys

import torch

import jitcore as jit

_MON = sys.monitoring


def _work(x):
    return x * 2 + 1


def _other(x):
    return x - 1


def _free_tool_id():
    for candidate in (5, 1, 0):
        if _MON.get_tool(candidate) is None:
            return candidate
    raise AssertionError("no free sys.monitoring tool id for the test's own tool")


def test_events_another_tool_disabled_stay_disabled_across_enabled_blocks(counting):
    tool = _free_tool_id()
    seen = []

    def on_start(code, offset):
        if code is _other.__code__:
            seen.append(code.co_name)
            return _MON.DISABLE  # this tool has seen enough of _other: a profiler's usual answer
        return None

    _MON.use_tool_id(tool, "test-neighbour")
    try:
        _MON.register_callback(tool, _MON.events.PY_START, on_start)
        _MON.set_events(tool, _MON.events.PY_START)
        jit.register(_work)
        x = torch.ones(3)
        _other(x)
        for _ in range(3):  # each block arms and disarms jitcore's tool; a fresh block once restarted all events
            with jit.enabled(backend=counting):
                _work(x)
                _work(x)
            _other(x)
        _MON.set_events(tool, 0)
    finally:
        _MON.register_callback(tool, _MON.events.PY_START, None)
        _MON.free_tool_id(tool)
        jit.unregister(_work)
    assert seen == ["_other"]
    assert counting.graph_count == 1


def test_a_registered_function_is_intercepted_again_in_a_later_block(counting):
    jit.register(_work)
    x = torch.ones(3)
    try:
        with jit.enabled(backend=counting):
            torch.testing.assert_close(_work(x), x * 2 + 1)
        original = _work.__code__
        with jit.enabled(backend=counting):
            _work(x)
            inside = _work.__code__
        assert inside is not original  # the prologue went on again without restarting anyone's events
    finally:
        jit.unregister(_work)
