"""`fn.__code__` replaced after the function was compiled: the new code runs from the next call on, through a
jit.compile copy and under enabled(), for plain functions and for a registered module's forward, and leaving the
block keeps the user's code (it does not put the old one back)."""
import torch

import jitcore as jit
from tests.support import assert_same, randn


def _replacement(x, log):
    log.append("new")
    return x * 100


def _replacement_forward(self, x):
    self.log.append("new")
    return x * 100


def _fresh_function():
    def step(x, log):
        log.append("old")
        return x + 1
    return step


def test_replaced_code_runs_in_a_compiled_copy():
    fn, eager = _fresh_function(), _fresh_function()
    compiled = jit.compile(fn, backend="eager")
    log, eager_log = [], []
    x = randn(3)
    assert_same(eager(x, eager_log), compiled(x, log))
    fn.__code__ = eager.__code__ = _replacement.__code__
    for _ in range(2):
        assert_same(eager(x, eager_log), compiled(x, log))
    assert log == eager_log == ["old", "new", "new"]


def test_replaced_code_runs_under_enabled_and_stays_after_the_block(counting):
    fn, eager = _fresh_function(), _fresh_function()
    jit.register(fn)
    log, eager_log = [], []
    x = randn(3)
    try:
        with jit.enabled(backend=counting):
            for _ in range(2):
                assert_same(eager(x, eager_log), fn(x, log))
            fn.__code__ = eager.__code__ = _replacement.__code__
            assert_same(eager(x, eager_log), fn(x, log))
        assert fn.__code__ is _replacement.__code__
        assert_same(eager(x, eager_log), fn(x, log))
    finally:
        jit.unregister(fn)
    assert log == eager_log == ["old", "old", "new", "new"]
    assert counting.graph_count == 1


def _module_class():
    class Step(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.log = []

        def forward(self, x):
            self.log.append("old")
            return x + 1
    return Step


def test_replaced_forward_code_runs_for_a_registered_module(counting):
    step_cls, eager_cls = _module_class(), _module_class()
    model, eager = step_cls(), eager_cls()
    jit.register(model)
    x = randn(3)
    try:
        with jit.enabled(backend=counting):
            for _ in range(2):
                assert_same(eager(x), model(x))
            step_cls.forward.__code__ = eager_cls.forward.__code__ = _replacement_forward.__code__
            assert_same(eager(x), model(x))
        assert step_cls.forward.__code__ is _replacement_forward.__code__
        assert_same(eager(x), model(x))
    finally:
        jit.unregister(model)
    assert model.log == eager.log == ["old", "old", "new", "new"]


def test_replaced_forward_code_runs_for_a_compiled_module():
    step_cls, eager_cls = _module_class(), _module_class()
    model, eager = step_cls(), eager_cls()
    compiled = jit.compile(model, backend="eager")
    x = randn(3)
    assert_same(eager(x), compiled(x))
    step_cls.forward.__code__ = eager_cls.forward.__code__ = _replacement_forward.__code__
    assert_same(eager(x), compiled(x))
    assert model.log == eager.log == ["old", "new"]
