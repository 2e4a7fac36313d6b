"""Capture: control flow decided by Python values (constants, shapes, flags, types, Python ints) in one graph.

Each test compiles a few lines whose `if`, `for`, `while`, `break`/`continue` or boolean operator depends only on
Python values known while tracing, runs it against eager with `check_against_eager`, and requires exactly one graph
per distinct guarded input (a graph break would run the frame natively and leave the backend with no graph).
"""

import torch
from torch import nn

from tests.support import Args, arg_sets, check_against_eager, randn


class _Scale(nn.Module):
    def __init__(self, factor: float) -> None:
        super().__init__()
        self.factor = factor

    def forward(self, x):
        return x * self.factor


class _WithBias:
    def __init__(self) -> None:
        self.bias = 1.5


class _WithoutBias:
    pass


# Branches on Python values


def test_if_on_local_int_constant_takes_the_true_branch_matches_eager():
    def f(x):
        k = 3
        if k > 2:
            return x * 2
        return x - 1

    check_against_eager(f, *arg_sets((4, 3)))


def test_if_on_first_dimension_size_matches_eager():
    def f(x):
        if x.shape[0] > 2:
            return x * 2
        return x - 1

    check_against_eager(f, (randn(4, 3, seed=1),), (randn(1, 3, seed=2),), expected_graphs=2)


def test_if_on_ndim_matches_eager():
    def f(x):
        if x.ndim == 3:
            return x.sum(dim=0)
        return x + 1

    check_against_eager(f, (randn(2, 4, 3, seed=1),), (randn(4, 3, seed=2),), expected_graphs=2)


def test_if_argument_is_none_matches_eager():
    def f(x, bias=None):
        if bias is None:
            return x * 2
        return x + bias

    check_against_eager(f, (randn(4, 3, seed=1), None), (randn(4, 3, seed=2), None))


def test_if_argument_is_not_none_with_tensor_matches_eager():
    def f(x, bias=None):
        if bias is not None:
            x = x + bias
        return x * 2

    check_against_eager(f, *arg_sets((4, 3), (3,)))


def test_if_isinstance_of_python_number_matches_eager():
    def f(x, scale):
        if isinstance(scale, int):
            return x * (scale + 1)
        return x / scale

    check_against_eager(f, (randn(4, 3, seed=1), 2), (randn(4, 3, seed=2), 2.5), expected_graphs=2)


def test_if_isinstance_tensor_matches_eager():
    def f(x, other):
        if isinstance(other, torch.Tensor):
            return x + other
        return x + 1

    check_against_eager(f, *arg_sets((4, 3), (4, 3)))


def test_if_isinstance_with_tuple_of_types_matches_eager():
    def f(x, items):
        if isinstance(items, (list, tuple)):
            return x + len(items)
        return x - 1

    check_against_eager(f, (randn(4, 3, seed=1), (1, 2, 3)), (randn(4, 3, seed=2), (1, 2, 3)))


def test_if_hasattr_on_argument_object_matches_eager():
    def f(x, obj):
        if hasattr(obj, "bias"):
            return x + obj.bias
        return x - 1

    check_against_eager(f, (randn(4, 3, seed=1), _WithBias()), (randn(4, 3, seed=2), _WithoutBias()),
                        expected_graphs=2)


def test_if_on_bool_flag_argument_matches_eager():
    def f(x, flag):
        if flag:
            return x.relu()
        return x.tanh()

    check_against_eager(f, (randn(4, 3, seed=1), True), (randn(4, 3, seed=2), False), expected_graphs=2)


def test_if_on_comparison_of_python_int_arguments_matches_eager():
    def f(x, n):
        if n % 2 == 0 and n > 3:
            return x * n
        return x - n

    check_against_eager(f, (randn(4, 3, seed=1), 4), (randn(4, 3, seed=2), 3), expected_graphs=2)


def test_if_elif_else_chain_on_python_int_matches_eager():
    def f(x, mode):
        if mode == 0:
            y = x + 1
        elif mode == 1:
            y = x * 2
        else:
            y = x - 3
        return y

    check_against_eager(f, (randn(4, 3, seed=1), 1), (randn(4, 3, seed=2), 2), expected_graphs=2)


def test_if_on_string_argument_equality_matches_eager():
    def f(x, activation):
        if activation == "relu":
            return torch.relu(x)
        return torch.sigmoid(x)

    check_against_eager(f, (randn(4, 3, seed=1), "relu"), (randn(4, 3, seed=2), "relu"))


def test_if_on_length_of_list_argument_matches_eager():
    def f(xs):
        if len(xs) > 1:
            return xs[0] + xs[1]
        return xs[0] * 2

    check_against_eager(f, ([randn(4, 3, seed=1), randn(4, 3, seed=2)],), ([randn(4, 3, seed=3)],),
                        expected_graphs=2)


def test_assert_on_python_condition_passes_matches_eager():
    def f(x):
        assert x.shape[1] == 3, "expects three columns"
        return x * 2

    check_against_eager(f, *arg_sets((4, 3)))


