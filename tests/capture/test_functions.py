"""Capture: calls to user functions, methods, closures and builtins on Python values, inlined into one graph.

Each test calls something from inside the compiled function: a user function with every kind of argument binding,
a partial, a lambda, a nested function or closure (reading and writing `nonlocal` cells), a method through `super()`,
a static or class method, a small recursion, or a builtin on Python values. Results must equal eager, with one graph.
"""

import functools

import torch
from torch import nn

import jitcore as jit
from tests.support import Args, arg_sets, assert_same, check_against_eager, randn


def _affine(x, scale, shift):
    return x * scale + shift


def _with_defaults(x, scale=2.0, shift=1.0):
    return x * scale + shift


def _keyword_only(x, *, scale, shift=0.5):
    return x * scale - shift


def _sum_all(*tensors):
    total = tensors[0]
    for t in tensors[1:]:
        total = total + t
    return total


def _apply_options(x, **options):
    for name, value in options.items():
        x = x * value if name.startswith("mul") else x + value
    return x


def _factorial(n):
    return 1 if n <= 1 else n * _factorial(n - 1)


def _repeat_double(x, n):
    if n == 0:
        return x
    return _repeat_double(x * 2, n - 1)


class _Base(nn.Module):
    def forward(self, x):
        return x * 2


class _Child(_Base):
    def forward(self, x):
        return super().forward(x) + 1


class _Math:
    offset = 3.0

    @staticmethod
    def double(x):
        return x * 2

    @classmethod
    def shifted(cls, x):
        return x + cls.offset

    def __init__(self, scale):
        self.scale = scale

    def apply(self, x):
        return self.double(x) * self.scale


# Calls to user functions


def test_call_with_positional_arguments_matches_eager():
    def f(x):
        return _affine(x, 2.0, 1.0)

    check_against_eager(f, *arg_sets((4, 3)))


def test_call_with_keyword_arguments_matches_eager():
    def f(x):
        return _affine(x, shift=-1.0, scale=3.0)

    check_against_eager(f, *arg_sets((4, 3)))


def test_call_using_default_arguments_matches_eager():
    def f(x):
        return _with_defaults(x) + _with_defaults(x, shift=5.0)

    check_against_eager(f, *arg_sets((4, 3)))


def test_call_with_keyword_only_arguments_matches_eager():
    def f(x):
        return _keyword_only(x, scale=4.0) + _keyword_only(x, scale=1.0, shift=2.0)

    check_against_eager(f, *arg_sets((4, 3)))


def test_call_with_star_args_matches_eager():
    def f(x, y):
        return _sum_all(x, y, x * y)

    check_against_eager(f, *arg_sets((4, 3), (4, 3)))


def test_call_with_star_kwargs_matches_eager():
    def f(x):
        return _apply_options(x, mul_a=2.0, add_b=1.0, mul_c=-1.0)

    check_against_eager(f, *arg_sets((4, 3)))


def test_call_unpacking_tuple_and_dict_into_arguments_matches_eager():
    def f(x):
        args = (x, 3.0)
        kwargs = {"shift": 0.25}
        return _affine(*args, **kwargs)

    check_against_eager(f, *arg_sets((4, 3)))


def test_compiled_function_with_star_args_and_kwargs_matches_eager():
    def f(*xs, scale=1.0, **extra):
        return sum(xs) * scale + extra["bias"]

    check_against_eager(f, Args(randn(3, seed=1), randn(3, seed=2), scale=2.0, bias=randn(3, seed=3)))


def test_functools_partial_call_matches_eager():
    def f(x):
        scale_by_three = functools.partial(_affine, scale=3.0, shift=0.0)
        return scale_by_three(x)

    check_against_eager(f, *arg_sets((4, 3)))


def test_functools_partial_passed_as_argument_matches_eager():
    def f(x, fn):
        return fn(x) + 1

    partial = functools.partial(_affine, scale=2.0, shift=-1.0)
    check_against_eager(f, (randn(4, 3, seed=1), partial), (randn(4, 3, seed=2), partial))


