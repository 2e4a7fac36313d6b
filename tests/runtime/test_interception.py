"""register + enabled(): sys.monitoring discovery, prologue install, restore on exit (normal, nested, exceptional)."""
import torch
import pytest

import jitcore as jit
from jitcore.runtime.install import INTERCEPTOR
from tests.support import CountingBackend


def _step(x):
    return torch.sin(x) * 2 + 1


def _other(x):
    return x - 1


@pytest.fixture
def counting():
    return CountingBackend()


@pytest.fixture(autouse=True)
def _unregister():
    yield
    jit.unregister(_step)
    jit.unregister(_other)


def test_register_changes_nothing_outside_enabled(counting):
    original = _step.__code__
    jit.register(_step)
    x = torch.randn(3)
    torch.testing.assert_close(_step(x), torch.sin(x) * 2 + 1)
    assert _step.__code__ is original
    assert counting.graph_count == 0


def test_first_call_in_block_fires_monitoring_and_later_calls_use_prologue(counting):
    original = _step.__code__
    jit.register(_step)
    fired_before = INTERCEPTOR.monitor.fired
    x = torch.randn(3)
    with jit.enabled(backend=counting):
        first = _step(x)
        assert INTERCEPTOR.monitor.fired == fired_before + 1
        assert _step.__code__ is not original          # the prologue is installed on the instance
        assert counting.graph_count == 1               # captured from the first call's live arguments
        cache = _step.__code__.co_consts              # the dispatcher is a constant of the prologue code
        second = _step(x)
        third = _step(x)
        assert INTERCEPTOR.monitor.fired == fired_before + 1   # DISABLE: no more callbacks for this code
    assert _step.__code__ is original
    assert counting.graph_count == 1
    for out in (first, second, third):
        torch.testing.assert_close(out, torch.sin(x) * 2 + 1)
    assert any(callable(c) and getattr(c, "source", "").startswith("def ___dispatch") for c in cache)


def test_later_calls_run_the_compiled_graph(counting):
    jit.register(_step)
    ran = []

    def spy_backend(gm, example_inputs):
        def run(*args):
            ran.append(1)
            return gm.forward(*args)
        return run

    x = torch.randn(3)
    with jit.enabled(backend=spy_backend):
        _step(x)
        assert ran == []        # the first call ran natively
        _step(x)
        _step(x)
    assert len(ran) == 2


def test_exception_leaving_block_restores_code(counting):
    original = _step.__code__
    jit.register(_step)
    with pytest.raises(ValueError, match="boom"):
        with jit.enabled(backend=counting):
            _step(torch.randn(2))
            raise ValueError("boom")
    assert _step.__code__ is original
    assert not INTERCEPTOR.monitor.armed


def test_nested_blocks_restore_only_at_outermost_exit(counting):
    original = _step.__code__
    jit.register(_step)
    x = torch.randn(2)
    with jit.enabled(backend=counting):
        with jit.enabled(backend=counting):
            _step(x)
            assert _step.__code__ is not original
        assert _step.__code__ is not original
        assert INTERCEPTOR.monitor.armed
        torch.testing.assert_close(_step(x), torch.sin(x) * 2 + 1)
    assert _step.__code__ is original
    assert not INTERCEPTOR.monitor.armed


def test_second_block_reuses_cache_and_intercepts_again(counting):
    jit.register(_step)
    x = torch.randn(4)
    with jit.enabled(backend=counting):
        _step(x)
        _step(x)
    with jit.enabled(backend=counting):
        torch.testing.assert_close(_step(x), torch.sin(x) * 2 + 1)
        torch.testing.assert_close(_step(x), torch.sin(x) * 2 + 1)
    assert counting.graph_count == 1


def test_unregistered_function_is_untouched(counting):
    jit.register(_step)
    original = _other.__code__
    with jit.enabled(backend=counting):
        _other(torch.ones(1))
        _step(torch.ones(1))
        assert _other.__code__ is original
    assert counting.graph_count == 1


def test_registration_inside_open_block_is_intercepted(counting):
    x = torch.randn(3)
    with jit.enabled(backend=counting):
        jit.register(_other)
        _other(x)
        torch.testing.assert_close(_other(x), x - 1)
    assert counting.graph_count == 1


def test_registered_module_instance_is_compiled_and_others_are_not(counting):
    torch.manual_seed(0)
    model, bystander = torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    jit.register(model)
    x = torch.randn(4, 3)
    with jit.enabled(backend=counting):
        out1 = model(x)
        out2 = model(x)
        other = bystander(x)
        # interception leaves both instances as they are; the class's forward dispatches for `model` only
        assert "forward" not in model.__dict__
        assert "forward" not in bystander.__dict__
        assert counting.graph_count == 1
    assert "forward" not in model.__dict__
    assert counting.graph_count == 1
    expected = torch.nn.functional.linear(x, model.weight, model.bias)
    torch.testing.assert_close(out1, expected)
    torch.testing.assert_close(out2, expected)
    torch.testing.assert_close(other, torch.nn.functional.linear(x, bystander.weight, bystander.bias))
    jit.unregister(model)


def test_closures_recreated_per_call_are_each_intercepted(counting):
    def make(k):
        def add(v):
            return v + k
        return add

    jit.register(make(0))
    x = torch.zeros(2)
    with jit.enabled(backend=counting):
        results = []
        for k in range(3):
            fn = make(k)
            results.append(fn(x))
            results.append(fn(x))
    for k in range(3):
        torch.testing.assert_close(results[2 * k], x + k)
        torch.testing.assert_close(results[2 * k + 1], x + k)
    # one code, three closure values: the cell's contents are guarded; the second value recompiles, and like any
    # recompile (first calls in enabled() included) it makes the int a graph input: the third value reuses it
    assert counting.graph_count == 2
    jit.unregister(make(0))