# for loops


def test_for_over_range_matches_eager():
    def f(x):
        for i in range(3):
            x = x + i
        return x

    check_against_eager(f, *arg_sets((4, 3)))


def test_for_over_range_with_start_stop_step_from_shape_matches_eager():
    def f(x):
        total = x[0] * 0
        for i in range(1, x.shape[0], 2):
            total = total + x[i]
        return total

    check_against_eager(f, *arg_sets((5, 3)))


def test_for_over_list_of_tensors_matches_eager():
    def f(xs):
        total = 0
        for t in xs:
            total = total + t.sum()
        return total

    check_against_eager(f, ([randn(2, 3, seed=1), randn(3, 3, seed=2)],), ([randn(2, 3, seed=3), randn(3, 3, seed=4)],))


def test_for_over_tuple_of_constants_matches_eager():
    def f(x):
        for scale in (0.5, 2.0, -1.0):
            x = x * scale + 1
        return x

    check_against_eager(f, *arg_sets((4, 3)))


def test_for_over_zip_of_two_lists_matches_eager():
    def f(xs, ws):
        out = []
        for x, w in zip(xs, ws):
            out.append(x * w)
        return out

    xs = [randn(3, seed=1), randn(3, seed=2)]
    ws = [randn(3, seed=3), randn(3, seed=4)]
    check_against_eager(f, (xs, ws))


def test_for_over_enumerate_list_matches_eager():
    def f(xs):
        total = xs[0] * 0
        for i, t in enumerate(xs):
            total = total + t * i
        return total

    check_against_eager(f, ([randn(4, seed=1), randn(4, seed=2), randn(4, seed=3)],))


def test_for_over_enumerate_with_start_matches_eager():
    def f(x):
        for i, scale in enumerate([2.0, 3.0], start=1):
            x = x * scale - i
        return x

    check_against_eager(f, *arg_sets((4, 3)))


def test_for_over_reversed_list_matches_eager():
    def f(xs):
        out = []
        for t in reversed(xs):
            out.append(t + len(out))
        return torch.stack(out)

    check_against_eager(f, ([randn(3, seed=1), randn(3, seed=2), randn(3, seed=3)],))


def test_for_over_reversed_range_matches_eager():
    def f(x):
        for i in reversed(range(3)):
            x = x * 2 - i
        return x

    check_against_eager(f, *arg_sets((4, 3)))


def test_for_over_dict_items_matches_eager():
    def f(x, weights):
        out = {}
        for name, w in weights.items():
            out[name] = x @ w
        return out

    weights = {"a": randn(3, 2, seed=1), "b": randn(3, 4, seed=2)}
    check_against_eager(f, (randn(4, 3, seed=3), weights))


def test_for_over_dict_keys_matches_eager():
    def f(x, weights):
        for key in weights.keys():
            x = x + weights[key]
        return x

    weights = {"a": randn(3, seed=1), "b": randn(3, seed=2)}
    check_against_eager(f, (randn(4, 3, seed=3), weights))


def test_for_over_dict_values_matches_eager():
    def f(x, weights):
        for w in weights.values():
            x = x * w
        return x

    weights = {"a": randn(3, seed=1), "b": randn(3, seed=2)}
    check_against_eager(f, (randn(4, 3, seed=3), weights))


def test_for_over_dict_directly_iterates_keys_matches_eager():
    def f(x):
        config = {"double": 2.0, "shift": 1.0}
        for key in config:
            x = x * config[key] if key == "double" else x + config[key]
        return x

    check_against_eager(f, *arg_sets((4, 3)))


def test_for_over_module_list_is_unrolled_matches_eager():
    class Stack(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(3, 3) for _ in range(3)])

        def forward(self, x):
            for layer in self.layers:
                x = torch.relu(layer(x))
            return x

    torch.manual_seed(0)
    check_against_eager(Stack(), *arg_sets((4, 3)))


