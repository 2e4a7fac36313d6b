"""Graph breaks inside inlined calls: helpers, methods, submodules, lambdas and nested helpers.

A break inside a callee breaks the caller at the call site; the callee then runs through its own compiled copy, so
it gets graphs of its own (its tensor work before and after its print still reaches a graph), and its print runs
exactly once per call.
"""

import torch
from torch import nn

import jitcore as jit
from tests.breaks.helpers import assert_in_graphs, check_breaks
from tests.support import randn


def _helper_with_print(t):
    a = torch.sin(t)
    print("helper", a.shape)
    return torch.cos(a)


def _helper_with_item(t):
    s = torch.sin(t).sum().item()
    return torch.cos(t) * s


def _helper_with_branch(t):
    if torch.sin(t).sum() > 0:
        return torch.cos(t)
    return torch.tanh(t)


def _inner(t):
    print("inner")
    return torch.cos(t)


def _middle(t):
    return _inner(torch.sin(t)) + 1


def _helper_returning_tuple(t):
    u = torch.sin(t)
    print("pair")
    return torch.cos(u), u.shape[0]


class _Printing(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 3)

    def scale(self, t):
        print("scale")
        return torch.sin(t) * 2

    def forward(self, x):
        y = self.linear(x)
        return torch.cos(self.scale(y))


class _Child(nn.Module):
    def forward(self, x):
        y = torch.sin(x)
        print("child")
        return torch.cos(y)


class _Parent(nn.Module):
    def __init__(self):
        super().__init__()
        self.child = _Child()

    def forward(self, x):
        return torch.tanh(self.child(x * 2))


def test_print_in_helper_matches_eager_and_callee_gets_graphs(counting, capsys):
    def f(x):
        y = torch.tanh(x)
        z = _helper_with_print(y)
        return z * 2

    check_breaks(f, (randn(3, seed=1),), (randn(3, seed=2),), counting=counting, capsys=capsys)
    assert counting.graph_count > 1


def test_print_in_helper_callee_ops_before_and_after_print_are_compiled(counting, capsys):
    def f(x):
        y = torch.tanh(x)
        return _helper_with_print(y) * 2

    check_breaks(f, (randn(3, seed=1),), counting=counting, capsys=capsys)
    assert_in_graphs(counting, torch.tanh, torch.sin, torch.cos)


def test_print_in_helper_runs_once_per_call(counting, capsys):
    calls = []

    def noisy(t):
        calls.append(1)
        print("noisy")
        return t + 1

    def f(x):
        return noisy(x * 2) * 3

    compiled = jit.compile(f, backend=counting)
    for seed in range(3):
        torch.testing.assert_close(compiled(randn(2, seed=seed)), (randn(2, seed=seed) * 2 + 1) * 3)
    assert len(calls) == 3
    assert capsys.readouterr().out == "noisy\n" * 3


def test_item_in_helper_matches_eager(counting, capsys):
    def f(x):
        return _helper_with_item(x + 1) - 1

    check_breaks(f, (randn(3, seed=1),), counting=counting, capsys=capsys)
    assert counting.graph_count > 1


def test_tensor_branch_in_helper_both_sides_match_eager(counting, capsys):
    def f(x):
        return _helper_with_branch(x) * 2

    check_breaks(f, (torch.ones(3),), (-torch.ones(3),), counting=counting, capsys=capsys)
    assert counting.graph_count > 1


def test_method_of_module_with_print_matches_eager(counting, capsys):
    torch.manual_seed(0)
    model = _Printing()
    compiled = jit.compile(model, backend=counting)
    for seed in range(2):
        x = randn(2, 3, seed=seed)
        capsys.readouterr()
        expected = model(x)
        eager_out = capsys.readouterr().out
        actual = compiled(x)
        assert capsys.readouterr().out == eager_out == "scale\n"
        torch.testing.assert_close(actual, expected)
        assert actual.requires_grad == expected.requires_grad
    assert counting.graph_count > 1
    assert_in_graphs(counting, torch.sin, torch.cos)


