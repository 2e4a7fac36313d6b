"""Capture: tensor semantics that the graph must keep: in-place ops, views, indexing, grad modes, autocast, dtypes.

Each test requires eager-equal results, eager-equal mutations of the inputs (`check_against_eager` compares the
arguments after each call) and exactly one graph. Grad-mode and autocast blocks inside the function are regions of
that one graph: the tests check `requires_grad` and dtypes of the results, which `assert_same` compares with eager.
"""

import torch

from tests.support import Args, arg_sets, check_against_eager, randint, randn


def _requires_grad(*shapes):
    return [tuple(t.requires_grad_() for t in arg_set) for arg_set in arg_sets(*shapes)]


# In-place operations and views


def test_inplace_add_on_input_is_seen_by_caller():
    def f(x, y):
        x.add_(y)
        return y * 2

    check_against_eager(f, *arg_sets((4, 3), (4, 3)))


def test_augmented_assignment_on_input_row_is_seen_by_caller():
    def f(x):
        x[0] += 1
        return x.sum()

    check_against_eager(f, *arg_sets((4, 3)))


def test_setitem_column_of_input_is_seen_by_caller():
    def f(x, v):
        x[:, 1] = v
        return x * 2

    check_against_eager(f, *arg_sets((4, 3), (4,)))


def test_masked_setitem_on_input_is_seen_by_caller():
    def f(x):
        x[x < 0] = 0.0
        return x + 1

    check_against_eager(f, *arg_sets((4, 3)))


def test_inplace_through_view_mutates_the_base_matches_eager():
    def f(x):
        y = x.clone()
        flat = y.view(-1)
        flat.mul_(2)
        return y

    check_against_eager(f, *arg_sets((4, 3)))


def test_inplace_on_transposed_view_of_input_is_seen_by_caller():
    def f(x):
        x.t()[0].zero_()
        return x * 1

    check_against_eager(f, *arg_sets((4, 3)))


def test_view_of_input_returned_aliases_like_eager():
    def f(x):
        return x.view(2, 6), x[1:]

    check_against_eager(f, *arg_sets((4, 3)))


def test_narrow_and_unsqueeze_views_matches_eager():
    def f(x):
        return x.narrow(1, 1, 2).unsqueeze(-1) * 3

    check_against_eager(f, *arg_sets((4, 3)))


# Indexing


def test_index_with_python_int_slice_and_none_matches_eager():
    def f(x, i):
        return x[i, :, None] * 2

    check_against_eager(f, (randn(3, 4, 2, seed=1), 1), (randn(3, 4, 2, seed=2), 1))


def test_index_with_negative_int_and_ellipsis_matches_eager():
    def f(x):
        return x[..., -1] + x[-1, ...].sum()

    check_against_eager(f, *arg_sets((2, 3, 4)))


def test_boolean_mask_indexing_matches_eager():
    def f(x):
        return x[x > 0] * 2

    check_against_eager(f, *arg_sets((4, 3)))


def test_integer_tensor_indexing_matches_eager():
    def f(x, idx):
        return x[idx] + 1

    check_against_eager(f, (randn(5, 3, seed=1), torch.tensor([4, 0, 2])),
                        (randn(5, 3, seed=2), torch.tensor([1, 1, 3])))


def test_index_with_list_of_ints_matches_eager():
    def f(x):
        return x[[0, 2]] - x[[3, 1]]

    check_against_eager(f, *arg_sets((4, 3)))


# Grad modes and autocast


def test_no_grad_region_result_does_not_require_grad_matches_eager():
    """Inside `torch.no_grad()` the result has requires_grad False; outside it stays True, like eager."""

    def f(x):
        y = x * 2
        with torch.no_grad():
            z = y * 3
        return y, z, z + y

    check_against_eager(f, *_requires_grad((4, 3)))


def test_enable_grad_inside_no_grad_region_matches_eager():
    """`torch.enable_grad()` nested in `torch.no_grad()` turns tracking back on for its own region only."""

    def f(x):
        with torch.no_grad():
            a = x * 2
            with torch.enable_grad():
                b = x * 3
            c = x * 4
        return a, b, c

    check_against_eager(f, *_requires_grad((4, 3)))


