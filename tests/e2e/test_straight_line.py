"""End to end: small straight-line functions (no loops, no branches) compiled whole into exactly one graph.

Each test compiles one function with a counting backend, calls it twice on each of two input sets of the same shape
(`check_against_eager`), and requires results, input mutations and output identity equal to eager, one graph in all.
"""

import math

import torch
import torch.nn.functional as F

import jitcore as jit
from tests.support import Args, arg_sets, check_against_eager, randint, randn

#: read by `test_global_dtype_constant_matches_eager`.
DTYPE = torch.float32


# Arithmetic operators


def test_add_scalar_matches_eager():
    def f(x):
        return x + 1

    check_against_eager(f, *arg_sets((4, 3)))


def test_add_two_tensors_matches_eager():
    def f(x, y):
        return x + y

    check_against_eager(f, *arg_sets((4, 3), (4, 3)))


def test_sub_broadcast_matches_eager():
    def f(x, y):
        return x - y

    check_against_eager(f, *arg_sets((4, 3), (3,)))


def test_mul_float_scalar_matches_eager():
    def f(x):
        return x * 2.5

    check_against_eager(f, *arg_sets((4, 3)))


def test_true_div_matches_eager():
    def f(x, y):
        return x / (y.abs() + 1)

    check_against_eager(f, *arg_sets((4, 3), (4, 3)))


def test_floor_div_matches_eager():
    def f(x):
        return x // 0.5

    check_against_eager(f, *arg_sets((4, 3)))


def test_modulo_on_int_tensor_matches_eager():
    def f(x):
        return x % 3

    check_against_eager(f, (randint(4, 3, seed=1),), (randint(4, 3, seed=2),))


def test_pow_scalar_exponent_matches_eager():
    def f(x):
        return x**2

    check_against_eager(f, *arg_sets((4, 3)))


def test_rpow_scalar_base_matches_eager():
    def f(x):
        return 2**x

    check_against_eager(f, *arg_sets((4, 3)))


def test_matmul_operator_matches_eager():
    def f(x, w):
        return x @ w

    check_against_eager(f, *arg_sets((4, 3), (3, 2)))


def test_unary_negation_matches_eager():
    def f(x):
        return -x

    check_against_eager(f, *arg_sets((4, 3)))


def test_abs_builtin_matches_eager():
    def f(x):
        return abs(x)

    check_against_eager(f, *arg_sets((4, 3)))


def test_comparisons_produce_bool_tensors_matching_eager():
    def f(x, y):
        return x > y, x <= 0.0, x == y, x != 0

    check_against_eager(f, *arg_sets((4, 3), (4, 3)))


# In-place operations


def test_inplace_method_on_local_clone_matches_eager():
    def f(x):
        y = x.clone()
        y.add_(1)
        return y

    check_against_eager(f, *arg_sets((4, 3)))


def test_augmented_assignment_on_local_matches_eager():
    def f(x):
        y = x * 2
        y += 1
        return y

    check_against_eager(f, *arg_sets((4, 3)))


def test_inplace_mutation_of_input_is_seen_by_caller():
    def f(x):
        x.mul_(2)
        return x + 1

    check_against_eager(f, *arg_sets((4, 3)))


def test_inplace_mutated_input_returned_is_the_input():
    def f(x):
        x.add_(1)
        return x

    check_against_eager(f, *arg_sets((4, 3)))


# torch functions


def test_torch_cat_matches_eager():
    def f(x, y):
        return torch.cat([x, y], dim=0)

    check_against_eager(f, *arg_sets((4, 3), (2, 3)))


def test_torch_stack_matches_eager():
    def f(x, y):
        return torch.stack((x, y), dim=1)

    check_against_eager(f, *arg_sets((4, 3), (4, 3)))


def test_torch_where_matches_eager():
    def f(x, y):
        return torch.where(x > 0, x, y)

    check_against_eager(f, *arg_sets((4, 3), (4, 3)))


def test_torch_matmul_matches_eager():
    def f(x, w):
        return torch.matmul(x, w)

    check_against_eager(f, *arg_sets((4, 3), (3, 5)))


def test_torch_relu_matches_eager():
    def f(x):
        return torch.relu(x)

    check_against_eager(f, *arg_sets((4, 3)))


def test_torch_sigmoid_matches_eager():
    def f(x):
        return torch.sigmoid(x)

    check_against_eager(f, *arg_sets((4, 3)))


def test_torch_softmax_with_dim_keyword_matches_eager():
    def f(x):
        return torch.softmax(x, dim=1)

    check_against_eager(f, *arg_sets((4, 3)))


def test_torch_sum_with_dim_and_keepdim_keywords_matches_eager():
    def f(x):
        return torch.sum(x, dim=1, keepdim=True)

    check_against_eager(f, *arg_sets((4, 3)))


# Tensor methods


def test_sum_method_matches_eager():
    def f(x):
        return x.sum()

    check_against_eager(f, *arg_sets((4, 3)))


def test_mean_method_with_dim_keyword_matches_eager():
    def f(x):
        return x.mean(dim=1)

    check_against_eager(f, *arg_sets((4, 3)))


