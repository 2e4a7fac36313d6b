"""End to end: when a compiled function recompiles, when it reuses its cache, the cache limit, and bad arguments.

Each recompile test changes one thing a guard watches (shape, dtype, requires_grad, a constant argument, a global,
grad mode, the default dtype), compares every call with eager (`compare_call`) and checks the backend's graph count
after each call. The last section checks that `jit.compile` rejects bad arguments at once, with a `JitError`.
"""

import pytest
import torch
import torch.nn.functional as F

import jitcore as jit
from tests.support import assert_same, compare_call, randn

#: a global constant read by `_scaled_by_global`; the test that changes it restores it.
SCALE = 2.0


def _scaled_by_global(x):
    return x * SCALE


# Tensor properties


def test_new_shape_recompiles(counting):
    def f(x):
        return x * 2 + 1

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (randn(4, 3, seed=1),))
    assert counting.graph_count == 1
    compare_call(f, compiled, (randn(5, 3, seed=2),))
    assert counting.graph_count == 2


def test_same_shape_with_new_values_hits_the_cache(counting):
    def f(x):
        return x * 2 + 1

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (randn(4, 3, seed=1),))
    compare_call(f, compiled, (randn(4, 3, seed=2),))
    compare_call(f, compiled, (randn(4, 3, seed=3),))
    assert counting.graph_count == 1


def test_first_shape_again_after_a_recompile_hits_the_cache(counting):
    def f(x):
        return x * 2 + 1

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (randn(4, 3, seed=1),))
    compare_call(f, compiled, (randn(5, 3, seed=2),))
    compare_call(f, compiled, (randn(4, 3, seed=3),))
    assert counting.graph_count == 2


def test_new_dtype_recompiles(counting):
    def f(x):
        return x * 2 + 1

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (randn(4, 3, seed=1),))
    assert counting.graph_count == 1
    compare_call(f, compiled, (randn(4, 3, seed=2, dtype=torch.float64),))
    assert counting.graph_count == 2
    compare_call(f, compiled, (randn(4, 3, seed=3),))
    assert counting.graph_count == 2


def test_requires_grad_change_recompiles(counting):
    def f(x):
        return (x * 2).sum(dim=1)

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (randn(4, 3, seed=1),))
    assert counting.graph_count == 1
    result = compare_call(f, compiled, (randn(4, 3, seed=2).requires_grad_(),))
    assert result.requires_grad
    assert counting.graph_count == 2


# Python constants passed as arguments


def test_changed_int_argument_recompiles(counting):
    def f(x, n):
        return x * n

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (randn(4, 3, seed=1), 2))
    assert counting.graph_count == 1
    compare_call(f, compiled, (randn(4, 3, seed=2), 3))
    assert counting.graph_count == 2
    compare_call(f, compiled, (randn(4, 3, seed=3), 2))
    assert counting.graph_count == 2


def test_changed_float_argument_recompiles(counting):
    def f(x, scale):
        return x * scale

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (randn(4, 3, seed=1), 2.0))
    assert counting.graph_count == 1
    compare_call(f, compiled, (randn(4, 3, seed=2), 0.5))
    assert counting.graph_count == 2


def test_changed_string_argument_recompiles(counting):
    def f(x, approximate):
        return F.gelu(x, approximate=approximate)

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (randn(4, 3, seed=1), "none"))
    assert counting.graph_count == 1
    compare_call(f, compiled, (randn(4, 3, seed=2), "tanh"))
    assert counting.graph_count == 2
    compare_call(f, compiled, (randn(4, 3, seed=3), "none"))
    assert counting.graph_count == 2


def test_none_then_tensor_argument_recompiles(counting):
    def f(x, weight, bias):
        return F.linear(x, weight, bias)

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (randn(4, 3, seed=1), randn(2, 3, seed=2), None))
    assert counting.graph_count == 1
    compare_call(f, compiled, (randn(4, 3, seed=3), randn(2, 3, seed=4), randn(2, seed=5)))
    assert counting.graph_count == 2
    compare_call(f, compiled, (randn(4, 3, seed=6), randn(2, 3, seed=7), None))
    assert counting.graph_count == 2