def test_lambda_defined_inside_matches_eager():
    def f(x):
        square = lambda t: t * t  # noqa: E731
        return square(x) + square(x + 1)

    check_against_eager(f, *arg_sets((4, 3)))


def test_lambda_passed_as_argument_matches_eager():
    def f(x, fn):
        return fn(x) * 2

    fn = lambda t: t.relu() + 1  # noqa: E731
    check_against_eager(f, (randn(4, 3, seed=1), fn), (randn(4, 3, seed=2), fn))


def test_nested_function_reading_argument_of_outer_matches_eager():
    def f(x, y):
        def combine(t):
            return t * y

        return combine(x) + combine(x + 1)

    check_against_eager(f, *arg_sets((4, 3), (4, 3)))


def test_closure_writing_nonlocal_counter_matches_eager():
    def f(x):
        calls = 0

        def step(t):
            nonlocal calls
            calls += 1
            return t * 2

        y = step(step(x))
        return y + calls

    check_against_eager(f, *arg_sets((4, 3)))


def test_closure_writing_nonlocal_tensor_matches_eager():
    def f(x):
        acc = torch.zeros_like(x)

        def add(t):
            nonlocal acc
            acc = acc + t

        for i in range(3):
            add(x * i)
        return acc

    check_against_eager(f, *arg_sets((4, 3)))


def test_closure_sees_cell_rebound_after_definition_matches_eager():
    def f(x):
        k = 1.0

        def scaled(t):
            return t * k

        k = 5.0
        return scaled(x)

    check_against_eager(f, *arg_sets((4, 3)))


def test_nonlocal_written_through_two_levels_of_nesting_matches_eager():
    def f(x):
        total = x * 0

        def outer():
            def inner(t):
                nonlocal total
                total = total + t

            inner(x)
            inner(x * 2)

        outer()
        return total

    check_against_eager(f, *arg_sets((4, 3)))


def test_closure_made_in_loop_captures_each_value_matches_eager():
    def f(x):
        fns = []
        for i in range(3):
            def scaled(t, i=i):
                return t * i

            fns.append(scaled)
        return sum(fn(x) for fn in fns)

    check_against_eager(f, *arg_sets((4, 3)))


def test_super_forward_call_matches_eager():
    check_against_eager(_Child(), *arg_sets((4, 3)))


def test_staticmethod_and_classmethod_calls_matches_eager():
    def f(x):
        return _Math.double(x) + _Math.shifted(x)

    check_against_eager(f, *arg_sets((4, 3)))


def test_method_calling_staticmethod_through_self_matches_eager():
    def f(x, helper):
        return helper.apply(x)

    helper = _Math(0.5)
    check_against_eager(f, (randn(4, 3, seed=1), helper), (randn(4, 3, seed=2), helper))


def test_recursion_on_python_int_matches_eager():
    def f(x):
        return x * _factorial(4)

    check_against_eager(f, *arg_sets((4, 3)))


def test_recursion_building_tensor_ops_matches_eager():
    def f(x):
        return _repeat_double(x, 3)

    check_against_eager(f, *arg_sets((4, 3)))


def test_function_returning_multiple_values_matches_eager():
    def split(t):
        return t.max(), t.min()

    def f(x):
        hi, lo = split(x)
        return hi - lo

    check_against_eager(f, *arg_sets((4, 3)))


