"""NumPy traced into graphs (capture/values/ndarray.py, numpy_rules.py): results, result types (ndarray, NumPy
scalar, tensor), dtypes, aliasing with arrays passed in, and graph counts, each compared with eager through both
doors; what cannot be traced exactly (np.random, data read into Python, tensor-array operators) runs in Python."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import jitcore as jit
from jitcore.capture.values import ndarray as ndarray_values
from tests.support import (CountingBackend, assert_same, check_against_eager, check_registered_against_eager,
                           both_doors, randn)


def _array(*shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _both(fn, *arg_sets, graphs=1):
    """check_against_eager and check_registered_against_eager; `graphs`: what torch.compile captures too."""
    counting = check_against_eager(fn, *arg_sets, expected_graphs=graphs)
    check_registered_against_eager(fn, *arg_sets)
    return counting


# -- tensors into arrays and back --------------------------------------------------------------------------------
def test_tensor_numpy_math_and_from_numpy_is_one_graph():
    def f(x):
        a = x.numpy()
        return torch.from_numpy(np.exp(a) + np.sin(a) * 2 + 1)

    _both(f, (randn(2, 3),), (randn(4, 3, seed=1),), graphs=2)


def test_ndarray_methods_reductions_and_shape_attributes():
    def f(x):
        a = x.numpy()
        b = a.reshape(3, 2).T.copy()
        return torch.as_tensor(a.sum(axis=1) + a.mean()), torch.tensor(b), a.shape[0] + a.ndim + a.size, a.shape

    _both(f, (randn(2, 3),))
    assert type(jit.compile(f, backend="eager")(randn(2, 3))[3]) is tuple


def test_shape_of_an_array_passed_in_is_a_tuple():
    def f(a):
        return a.shape, a.T.shape, np.shape(a), a.ndim, a.size, a.dtype, a.itemsize

    _both(f, (_array(2, 3),), graphs=None)


def test_returned_array_and_numpy_scalar_have_numpys_types():
    def f(x):
        a = x.numpy() * 2
        return a, a.sum(), a.max(axis=0), a[0, 1], a.astype(np.float64).mean()

    counting = _both(f, (randn(2, 3),))
    result = jit.compile(f, backend="eager")(randn(2, 3))
    assert type(result[0]) is np.ndarray and type(result[1]) is np.float32 and type(result[3]) is np.float32
    assert type(result[4]) is np.float64
    assert counting.graph_count == 1


def test_np_asarray_of_a_tensor_shares_its_memory():
    def f(x):
        a = np.asarray(x)
        a[0] = 5.0
        return x + 1

    _both(f, (randn(3),))


def test_torch_from_numpy_is_a_new_tensor_over_the_same_memory():
    def f(a):
        t = torch.from_numpy(a)
        t.add_(1)
        return t * 2, a

    _both(f, (_array(2, 3),))


# -- arrays passed in ---------------------------------------------------------------------------------------------
def test_array_argument_written_in_place_reaches_the_callers_array():
    def f(a):
        a += 1
        a[0, 0] = 7
        return a

    _both(f, (_array(2, 3),), (_array(2, 3, seed=1),))


def test_write_through_a_view_of_an_argument_reaches_it():
    def f(a):
        b = a.T
        b[0, 1] = 5.0
        return b.sum()

    _both(f, (_array(2, 3),))


def test_copy_is_not_a_view_and_ravel_is():
    def f(a):
        flat = a.flatten()
        flat[0] = 100.0
        rav = a.ravel()
        rav[1] = -100.0
        return flat, rav

    _both(f, (_array(2, 3),))


def test_reshape_of_a_copy_in_c_order_is_a_view_as_in_numpy():
    def f(a):
        b = a.T.copy()
        c = b.reshape(-1)
        c[0] = 9.0
        return b, c

    _both(f, (_array(2, 3),))


def test_numpy_scalar_read_before_a_write_keeps_its_value():
    def f(a):
        v = a[0, 1]
        a[0, 1] = 3.0
        return v, a

    _both(f, (_array(2, 3),))


def test_array_guards_recompile_on_dtype_and_shape():
    def f(a):
        return (a * 2).sum(axis=0)

    counting = CountingBackend()
    compiled = jit.compile(f, backend=counting)
    for array in (_array(2, 3), _array(2, 3, dtype=np.float32), _array(4, 3), _array(2, 3, seed=3)):
        assert_same(f(array.copy()), compiled(array.copy()))
    assert counting.graph_count <= 3


def test_read_only_array_runs_natively_with_numpys_error():
    def f(a):
        a += 1
        return a

    array = _array(3)
    array.flags.writeable = False
    with both_doors(f) as doors:
        for door in doors:
            with pytest.raises(ValueError, match="read-only"):
                door(array)


def test_global_array_mutated_in_place():
    def f(x):
        GLOBAL_ARRAY[0] += 1
        return x + torch.from_numpy(GLOBAL_ARRAY)

    GLOBAL_ARRAY[:] = 1
    expected = f(torch.ones(3))
    after_eager = GLOBAL_ARRAY.copy()
    GLOBAL_ARRAY[:] = 1
    assert_same(expected, jit.compile(f, backend="eager")(torch.ones(3)))
    assert_same(after_eager, GLOBAL_ARRAY)


GLOBAL_ARRAY = np.ones(3, dtype=np.float32)


# -- dtypes: NumPy's rules, not torch's -------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float32, np.float64, np.bool_])
def test_dtype_promotion_matches_numpy(dtype):
    def f(a):
        return a + 1, a * 1.5, a / 2, a + np.float64(1), a + np.float32(1), np.sqrt(a), a.mean(), a > 0

    array = (np.arange(6).reshape(2, 3) % 3).astype(dtype)
    _both(f, (array,), graphs=None)
    result = jit.compile(f, backend="eager")(array.copy())
    for got, want in zip(result, f(array.copy())):
        assert type(got) is type(want) and got.dtype == want.dtype


def test_creation_functions_default_to_float64_and_int64():
    def f(x):
        return np.ones(3), np.zeros((2, 2), dtype=np.float32), np.arange(4), np.linspace(0, 1, 5), x + 1

    _both(f, (randn(2),))


def test_finfo_iinfo_and_dtypes_are_constants():
    def f(x):
        a = x.numpy()
        kind = 1 if a.dtype == np.float32 else 2
        return x + np.finfo(np.float32).eps + np.iinfo(np.int8).max + kind, np.dtype("float32"), a.dtype

    _both(f, (randn(3),))


def test_numpy_functions_on_constants_fold_to_numpys_scalars():
    def f(x):
        return x * np.sqrt(2.0) + np.pi + int(np.prod(x.shape)) + float(np.float32(0.5)), np.float32(2) * 3

    _both(f, (randn(3),))


def test_stack_concatenate_where_and_linalg():
    def f(x):
        a = x.numpy()
        return np.stack([a, a]), np.concatenate((a, a), axis=1), np.where(a > 0, a, 0.0).clip(-1, 1), \
            np.linalg.norm(a), np.linalg.norm(a, axis=1)

    _both(f, (randn(2, 3),))


# -- clean breaks ------------------------------------------------------------------------------------------------
def test_np_random_runs_in_python_with_numpys_stream():
    def f(x):
        a = np.random.randn(2, 2)
        b = np.random.rand(2)
        return x + torch.from_numpy(a).float(), b.sum()

    with both_doors(f) as doors:
        for door in doors:
            np.random.seed(0)
            expected = f(torch.ones(2, 2))
            np.random.seed(0)
            assert_same(expected, door(torch.ones(2, 2)))
            assert_same(np.random.rand(), (np.random.seed(0), f(torch.ones(2, 2)), np.random.rand())[2])


def test_data_read_into_python_breaks_and_matches():
    def f(a):
        s = a.sum()
        return float(s) + s.item() + (1 if a.any() else 0)

    _both(f, (_array(3),), graphs=None)


def test_operator_between_tensor_and_array_runs_in_python():
    def f(x, a):
        return x + torch.from_numpy(a), (x * 2).numpy() + a

    _both(f, (randn(3), _array(3, dtype=np.float32)), graphs=None)


def test_ndarray_live_across_a_graph_break(capsys):
    def f(x):
        a = x.numpy() * 2
        print("between")
        return a + 1, a.sum()

    _both(f, (randn(3),), graphs=None)


def test_numpy_graph_under_aot_eager():
    def f(x, a):
        b = x.numpy() + a
        return torch.from_numpy(b * 2).sum() + x

    counting = check_against_eager(f, (randn(3), _array(3, dtype=np.float32)), backend="aot_eager")
    assert counting.graph_count == 1


def test_np_array_of_arrays_stacks_them():
    def f(a):
        return np.array([a, a * 2]), np.asarray((a, a))

    _both(f, (_array(3),))


def test_numpy_asked_again_on_other_values_where_zeros_raise():
    def f(a):
        return np.linalg.inv(a @ a.T + np.eye(2))

    _both(f, (_array(2, 3),))


def test_singular_matrix_raises_numpys_error():
    def f(a):
        return np.linalg.inv(a * 0)

    with both_doors(f) as doors:
        for door in doors:
            with pytest.raises(np.linalg.LinAlgError):
                door(_array(2, 2))


def test_integer_to_negative_integer_power_raises_as_in_numpy():
    def f(a, b):
        return a ** b

    _both(f, (np.array([2, 3]), np.array([1, 2])), (np.array([2, 3]), np.array([-1, 2])), graphs=None)


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
def test_integer_division_by_zero_matches_numpy():
    def f(a, b):
        return a // b, a % b

    _both(f, (np.array([3, 4]), np.array([0, 2])), graphs=None)


def test_explicit_dunder_calls_on_arrays():
    def f(a):
        a.__setitem__(slice(0, 2), 5.0)
        return a.__add__(1), a.__getitem__(0)

    _both(f, (_array(4),))


def test_eigenvalues_whose_dtype_depends_on_the_data_run_in_numpy():
    def f(a):
        return np.linalg.eigvals(a)

    _both(f, (np.array([[0.0, 1.0], [-1.0, 0.0]]),), (np.array([[2.0, 0.0], [0.0, 1.0]]),), graphs=None)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_overlapping_array_arguments_written_in_place_match_eager(backend):
    def f(a, b):
        a += 1
        return b * 2

    compiled = jit.compile(f, backend=backend)
    for split in ((slice(0, 4), slice(2, 6)), (slice(0, 3), slice(3, 6)), (slice(0, 4), slice(2, 6))):
        eager_base, compiled_base = np.arange(6.0), np.arange(6.0)
        assert_same(f(eager_base[split[0]], eager_base[split[1]]),
                    compiled(compiled_base[split[0]], compiled_base[split[1]]))
        assert_same(eager_base, compiled_base)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_tensor_and_its_array_live_across_a_break_stay_one_memory(backend):
    def f(x):
        a = x.numpy()
        print("between")
        a += 1
        return x * 2, a.sum()

    check_against_eager(f, (randn(3),), backend=backend, expected_graphs=None)


def test_index_out_of_range_after_a_write_that_cannot_be_undone_keeps_side_effects():
    log = []

    def f(x, a, index):
        x.mul_(2)  # more elements than the entry copies: the write cannot be put back
        log.append(1)
        return a[index]

    with both_doors(f) as doors:
        for call in (f, *doors):
            log.clear()
            x = torch.ones(70000)
            with pytest.raises(IndexError, match="out of bounds"):
                call(x, np.arange(3.0), np.array([5]))
            assert log == [1] and x[0].item() == 2.0


def test_numpy_scalar_arguments_are_guarded_constants():
    def f(x, scale, bias):
        return x * scale + bias, scale * 2

    counting = _both(f, (randn(3), np.float32(0.5), np.int64(2)))
    compiled = jit.compile(f, backend=counting)
    assert_same(f(randn(3), np.float64(0.5), np.int64(2)), compiled(randn(3), np.float64(0.5), np.int64(2)))
    assert_same(f(randn(3), np.float32(0.25), np.int64(2)), compiled(randn(3), np.float32(0.25), np.int64(2)))


def test_in_place_numpy_functions_write_the_array():
    def f(a):
        np.copyto(a, 1.5)
        np.fill_diagonal(a, 5.0)
        np.put(a, [0, 4], [7.0, -1.0])
        a.sort(axis=0)
        return a

    _both(f, (_array(3, 3),))


def test_a_write_numpy_makes_and_torch_numpy_would_not_runs_in_numpy(monkeypatch):
    # NumPy is asked on read-only examples first: where it writes one, the graph must write that array too
    monkeypatch.setattr(ndarray_values, "_TARGETS", {})
    monkeypatch.setattr(ndarray_values.tnp, "copyto", lambda dst, src, **kwargs: None)

    def f(a):
        np.copyto(a, 1.5)
        return a * 2

    _both(f, (_array(3),), graphs=None)


def test_arrays_of_changing_sizes_share_one_dynamic_entry():
    def f(a):
        return (a * 2).sum(axis=0), a.shape, a.T.copy().reshape(-1)

    counting = CountingBackend()
    compiled = jit.compile(f, backend=counting)
    for rows in (2, 4, 5, 7):
        assert_same(f(_array(rows, 3)), compiled(_array(rows, 3)))
    assert counting.graph_count == 2
