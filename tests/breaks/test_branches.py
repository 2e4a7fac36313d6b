"""Graph breaks on branches decided by a tensor's value: `if`, `while`, `assert`, conditional expressions.

The jump runs natively and each target continues in its own resume function, so a call that takes one side compiles
the prefix and that side, and a later call taking the other side adds exactly that side's graph.
"""

import torch

import jitcore as jit
from tests.breaks.helpers import check_breaks, compare_printing
from tests.support import randn


def test_if_on_tensor_sum_compiles_prefix_and_taken_side(counting, capsys):
    def f(x):
        y = x * 2
        if y.sum() > 0:
            return y + 1
        return y - 1

    check_breaks(f, (torch.ones(3),), counting=counting, capsys=capsys, expected_graphs=2)


def test_if_on_tensor_sum_other_side_adds_one_graph(counting, capsys):
    def f(x):
        y = x * 2
        if y.sum() > 0:
            return y + 1
        return y - 1

    compiled = check_breaks(f, (torch.ones(3),), counting=counting, capsys=capsys, expected_graphs=2)
    compare_printing(f, compiled, (-torch.ones(3),), capsys)
    assert counting.graph_count == 3
    compare_printing(f, compiled, (-torch.ones(3) * 2,), capsys)
    compare_printing(f, compiled, (torch.ones(3) * 5,), capsys)
    assert counting.graph_count == 3


def test_if_on_tensor_with_else_and_shared_tail_matches_eager(counting, capsys):
    def f(x):
        y = x.sin()
        if y.mean() > 0:
            z = y * 10
        else:
            z = y / 10
        return z + y

    check_breaks(f, (torch.full((4,), 1.0),), (torch.full((4,), -1.0),), counting=counting, capsys=capsys)


def test_tensor_branch_keeps_python_locals_live_across_the_break(counting, capsys):
    def f(x):
        n = 3
        names = ["a", "b"]
        y = x + n
        if y.max() > 3:
            names.append("big")
        else:
            names.append("small")
        return y * len(names), names, n

    check_breaks(f, (torch.ones(2),), (-torch.ones(2) * 5,), counting=counting, capsys=capsys)


def test_while_on_tensor_max_with_changing_tensor_matches_eager(counting, capsys):
    def f(t):
        while t.max() > 1:
            t = t / 2
        return t

    check_breaks(f, (torch.tensor([10.0, 3.0]),), (torch.tensor([0.5, 0.25]),), (torch.tensor([100.0]),),
                 counting=counting, capsys=capsys)


def test_while_on_tensor_counting_iterations_matches_eager(counting, capsys):
    def f(t):
        steps = 0
        while t.sum() > 1:
            t = t * 0.5
            steps += 1
        return t, steps

    check_breaks(f, (torch.tensor([8.0, 8.0]),), counting=counting, capsys=capsys)


def test_while_true_with_tensor_break_condition_matches_eager(counting, capsys):
    def f(t):
        while True:
            t = t - 1
            if t.min() < 0:
                break
        return t * 2

    check_breaks(f, (torch.tensor([3.0, 5.0]),), counting=counting, capsys=capsys)


def test_if_on_tensor_and_condition_matches_eager(counting, capsys):
    def f(x):
        if x.sum() > 0 and x.mean() < 5:
            return x + 1
        return x - 1

    check_breaks(f, (torch.ones(3),), (torch.ones(3) * 10,), (-torch.ones(3),), counting=counting, capsys=capsys)


def test_if_not_all_positive_matches_eager(counting, capsys):
    def f(x):
        if not (x > 0).all():
            return x.abs()
        return x.log()

    check_breaks(f, (torch.tensor([1.0, -2.0]),), (torch.tensor([1.0, 2.0]),), counting=counting, capsys=capsys)


def test_nested_tensor_branches_all_four_paths_match_eager(counting, capsys):
    def f(x, y):
        if x.sum() > 0:
            if y.sum() > 0:
                return x + y
            return x - y
        if y.sum() > 0:
            return y * 2
        return x * 2

    pos, neg = torch.ones(2), -torch.ones(2)
    check_breaks(f, (pos, pos), (pos, neg), (neg, pos), (neg, neg), counting=counting, capsys=capsys)


def test_conditional_expression_on_tensor_matches_eager(counting, capsys):
    def f(x):
        y = x * 2 if x.mean() > 0 else x * 3
        return y + 1

    check_breaks(f, (torch.ones(3),), (-torch.ones(3),), counting=counting, capsys=capsys)


def test_tensor_branch_with_operand_on_stack_matches_eager(counting, capsys):
    def f(x):
        return x + (1 if x.sum() > 0 else 2)

    check_breaks(f, (torch.ones(3),), (-torch.ones(3),), counting=counting, capsys=capsys)


def test_assert_on_tensor_value_passing_makes_prefix_and_resume_graphs(counting, capsys):
    # pytest rewrites this assert: the frame holds locals named `@py_assert1`, which are not identifiers
    def f(x):
        y = x * 2
        assert y.sum() > -100, "sum too small"
        return y + 1

    check_breaks(f, (randn(4, seed=1),), counting=counting, capsys=capsys, expected_graphs=2)


def test_assert_on_tensor_value_failing_raises_same_assertion_error(counting):
    def f(x):
        y = x + 1
        assert y.sum() > 100, "sum too small"
        return y

    compiled = jit.compile(f, backend=counting)
    errors = []
    for fn in (f, compiled, compiled):
        try:
            fn(torch.ones(3))
        except AssertionError as error:
            errors.append(str(error).splitlines()[0])  # pytest's explanation below names object addresses
    assert errors == ["sum too small"] * 3
    assert counting.graph_count >= 1  # at least the prefix


def test_if_on_item_comparison_matches_eager(counting, capsys):
    def f(x):
        if x.sum().item() > 0:
            return x.exp()
        return x.neg()

    check_breaks(f, (torch.ones(2),), (-torch.ones(2),), counting=counting, capsys=capsys)


def test_tensor_branch_on_bool_tensor_directly_matches_eager(counting, capsys):
    def f(x, flag):
        if flag:
            return x + 1
        return x - 1

    check_breaks(f, (torch.ones(2), torch.tensor(True)), (torch.ones(2), torch.tensor(False)),
                 counting=counting, capsys=capsys)


def test_tensor_branch_taken_side_with_print_matches_eager(counting, capsys):
    def f(x):
        y = x.cos()
        if y.sum() > 0:
            print("positive")
            y = y * 2
        return y

    check_breaks(f, (torch.zeros(3),), (torch.full((3,), 3.0),), counting=counting, capsys=capsys)


def test_tensor_branch_prefix_runs_once_per_call(counting):
    calls = []

    @jit.disable
    def observe(t):
        calls.append(t.shape)
        return t

    def f(x):
        y = observe(x) + 1
        if y.sum() > 0:
            return y
        return -y

    compiled = jit.compile(f, backend=counting)
    for sign in (1, -1, 1):
        torch.testing.assert_close(compiled(sign * torch.ones(2)), f(sign * torch.ones(2)))
    assert len(calls) == 6  # three compiled calls and three eager calls, one observe each