def test_view_flat_matches_eager():
    def f(x):
        return x.view(-1)

    check_against_eager(f, *arg_sets((4, 3)))


def test_reshape_with_inferred_dim_matches_eager():
    def f(x):
        return x.reshape(2, -1)

    check_against_eager(f, *arg_sets((4, 3)))


def test_transpose_matches_eager():
    def f(x):
        return x.transpose(0, 1)

    check_against_eager(f, *arg_sets((4, 3)))


def test_permute_matches_eager():
    def f(x):
        return x.permute(2, 0, 1)

    check_against_eager(f, *arg_sets((2, 3, 4)))


def test_unsqueeze_matches_eager():
    def f(x):
        return x.unsqueeze(0)

    check_against_eager(f, *arg_sets((4, 3)))


def test_squeeze_matches_eager():
    def f(x):
        return x.squeeze()

    check_against_eager(f, *arg_sets((4, 1, 3)))


def test_t_method_matches_eager():
    def f(x):
        return x.t()

    check_against_eager(f, *arg_sets((4, 3)))


def test_contiguous_after_transpose_matches_eager():
    def f(x):
        return x.t().contiguous()

    check_against_eager(f, *arg_sets((4, 3)))


def test_float_method_converts_float64_matches_eager():
    def f(x):
        return x.float()

    check_against_eager(f, *arg_sets((4, 3), dtype=torch.float64))


def test_to_float64_matches_eager():
    def f(x):
        return x.to(torch.float64)

    check_against_eager(f, *arg_sets((4, 3)))


def test_clamp_min_keyword_matches_eager():
    def f(x):
        return x.clamp(min=0)

    check_against_eager(f, *arg_sets((4, 3)))


def test_expand_matches_eager():
    def f(x):
        return x.expand(4, 3)

    check_against_eager(f, *arg_sets((4, 1)))


def test_flatten_matches_eager():
    def f(x):
        return x.flatten()

    check_against_eager(f, *arg_sets((2, 3, 4)))


# torch.nn.functional


def test_functional_relu_matches_eager():
    def f(x):
        return F.relu(x)

    check_against_eager(f, *arg_sets((4, 3)))


def test_functional_gelu_matches_eager():
    def f(x):
        return F.gelu(x)

    check_against_eager(f, *arg_sets((4, 3)))


def test_functional_softmax_matches_eager():
    def f(x):
        return F.softmax(x, dim=-1)

    check_against_eager(f, *arg_sets((4, 3)))


def test_functional_linear_with_weight_and_bias_arguments_matches_eager():
    def f(x, weight, bias):
        return F.linear(x, weight, bias)

    check_against_eager(f, *arg_sets((4, 3), (2, 3), (2,)))


def test_functional_layer_norm_matches_eager():
    def f(x, weight, bias):
        return F.layer_norm(x, (3,), weight, bias)

    check_against_eager(f, *arg_sets((4, 3), (3,), (3,)))


def test_functional_dropout_not_training_matches_eager():
    def f(x):
        return F.dropout(x, p=0.5, training=False)

    check_against_eager(f, *arg_sets((4, 3)))


def test_functional_conv2d_with_weight_argument_matches_eager():
    def f(x, weight):
        return F.conv2d(x, weight, padding=1)

    check_against_eager(f, *arg_sets((1, 2, 5, 5), (3, 2, 3, 3)))


# Indexing and slicing


def test_index_first_row_matches_eager():
    def f(x):
        return x[0]

    check_against_eager(f, *arg_sets((4, 3)))


def test_index_column_matches_eager():
    def f(x):
        return x[:, 1]

    check_against_eager(f, *arg_sets((4, 3)))


def test_slice_rows_matches_eager():
    def f(x):
        return x[1:3]

    check_against_eager(f, *arg_sets((4, 3)))


def test_ellipsis_and_none_index_matches_eager():
    def f(x):
        return x[..., None]

    check_against_eager(f, *arg_sets((4, 3)))


def test_strided_slice_matches_eager():
    def f(x):
        return x[:, ::2]

    check_against_eager(f, *arg_sets((4, 3)))


# Shapes as Python ints


def test_shape_item_arithmetic_matches_eager():
    def f(x):
        return x * (x.shape[0] * 2)

    check_against_eager(f, *arg_sets((4, 3)))


def test_size_method_matches_eager():
    def f(x):
        return x + x.size(1)

    check_against_eager(f, *arg_sets((4, 3)))


def test_dim_method_matches_eager():
    def f(x):
        return x * x.dim()

    check_against_eager(f, *arg_sets((4, 3)))


def test_len_of_tensor_matches_eager():
    def f(x):
        return x + len(x)

    check_against_eager(f, *arg_sets((4, 3)))


def test_numel_matches_eager():
    def f(x):
        return x / x.numel()

    check_against_eager(f, *arg_sets((4, 3)))


def test_view_with_shape_from_input_matches_eager():
    def f(x):
        return x.view(x.shape[0], -1)

    check_against_eager(f, *arg_sets((4, 3, 2)))