def test_set_grad_enabled_false_region_matches_eager():
    """`torch.set_grad_enabled(False)` used as a context manager is a region like no_grad."""

    def f(x):
        with torch.set_grad_enabled(False):
            y = x.exp()
        return y, x.exp()

    check_against_eager(f, *_requires_grad((4, 3)))


def test_grad_mode_restored_after_no_grad_region_matches_eager():
    """After the block, `torch.is_grad_enabled()` is True again, inside the same graph."""

    def f(x):
        with torch.no_grad():
            inside = torch.is_grad_enabled()
        return x * (2 if inside else 3), torch.is_grad_enabled()

    check_against_eager(f, *_requires_grad((4, 3)))


def test_autocast_cpu_bfloat16_region_matches_eager():
    """Inside the autocast region the matmul runs in bfloat16; the add after it is float32 again."""

    def f(x, w):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = x @ w
        return y, y.float() + 1

    check_against_eager(f, *arg_sets((4, 3), (3, 5)))


def test_requires_grad_attribute_decides_branch_matches_eager():
    def f(x):
        if x.requires_grad:
            return x * 2
        return x - 2

    check_against_eager(f, *arg_sets((4, 3)))


def test_detach_result_does_not_require_grad_matches_eager():
    def f(x):
        return x.detach() * 2, x * 2

    check_against_eager(f, *_requires_grad((4, 3)))


# Shapes, dtypes and devices


def test_shape_unpacking_arithmetic_matches_eager():
    def f(x):
        batch, width = x.shape
        return x.reshape(batch * width // 2, 2) + width

    check_against_eager(f, *arg_sets((4, 3)))


def test_size_split_at_half_matches_eager():
    def f(x):
        half = x.size(-1) // 2
        return x[..., :half] * x[..., half:]

    check_against_eager(f, *arg_sets((3, 6)))


def test_shape_compared_with_tuple_decides_branch_matches_eager():
    def f(x, y):
        if x.shape == (4, 3) and x.shape[-1:] == y.shape[-1:]:
            return x + y
        return x - 1

    check_against_eager(f, *arg_sets((4, 3), (3,)))


def test_shape_returned_as_torch_size_matches_eager():
    def f(x):
        y = x.unsqueeze(0)
        return y, y.shape, y.shape[1:]

    check_against_eager(f, *arg_sets((4, 3)))


def test_to_dtype_argument_matches_eager():
    def f(x, dtype):
        return x.to(dtype) * 2

    check_against_eager(f, (randn(4, 3, seed=1), torch.float64), (randn(4, 3, seed=2), torch.float64))


def test_to_dtype_of_other_tensor_matches_eager():
    def f(x, y):
        return x.to(y.dtype) + y

    check_against_eager(f, (randn(4, 3, seed=1), randint(4, 3, seed=2)), (randn(4, 3, seed=3), randint(4, 3, seed=4)))


def test_dtype_comparison_decides_branch_matches_eager():
    def f(x):
        if x.dtype == torch.float32:
            return x.double()
        return x.float()

    check_against_eager(f, (randn(4, 3, seed=1),), (randn(4, 3, seed=2, dtype=torch.float64),), expected_graphs=2)


def test_dtype_is_floating_point_decides_branch_matches_eager():
    def f(x):
        if x.dtype.is_floating_point and x.is_floating_point():
            return x * 0.5
        return x * 2

    check_against_eager(f, *arg_sets((4, 3)))


def test_device_of_input_in_factory_and_comparison_matches_eager():
    def f(x):
        ones = torch.ones(x.shape, device=x.device)
        if x.device.type == "cpu":
            return x + ones
        return x - ones

    check_against_eager(f, *arg_sets((4, 3)))


def test_torch_tensor_of_constants_matches_eager():
    def f(x):
        return x * torch.tensor([1.0, 2.0, 3.0])

    check_against_eager(f, *arg_sets((4, 3)))


def test_torch_tensor_of_shape_ints_with_dtype_matches_eager():
    def f(x):
        return torch.tensor([x.shape[0], x.shape[1], 7], dtype=torch.float32) + x.sum()

    check_against_eager(f, *arg_sets((4, 3)))


def test_new_tensor_factories_follow_input_dtype_matches_eager():
    def f(x):
        return x.new_zeros(2) + x.new_tensor([1.5, 2.5]), torch.full_like(x, 7)

    check_against_eager(f, Args(randn(4, 3, seed=1, dtype=torch.float64)))