def test_functools_wraps_decorated_helper_matches_eager():
    def add_one(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return fn(*args, **kwargs) + 1

        return wrapper

    @add_one
    def double(t):
        return t * 2

    def f(x):
        return double(x)

    check_against_eager(f, *arg_sets((4, 3)))


# Builtins on Python values


def test_len_of_list_and_tuple_matches_eager():
    def f(x):
        items = [1, 2, 3]
        return x * len(items) + len((x, x))

    check_against_eager(f, *arg_sets((4, 3)))


def test_min_and_max_of_python_ints_matches_eager():
    def f(x):
        return x * min(3, x.shape[0], 7) + max(x.shape)

    check_against_eager(f, *arg_sets((4, 3)))


def test_min_and_max_of_list_of_floats_matches_eager():
    def f(x):
        scales = [0.5, 2.5, 1.5]
        return x * max(scales) - min(scales)

    check_against_eager(f, *arg_sets((4, 3)))


def test_abs_of_python_number_matches_eager():
    def f(x, shift):
        return x + abs(shift)

    check_against_eager(f, (randn(4, 3, seed=1), -2.5), (randn(4, 3, seed=2), -2.5))


def test_sum_of_python_ints_matches_eager():
    def f(x):
        return x * sum([1, 2, 3]) + sum(range(4))

    check_against_eager(f, *arg_sets((4, 3)))


def test_list_of_range_matches_eager():
    def f(x):
        dims = list(range(x.dim()))
        return x.permute(*reversed(dims))

    check_against_eager(f, *arg_sets((2, 3, 4)))


def test_int_float_and_bool_conversions_matches_eager():
    def f(x):
        half = int(x.shape[0] / 2)
        ratio = float(x.shape[1])
        flag = bool(x.shape[0] - 4)
        return x[:half] * ratio + (1 if flag else 2)

    check_against_eager(f, *arg_sets((4, 3)))


def test_round_of_python_float_matches_eager():
    def f(x):
        return x * round(2.6) + round(1.23456, 2)

    check_against_eager(f, *arg_sets((4, 3)))


def test_divmod_and_pow_of_python_ints_matches_eager():
    def f(x):
        q, r = divmod(x.shape[0] * 7, 3)
        return x * q + pow(r, 2)

    check_against_eager(f, *arg_sets((4, 3)))


def test_str_of_python_int_as_dict_key_matches_eager():
    def f(x, index):
        branches = {"0": x + 1, "1": x * 2}
        return branches[str(index)]

    check_against_eager(f, (randn(4, 3, seed=1), 1), (randn(4, 3, seed=2), 1))


def test_getattr_with_name_and_default_matches_eager():
    def f(x, helper):
        return x * getattr(helper, "scale") + getattr(helper, "missing", 1.0)

    helper = _Math(3.0)
    check_against_eager(f, (randn(4, 3, seed=1), helper), (randn(4, 3, seed=2), helper))


def test_setattr_on_object_created_inside_matches_eager():
    def f(x):
        holder = _Math(1.0)
        setattr(holder, "scale", 4.0)
        return holder.apply(x)

    check_against_eager(f, *arg_sets((4, 3)))


def test_hasattr_on_object_created_inside_matches_eager():
    def f(x):
        helper = _Math(2.0)
        if hasattr(helper, "scale") and not hasattr(helper, "nothing"):
            return x * helper.scale
        return x - 1

    check_against_eager(f, *arg_sets((4, 3)))


def test_type_identity_check_matches_eager():
    def f(x, n):
        if type(n) is int:
            return x * n
        return x / n

    check_against_eager(f, (randn(4, 3, seed=1), 3), (randn(4, 3, seed=2), 3))


def test_sorted_of_python_ints_matches_eager():
    def f(x):
        order = sorted([2, 0, 1], reverse=True)
        return x[:, order]

    check_against_eager(f, *arg_sets((4, 3)))


def test_sorted_with_key_function_matches_eager():
    def f(xs):
        ordered = sorted(xs, key=lambda t: t.shape[0])
        return torch.cat(ordered)

    check_against_eager(f, ([randn(3, seed=1), randn(1, seed=2), randn(2, seed=3)],))


def test_map_over_tensors_matches_eager():
    def f(xs):
        return list(map(torch.relu, xs))

    check_against_eager(f, ([randn(3, seed=1), randn(2, seed=2)],))


def test_map_with_lambda_over_ints_matches_eager():
    def f(x):
        sizes = tuple(map(lambda n: n * 2, x.shape))
        return x.repeat(2, 2).reshape(sizes)

    check_against_eager(f, *arg_sets((2, 3)))


def test_filter_over_list_matches_eager():
    def f(x):
        keep = list(filter(lambda n: n % 2 == 1, range(5)))
        return x[:, :2] * len(keep) + keep[-1]

    check_against_eager(f, *arg_sets((4, 3)))


def test_zip_of_names_and_tensors_matches_eager():
    def f(x, y):
        return [t * n for n, t in zip((1, 2), (x, y))]

    check_against_eager(f, *arg_sets((4, 3), (4, 3)))


def test_enumerate_over_tuple_of_tensors_matches_eager():
    def f(x, y):
        total = 0
        for i, t in enumerate((x, y)):
            total = total + t * (i + 1)
        return total

    check_against_eager(f, *arg_sets((4, 3), (4, 3)))


def test_isinstance_with_tuple_of_types_on_python_value_matches_eager():
    def f(x, size):
        if isinstance(size, (tuple, list)):
            return x.reshape(*size)
        return x.reshape(size, -1)

    check_against_eager(f, (randn(4, 3, seed=1), (2, 6)), (randn(4, 3, seed=2), (2, 6)))


# Strings


def test_percent_formatting_of_constant_as_dict_key_matches_eager():
    def f(x):
        layers = {"layer0": x + 1, "layer1": x * 2}
        return layers["layer%d" % 1]

    check_against_eager(f, *arg_sets((4, 3)))


def test_str_format_method_as_dict_key_matches_eager():
    def f(x):
        layers = {"block_0": x + 1, "block_1": x * 2}
        return layers["block_{}".format(0)]

    check_against_eager(f, *arg_sets((4, 3)))


def test_f_string_keys_in_loop_matches_eager():
    def f(x):
        out = {}
        for i in range(2):
            out[f"out_{i}"] = x * i
        return out

    check_against_eager(f, *arg_sets((4, 3)))


def test_f_string_with_format_spec_returned_matches_eager():
    def f(x):
        return x + 1, f"{x.shape[0]:03d}-{2.5:.1f}"

    check_against_eager(f, *arg_sets((4, 3)))


def test_string_methods_on_constants_matches_eager():
    def f(x, name):
        if name.upper().startswith("RE") and "lu" in name:
            return torch.relu(x)
        return x - 1

    check_against_eager(f, (randn(4, 3, seed=1), "relu"), (randn(4, 3, seed=2), "relu"))


def test_compiled_bound_method_of_user_object_matches_eager(counting):
    helper = _Math(2.0)
    compiled = jit.compile(helper.apply, backend=counting)
    for seed in (1, 2):
        x = randn(4, 3, seed=seed)
        assert_same(helper.apply(x), compiled(x))
    assert counting.graph_count == 1


def test_max_and_min_over_generator_expressions_of_shapes_matches_eager():
    def f(x, ys):
        widest = max(t.shape[-1] for t in ys)
        return x * widest + min(i * 2 for i in range(1, 4)) + max(3, x.shape[0])

    check_against_eager(f, (randn(4, seed=1), [randn(2, 3, seed=2), randn(5, seed=3)]), expected_graphs=1)


def test_break_inside_a_loop_before_other_loops_matches_eager(counting):
    """Regression (differential seed 645 family): a break in one loop must not corrupt later loops' iterators."""
    def f(x, w):
        for row in x:
            k = row.sum().item()
        y = w[0]
        for a in (w, x):
            y = y + a.sum()
        return y + k

    x, w = randn(4, 5, seed=1), randn(5, 6, seed=2)
    compiled = jit.compile(f, backend=counting)
    torch.testing.assert_close(compiled(x, w), f(x, w))
    torch.testing.assert_close(compiled(x, w), f(x, w))
