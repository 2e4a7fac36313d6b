"""torch.compiler.is_compiling() answers True in traced code, but a capture where that answer makes the code raise
(a library skipping a default it then uses, as LongT5 and SwitchTransformers skip the attention mask) is captured
again with the answer False, as eager Python sees it: the result is eager's, in one graph; an error the code raises
either way still reaches the caller as eager raises it. Note [is_compiling() when the traced code raises].
"""

import pytest
import torch

import jitcore as jit
from tests.support import Args, CountingBackend, check_against_eager, compare_call, randn


def _blocks(mask):
    return mask[:, None] * 2  # TypeError on None: the default the compiling path skipped


def _default_mask(x, mask=None):
    if mask is None and not torch.compiler.is_compiling():
        mask = torch.ones(x.shape)
    return x + _blocks(mask)


def _default_mask_in_try_finally(x, mask=None):
    state = {"inside": True}
    try:
        if mask is None and not torch.compiler.is_compiling():
            mask = torch.ones(x.shape)
        out = x + _blocks(mask)
    finally:
        state["inside"] = False
    return out, state


def _attribute_of_skipped_default(x, mask=None):
    if mask is None and not torch.compiler.is_compiling():
        mask = torch.ones(x.shape)
    return x * mask.shape[0]  # AttributeError on None, at the root frame's own instruction


@pytest.mark.parametrize("fn", [_default_mask, _default_mask_in_try_finally, _attribute_of_skipped_default],
                         ids=lambda fn: fn.__name__)
def test_a_default_the_compiling_path_skips_is_made_as_eager_makes_it(fn):
    check_against_eager(fn, (randn(3, 4, seed=1),), (randn(3, 4, seed=2),), expected_graphs=1)


def test_the_mask_given_still_takes_the_compiling_path():
    counting = check_against_eager(_default_mask, Args(randn(3, 4, seed=1), mask=randn(3, 4, seed=3)))
    assert counting.op_count == 3  # getitem, mul, add: no ones()


def test_is_compiling_stays_true_where_nothing_raises():
    def f(x):
        return x + (1 if torch.compiler.is_compiling() else 100)

    counting = CountingBackend()
    x = torch.zeros(2)
    torch.testing.assert_close(jit.compile(f, backend=counting)(x), x + 1)


def _raises_either_way(x, n):
    if not torch.compiler.is_compiling():
        x = x + 1
    if n > 2:
        raise ValueError(f"n is {n}")
    return x * n


def test_an_error_raised_either_way_reaches_the_caller_as_eager_raises_it():
    compiled = jit.compile(_raises_either_way, backend=CountingBackend())
    error = compare_call(_raises_either_way, compiled, (randn(3, seed=1), 5))
    assert isinstance(error, ValueError)
    assert isinstance(compare_call(_raises_either_way, compiled, (randn(3, seed=2), 7)), ValueError)
