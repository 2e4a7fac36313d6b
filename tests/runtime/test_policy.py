"""The recompile policy: which Python numbers become dynamic after a miss, `dynamic=False`, and what one capture is
told is dynamic (`RecompilePolicy.dynamic()`)."""
import torch

import jitcore as jit
from tests.support import randn


def _scale(x, n):
    return x * n


def _policy(compiled):
    return compiled._jitcore_cache.policy


def test_an_int_that_made_an_entry_miss_is_dynamic_from_then_on(counting):
    compiled = jit.compile(_scale, backend=counting)
    for n in (2, 3, 4, 5):
        torch.testing.assert_close(compiled(randn(3, seed=n), n), _scale(randn(3, seed=n), n))
    assert counting.graph_count == 2
    assert [path[0] for path in _policy(compiled).dynamic().numbers] == [("local", "n")]


def test_dynamic_false_keeps_every_number_a_constant(counting):
    compiled = jit.compile(_scale, backend=counting, dynamic=False)
    for n in (2, 3, 4):
        torch.testing.assert_close(compiled(randn(3, seed=n), n), _scale(randn(3, seed=n), n))
    assert counting.graph_count == 3
    assert _policy(compiled).dynamic().numbers == frozenset()


def test_a_refused_dynamic_float_becomes_a_constant_once(counting):
    compiled = jit.compile(_scale, backend=counting)
    compiled(randn(3, seed=1), 2.0)
    compiled(randn(3, seed=2), 0.5)
    policy = _policy(compiled)
    assert policy.dynamic().numbers
    assert policy.refuse_dynamic_floats() is True
    assert policy.dynamic().numbers == frozenset()
    assert policy.refuse_dynamic_floats() is False
