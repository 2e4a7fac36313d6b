"""Calls of functions that an enabled() block intercepts in place (a registered function; the class forward of a
registered module) are inlined through their own body, not traced into the dispatcher: same results as eager, and
no graph break, also for other instances of a registered module's class."""
import torch

import jitcore as jit
from tests.support import CountingBackend, assert_same, randn


def _nested():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Linear(3, 3)))


def test_registered_module_containing_an_instance_of_its_own_class_is_one_graph():
    model, eager = _nested(), _nested()
    jit.register(model)
    backend = CountingBackend()
    try:
        with jit.enabled(backend=backend):
            for seed in range(3):
                x = randn(2, 3, seed=seed)
                assert_same(eager(x), model(x))
    finally:
        jit.unregister(model)
    assert backend.graph_count == 1
    assert backend.op_count == 3


def _add_one(x, log):
    log.append("add")
    return x + 1


def _caller(x, log):
    return _add_one(x, log) * 2


def test_compiled_function_calling_a_registered_function_inlines_it():
    backend = CountingBackend()
    compiled = jit.compile(_caller, backend=backend)
    jit.register(_add_one)
    x = randn(4)
    try:
        with jit.enabled(backend="eager"):
            _add_one(x, [])  # installs the prologue
            log, eager_log = [], []
            assert_same(_caller(x, eager_log), compiled(x, log))
            assert log == eager_log == ["add"]
        assert backend.graph_count == 1 and backend.op_count == 2
        log, eager_log = [], []
        assert_same(_caller(x, eager_log), compiled(x, log))  # the prologue is gone: guarded, captured again
        assert log == eager_log == ["add"]
    finally:
        jit.unregister(_add_one)


def _countdown(x, n):
    if n == 0:
        return x
    return _countdown(x * 2, n - 1) + 1


def test_registered_recursive_function_matches_eager():
    jit.register(_countdown)
    x = randn(3)
    try:
        with jit.enabled(backend="eager"):
            for n in (3, 3, 4):
                assert_same(_reference(x, n), _countdown(x, n))
    finally:
        jit.unregister(_countdown)


def _reference(x, n):
    for _ in range(n):
        x = x * 2
    for _ in range(n):
        x = x + 1
    return x