def test_for_over_enumerate_module_list_matches_eager():
    class Stack(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layers = nn.ModuleList([_Scale(2.0), _Scale(-1.0), _Scale(0.5)])

        def forward(self, x):
            for i, layer in enumerate(self.layers):
                x = layer(x) + i
            return x

    check_against_eager(Stack(), *arg_sets((4, 3)))


def test_for_over_module_dict_items_matches_eager():
    class Heads(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.heads = nn.ModuleDict({"small": nn.Linear(3, 2), "large": nn.Linear(3, 5)})

        def forward(self, x):
            return {name: head(x) for name, head in self.heads.items()}

    torch.manual_seed(0)
    check_against_eager(Heads(), *arg_sets((4, 3)))


def test_for_over_sequential_children_matches_eager():
    class Wrapper(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.body = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 3))

        def forward(self, x):
            for block in self.body:
                x = block(x) + 0.1
            return x

    torch.manual_seed(0)
    check_against_eager(Wrapper(), *arg_sets((4, 3)))


def test_for_over_tensor_iterates_first_dimension_matches_eager():
    def f(x):
        rows = []
        for row in x:
            rows.append(row * 2)
        return rows

    check_against_eager(f, *arg_sets((3, 2)))


def test_nested_for_loops_over_ranges_matches_eager():
    def f(x):
        for i in range(2):
            for j in range(3):
                x = x + i * j
        return x

    check_against_eager(f, *arg_sets((4, 3)))


# while loops


def test_while_loop_on_python_int_counter_matches_eager():
    def f(x):
        n = 0
        while n < 4:
            x = x * 1.5
            n += 1
        return x

    check_against_eager(f, *arg_sets((4, 3)))


def test_while_loop_halving_python_int_argument_matches_eager():
    def f(x, n):
        while n > 1:
            x = x + n
            n //= 2
        return x

    check_against_eager(f, (randn(4, 3, seed=1), 16), (randn(4, 3, seed=2), 16))


def test_while_loop_on_shape_derived_int_matches_eager():
    def f(x):
        size = x.shape[0]
        while size > 1:
            x = x[: size // 2] + x[size // 2 : 2 * (size // 2)]
            size = x.shape[0]
        return x

    check_against_eager(f, *arg_sets((8, 3)))


# break, continue and loop else


def test_break_in_for_loop_matches_eager():
    def f(x):
        for i in range(10):
            if i == 3:
                break
            x = x + i
        return x

    check_against_eager(f, *arg_sets((4, 3)))


def test_continue_in_for_loop_matches_eager():
    def f(x):
        for i in range(6):
            if i % 2 == 0:
                continue
            x = x * 2 + i
        return x

    check_against_eager(f, *arg_sets((4, 3)))


def test_break_in_while_true_loop_matches_eager():
    def f(x):
        i = 0
        while True:
            x = x - 1
            i += 1
            if i >= 3:
                break
        return x

    check_against_eager(f, *arg_sets((4, 3)))


def test_for_else_runs_else_without_break_matches_eager():
    def f(x):
        for i in range(3):
            if i == 10:
                break
            x = x + 1
        else:
            x = x * 100
        return x

    check_against_eager(f, *arg_sets((4, 3)))


def test_for_else_skips_else_after_break_matches_eager():
    def f(x):
        for i in range(5):
            if i == 2:
                break
            x = x + 1
        else:
            x = x * 100
        return x

    check_against_eager(f, *arg_sets((4, 3)))


def test_while_else_runs_else_when_condition_fails_matches_eager():
    def f(x):
        n = 3
        while n > 0:
            x = x + n
            n -= 1
        else:
            x = -x
        return x

    check_against_eager(f, *arg_sets((4, 3)))


def test_break_only_leaves_inner_loop_matches_eager():
    def f(x):
        for i in range(3):
            for j in range(3):
                if j > i:
                    break
                x = x + (i + j)
        return x

    check_against_eager(f, *arg_sets((4, 3)))


# Boolean operators and conditional expressions


def test_conditional_expression_on_python_int_matches_eager():
    def f(x, n):
        return x * 2 if n > 1 else x - 2

    check_against_eager(f, (randn(4, 3, seed=1), 2), (randn(4, 3, seed=2), 0), expected_graphs=2)


def test_or_returns_first_truthy_python_value_matches_eager():
    def f(x, scale=None):
        scale = scale or 3.0
        return x * scale

    check_against_eager(f, (randn(4, 3, seed=1), None), (randn(4, 3, seed=2), None))


def test_and_returns_last_python_value_matches_eager():
    def f(x, a, b):
        return x * (a and b)

    check_against_eager(f, (randn(4, 3, seed=1), 2, 5), (randn(4, 3, seed=2), 2, 5))


def test_not_on_python_bool_matches_eager():
    def f(x, flag):
        if not flag:
            return x + 1
        return x - 1

    check_against_eager(f, (randn(4, 3, seed=1), False), (randn(4, 3, seed=2), False))


def test_chained_comparison_on_python_int_matches_eager():
    def f(x, n):
        if 0 < n < 5:
            return x * n
        return x - 1

    check_against_eager(f, (randn(4, 3, seed=1), 3), (randn(4, 3, seed=2), 7), expected_graphs=2)


def test_conditional_expression_choosing_tensor_or_default_matches_eager():
    def f(x, y=None):
        other = y if y is not None else torch.ones_like(x)
        return x + other

    check_against_eager(f, Args(randn(4, 3, seed=1)), Args(randn(4, 3, seed=2), y=randn(4, 3, seed=3)),
                        expected_graphs=2)


def test_any_and_all_on_python_bools_decide_branch_matches_eager():
    def f(x, flags):
        if any(flags) and not all(flags):
            return x + 1
        return x - 1

    check_against_eager(f, (randn(4, 3, seed=1), [True, False]), (randn(4, 3, seed=2), [True, False]))