def test_returned_shape_int_matches_eager():
    def f(x):
        return x + 1, x.shape[0] * 2

    check_against_eager(f, *arg_sets((4, 3)))


# Dtypes and devices


def test_to_own_dtype_matches_eager():
    def f(x):
        return x.to(x.dtype) + 1

    check_against_eager(f, *arg_sets((4, 3)))


def test_to_own_dtype_returns_the_input_itself():
    def f(x):
        return x.to(x.dtype), x + 1

    x = randn(4, 3)
    assert f(x)[0] is x  # eager: a conversion to the same dtype is the input itself
    check_against_eager(f, *arg_sets((4, 3)))


def test_zeros_with_dtype_and_device_of_input_matches_eager():
    def f(x):
        return torch.zeros(3, dtype=x.dtype, device=x.device) + x[0]

    check_against_eager(f, *arg_sets((4, 3), dtype=torch.float64))


def test_ones_like_matches_eager():
    def f(x):
        return torch.ones_like(x) + x

    check_against_eager(f, *arg_sets((4, 3)))


def test_arange_matches_eager():
    def f(x):
        return x.sum() + torch.arange(5)

    check_against_eager(f, *arg_sets((4, 3)))


def test_global_dtype_constant_matches_eager():
    def f(x):
        return x.to(DTYPE) * 2

    check_against_eager(f, *arg_sets((4, 3), dtype=torch.float64))


# Constants and calling conventions


def test_default_argument_constant_matches_eager():
    def f(x, scale=2.0):
        return x * scale

    check_against_eager(f, *arg_sets((4, 3)))


def test_keyword_argument_at_call_time_matches_eager():
    def f(x, scale=2.0):
        return x * scale

    check_against_eager(f, Args(randn(4, 3, seed=1), scale=3.0), Args(randn(4, 3, seed=2), scale=3.0))


def test_three_tensor_inputs_match_eager():
    def f(x, y, z):
        return x * y + z

    check_against_eager(f, *arg_sets((4, 3), (4, 3), (3,)))


def test_star_args_function_matches_eager():
    def f(*xs):
        return xs[0] + xs[1]

    check_against_eager(f, *arg_sets((4, 3), (4, 3)))


def test_keyword_only_tensor_argument_matches_eager():
    def f(x, *, bias):
        return x + bias

    check_against_eager(
        f,
        Args(randn(4, 3, seed=1), bias=randn(3, seed=2)),
        Args(randn(4, 3, seed=3), bias=randn(3, seed=4)),
    )


def test_python_math_with_tensor_matches_eager():
    def f(x):
        return x * math.sqrt(2.0) + math.pi

    check_against_eager(f, *arg_sets((4, 3)))


def test_python_int_arithmetic_with_tensor_matches_eager():
    def f(x):
        n = 3 * 2 + 1
        return x * n - n // 2

    check_against_eager(f, *arg_sets((4, 3)))


# Outputs of every shape


def test_tuple_output_matches_eager():
    def f(x):
        return x + 1, x * 2

    check_against_eager(f, *arg_sets((4, 3)))


def test_list_output_matches_eager():
    def f(x):
        return [x + 1, x - 1]

    check_against_eager(f, *arg_sets((4, 3)))


def test_dict_output_matches_eager():
    def f(x, y):
        return {"sum": x + y, "diff": x - y}

    check_against_eager(f, *arg_sets((4, 3), (4, 3)))


def test_nested_tuple_dict_list_output_matches_eager():
    def f(x):
        return x + 1, {"a": x * 2, "b": (x - 1, [x / 2])}

    check_against_eager(f, *arg_sets((4, 3)))


def test_tuple_with_python_int_and_none_output_matches_eager():
    def f(x):
        return x + 1, x.shape[0], None

    check_against_eager(f, *arg_sets((4, 3)))


def test_returned_input_is_the_input_object(counting):
    def f(x):
        return x + 1, x

    x = randn(4, 3)
    assert f(x)[1] is x
    assert jit.compile(f, backend=counting)(x)[1] is x
    assert counting.graph_count == 1


def test_returned_input_matches_eager_on_two_inputs():
    def f(x):
        return x + 1, x

    check_against_eager(f, *arg_sets((4, 3)))  # also compares the output-to-input identity pattern with eager's


def test_same_tensor_returned_twice_is_one_object(counting):
    def f(x):
        y = x + 1
        return y, y

    eager = f(randn(4, 3))
    assert eager[0] is eager[1]
    compiled = jit.compile(f, backend=counting)(randn(4, 3))
    assert compiled[0] is compiled[1]
    assert counting.graph_count == 1


def test_same_tensor_returned_twice_matches_eager_on_two_inputs():
    def f(x):
        y = x + 1
        return y, y

    check_against_eager(f, *arg_sets((4, 3)))


def test_tuple_unpacking_of_chunk_matches_eager():
    def f(x):
        a, b = x.chunk(2)
        return a * b

    check_against_eager(f, *arg_sets((4, 3)))


def test_torch_split_matches_eager():
    def f(x):
        head, tail = torch.split(x, [1, 3])
        return tail - head

    check_against_eager(f, *arg_sets((4, 3)))
