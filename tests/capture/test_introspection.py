"""Capture: questions library code asks about its environment while traced.

`torch.compiler.is_compiling()` is True inside traced code (as under torch.compile) and False when the same code
runs natively; `torch.jit.is_tracing()` is False; `inspect.signature(fn)` folds to a constant, guarded on the
function's code and defaults so that replacing them recompiles.
"""

import inspect

import torch

import jitcore as jit
from tests.support import check_against_eager, randn


def test_torch_compiler_is_compiling_is_true_while_traced_and_false_natively(counting):
    def f(x):
        if torch.compiler.is_compiling():
            return x + 1
        return x - 1

    compiled = jit.compile(f, backend=counting)
    x = randn(3, seed=1)
    torch.testing.assert_close(compiled(x), x + 1)
    torch.testing.assert_close(f(x), x - 1)
    assert counting.graph_count == 1


def test_jit_is_tracing_is_false_while_traced():
    def f(x):
        return x * 2 if not torch.jit.is_tracing() else x

    check_against_eager(f, (randn(3, seed=1),))


def helper(a, b, c=2):
    return a * b + c


def test_signature_of_a_function_folds_to_a_constant():
    def f(x):
        params = inspect.signature(helper).parameters
        kinds = [p.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params.values()]
        return x * len(params) + params["c"].default + sum(kinds), list(params)

    check_against_eager(f, (randn(3, seed=1),))


def test_signature_of_a_bound_method_drops_self():
    class Block:
        def forward_chunk(self, hidden, mask=None):
            return hidden

    block = Block()

    def f(x):
        return x * len(inspect.signature(block.forward_chunk).parameters)

    check_against_eager(f, (randn(3, seed=1),))


def test_replaced_defaults_change_the_signature_and_recompile(counting):
    def target(a, b=1):
        return a

    def f(x):
        return x + inspect.signature(target).parameters["b"].default

    compiled = jit.compile(f, backend=counting)
    x = randn(3, seed=1)
    torch.testing.assert_close(compiled(x), x + 1)
    target.__defaults__ = (5,)
    torch.testing.assert_close(compiled(x), x + 5)
    assert counting.graph_count == 2