# Globals and torch global state


def test_changed_global_constant_recompiles(counting):
    global SCALE
    compiled = jit.compile(_scaled_by_global, backend=counting)
    compare_call(_scaled_by_global, compiled, (randn(4, 3, seed=1),))
    assert counting.graph_count == 1
    try:
        SCALE = 3.0
        result = compare_call(_scaled_by_global, compiled, (randn(4, 3, seed=2),))
        assert_same(randn(4, 3, seed=2) * 3.0, result)
        assert counting.graph_count == 2
    finally:
        SCALE = 2.0
    compare_call(_scaled_by_global, compiled, (randn(4, 3, seed=3),))
    assert counting.graph_count == 2


def test_grad_mode_change_recompiles(counting):
    def f(x, weight):
        return x @ weight

    weight = randn(3, 2, seed=9).requires_grad_()
    compiled = jit.compile(f, backend=counting)
    assert compare_call(f, compiled, (randn(4, 3, seed=1), weight)).requires_grad
    assert counting.graph_count == 1
    with torch.no_grad():
        assert not compare_call(f, compiled, (randn(4, 3, seed=2), weight)).requires_grad
    assert counting.graph_count == 2


def test_default_dtype_change_recompiles_a_tensor_factory(counting):
    def f(x):
        return x.sum() + torch.ones(3)

    compiled = jit.compile(f, backend=counting)
    assert compare_call(f, compiled, (randn(4, 3, seed=1),)).dtype == torch.float32
    assert counting.graph_count == 1
    previous = torch.get_default_dtype()
    try:
        torch.set_default_dtype(torch.float64)
        assert compare_call(f, compiled, (randn(4, 3, seed=2),)).dtype == torch.float64
    finally:
        torch.set_default_dtype(previous)
    assert counting.graph_count == 2


# Cache limit


def test_cache_limit_bounds_the_graph_count_and_results_stay_eager_equal(counting):
    def f(x):
        return x * 2 + 1

    compiled = jit.compile(f, backend=counting, cache_limit=2)
    for rows in (2, 3, 4, 5):
        compare_call(f, compiled, (randn(rows, 3, seed=rows),))
    assert counting.graph_count == 2


def test_cached_shape_still_hits_after_the_cache_limit_is_reached(counting):
    def f(x):
        return x * 2 + 1

    compiled = jit.compile(f, backend=counting, cache_limit=2)
    for rows in (2, 3, 4, 5, 2, 3):
        compare_call(f, compiled, (randn(rows, 3, seed=rows + 10),))
    assert counting.graph_count == 2


# Bad arguments to jit.compile: rejected at once, by name


def test_compile_of_a_non_callable_raises_jit_error_mentioning_callable():
    with pytest.raises(jit.JitError, match="(?i)callable"):
        jit.compile(3)


def test_compile_with_an_unknown_backend_name_raises_at_compile_time():
    def f(x):
        return x + 1

    with pytest.raises(jit.JitError, match="no_such"):
        jit.compile(f, backend="no_such")


def test_compile_of_a_generator_function_raises_jit_error_mentioning_generator():
    def gen(x):
        yield x + 1

    with pytest.raises(jit.JitError, match="(?i)generator"):
        jit.compile(gen, backend="eager")


@pytest.mark.parametrize("bad_limit", [0, -1, 1.5, "2"], ids=["zero", "negative", "float", "str"])
def test_compile_with_a_bad_cache_limit_raises_jit_error_naming_cache_limit(bad_limit):
    def f(x):
        return x + 1

    with pytest.raises(jit.JitError, match="cache_limit"):
        jit.compile(f, backend="eager", cache_limit=bad_limit)


def test_compile_with_a_non_bool_fullgraph_raises_jit_error_naming_fullgraph():
    def f(x):
        return x + 1

    with pytest.raises(jit.JitError, match="fullgraph"):
        jit.compile(f, backend="eager", fullgraph="yes")