def test_submodule_forward_with_print_matches_eager(counting, capsys):
    model = _Parent()
    compiled = jit.compile(model, backend=counting)
    for seed in range(2):
        x = randn(4, seed=seed)
        capsys.readouterr()
        expected = model(x)
        eager_out = capsys.readouterr().out
        torch.testing.assert_close(compiled(x), expected)
        assert capsys.readouterr().out == eager_out == "child\n"
    assert counting.graph_count > 1
    assert_in_graphs(counting, torch.sin, torch.cos, torch.tanh)


def test_print_two_levels_deep_matches_eager(counting, capsys):
    def f(x):
        return _middle(x * 3) - 2

    check_breaks(f, (randn(3, seed=1),), counting=counting, capsys=capsys)
    assert counting.graph_count > 1
    assert_in_graphs(counting, torch.sin, torch.cos)


def test_helper_with_print_called_twice_matches_eager(counting, capsys):
    def f(x):
        a = _helper_with_print(x)
        b = _helper_with_print(a)
        return a + b

    check_breaks(f, (randn(3, seed=1),), counting=counting, capsys=capsys)
    assert counting.graph_count > 1


def test_helper_returning_tuple_after_print_matches_eager(counting, capsys):
    def f(x):
        t, n = _helper_returning_tuple(x)
        return t * n

    check_breaks(f, (randn(4, seed=1),), counting=counting, capsys=capsys)


def test_lambda_with_print_matches_eager(counting, capsys):
    def f(x):
        g = lambda t: print("lambda") or t * 5  # noqa: E731 - the callee under test is a lambda
        return g(x) + 1

    check_breaks(f, (randn(3, seed=1),), counting=counting, capsys=capsys)


def test_closure_helper_with_print_reads_outer_variable(counting, capsys):
    def f(x, k):
        def scaled(t):
            print("scaled by", k)
            return t * k

        return scaled(x) + k

    check_breaks(f, (randn(3, seed=1), 4), counting=counting, capsys=capsys)


def test_helper_with_print_taking_keyword_arguments_matches_eager(counting, capsys):
    def helper(t, *, shift, scale=2.0):
        print("shift", shift)
        return t * scale + shift

    def f(x):
        return helper(x, shift=1.5) - helper(x, scale=0.5, shift=-1.0)

    check_breaks(f, (randn(3, seed=1),), counting=counting, capsys=capsys)


def _wrapping(func):
    """A decorator whose wrapper calls the function inside try/finally (Hugging Face's config-defaults wrapper):
    the call runs in a step function, which calls the callee's compiled copy."""
    def wrapper(*args, **kwargs):
        state = {"calls": 0}
        try:
            state["calls"] += 1
            return func(*args, **kwargs)
        finally:
            state["calls"] -= 1
    return wrapper


@_wrapping
def _wrapped_helper_with_print(t):
    a = torch.sin(t)
    print("wrapped", a.shape)
    return torch.cos(a)


class _TryParent(nn.Module):
    def __init__(self):
        super().__init__()
        self.child = _Child()

    def forward(self, x):
        try:
            y = self.child(x * 2)  # a method-form call inside the try
        finally:
            x = None
        return torch.tanh(y)


def test_a_callee_that_breaks_inside_a_try_block_is_captured_on_its_own(counting, capsys):
    def f(x):
        return _wrapped_helper_with_print(torch.tanh(x)) * 2

    check_breaks(f, (randn(3, seed=1),), (randn(3, seed=2),), counting=counting, capsys=capsys)
    assert_in_graphs(counting, torch.tanh, torch.sin, torch.cos)


def test_a_submodule_that_breaks_inside_a_try_block_is_captured_on_its_own(counting, capsys):
    check_breaks(_TryParent(), (randn(3, seed=1),), counting=counting, capsys=capsys)
    assert_in_graphs(counting, torch.sin, torch.cos, torch.tanh)


def test_a_callee_raising_inside_a_try_block_still_runs_the_finally(counting, capsys):
    ran = []

    def failing(t):
        print("before")
        raise ValueError(t.shape)

    def f(x):
        try:
            return failing(x.sin())
        except ValueError as exc:
            ran.append("caught")
            return x.cos() + len(exc.args)
        finally:
            ran.append("finally")

    check_breaks(f, (randn(3, seed=1),), counting=counting, capsys=capsys)
    assert ran == ["caught", "finally"] * 4
