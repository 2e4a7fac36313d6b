"""A module built inside the compiled function whose __init__ stores a callable (transformers' activations via
ACT2FN: a torch function, a functools.partial of one, a method of the module itself) is one graph, as torch.compile
captures it; when it escapes, each call gets its own copy whose method is bound to that copy.
Note [Callables on a module made inside] (capture/values/module.py)."""

import functools
import math

import pytest
import torch
from torch import nn

import jitcore as jit
from tests.support import CountingBackend, check_against_eager, randn


class Activation(nn.Module):
    def __init__(self, how="function"):
        super().__init__()
        if how == "function":
            self.act = nn.functional.gelu
        elif how == "partial":
            self.act = functools.partial(nn.functional.gelu, approximate="tanh")
        elif how == "method":
            self.act = self._gelu_python
        else:
            self.act = _user_gelu

    def _gelu_python(self, x):
        return x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))

    def forward(self, x):
        return self.act(x)


def _user_gelu(x):
    return x * torch.sigmoid(1.702 * x)


class Head(nn.Module):
    """A classification head that makes its activation in forward (ConvBERT's, RoFormer's)."""

    def __init__(self, how):
        super().__init__()
        self.dense = nn.Linear(4, 4)
        self.how = how

    def forward(self, x):
        return Activation(self.how)(self.dense(x))


@pytest.mark.parametrize("how", ["function", "partial", "method", "user function"])
def test_an_activation_made_in_forward_keeps_one_graph(how):
    torch.manual_seed(0)
    head = Head(how)
    check_against_eager(head, (randn(2, 4, seed=1),), (randn(2, 4, seed=2),), expected_graphs=1)


def _made_and_returned(x):
    act = Activation("method")
    return act(x), act


def test_an_escaping_module_gets_its_own_copy_with_the_method_bound_to_it():
    compiled = jit.compile(_made_and_returned, backend=CountingBackend())
    x = randn(3, seed=1)
    out1, act1 = compiled(x)
    out2, act2 = compiled(x)
    torch.testing.assert_close(out1, _made_and_returned(x)[0])
    assert act1 is not act2
    assert act1.act.__self__ is act1 and act2.act.__self__ is act2
    torch.testing.assert_close(act1(x), out1)


class _Holder:
    def scale(self, x):
        return x * 2


_HOLDER = _Holder()


def _method_of_an_object_that_existed(x):
    act = Activation()
    act.act = _HOLDER.scale  # not a method of the module made inside: its owner must not be copied with it
    return act(x), act


def test_a_method_of_an_object_that_existed_is_not_copied_with_the_module():
    compiled = jit.compile(_method_of_an_object_that_existed, backend=CountingBackend())
    x = randn(3, seed=1)
    out, act = compiled(x)
    torch.testing.assert_close(out, x * 2)
    assert act.act.__self__ is _HOLDER
