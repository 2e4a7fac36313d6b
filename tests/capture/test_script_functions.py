"""Capture: a torch.jit.script function called from compiled code is traced as the Python function it was
compiled from (values/__init__.py `_wrap_script_function`), so it stays in the graph."""

import warnings

import torch

from tests.support import check_against_eager, randn

with warnings.catch_warnings():
    warnings.simplefilter("ignore", FutureWarning)  # torch.jit.script is deprecated, and still in libraries

    @torch.jit.script
    def scaled_size_sqrt(x: torch.Tensor, factor: int):
        return torch.sqrt(torch.tensor(x.size(-1), dtype=torch.float) * factor)


def test_a_script_function_is_traced_into_the_graph():
    def f(x, y):
        return (x @ y.transpose(-1, -2)) / scaled_size_sqrt(x, 2).to(x.dtype)

    check_against_eager(f, (randn(2, 3, 4, seed=1), randn(2, 3, 4, seed=2)))


def test_a_script_function_passed_in_is_traced_and_guarded_by_identity(counting):
    def f(x, fn):
        return fn(x, 3) + x

    check_against_eager(f, (randn(2, 4, seed=1), scaled_size_sqrt), backend=counting)
