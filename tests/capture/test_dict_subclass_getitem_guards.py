"""A dict subclass whose own __getitem__ computes something from the entry (transformers' ClassInstantier, whose
ACT2FN["gelu"] makes a new activation module): the entries capture read through `super().__getitem__` are guarded
and reloaded from the dict itself (dict.__getitem__), not through the subclass's __getitem__, so a second call
reuses the entry instead of recompiling on every call, and a changed entry still recompiles."""

import collections

import torch
from torch import nn

import jitcore as jit
from tests.support import CountingBackend, check_against_eager, randn


class Instantier(collections.OrderedDict):
    def __getitem__(self, key):
        content = super().__getitem__(key)
        cls, kwargs = content if isinstance(content, tuple) else (content, {})
        return cls(**kwargs)


_ACTIVATIONS = Instantier({"relu": nn.ReLU, "leaky": (nn.LeakyReLU, {"negative_slope": 0.5})})


def _activate(x, name):
    return _ACTIVATIONS[name](x)


def test_entries_are_guarded_through_the_dict_itself_and_the_entry_is_reused():
    check_against_eager(_activate, (randn(4, seed=1), "leaky"), (randn(4, seed=2), "leaky"), expected_graphs=1)


def test_a_changed_entry_recompiles():
    counting = CountingBackend()
    compiled = jit.compile(_activate, backend=counting)
    x = randn(4, seed=3)
    torch.testing.assert_close(compiled(x, "leaky"), nn.functional.leaky_relu(x, 0.5))
    dict.__setitem__(_ACTIVATIONS, "leaky", (nn.LeakyReLU, {"negative_slope": 0.25}))
    try:
        torch.testing.assert_close(compiled(x, "leaky"), nn.functional.leaky_relu(x, 0.25))
    finally:
        dict.__setitem__(_ACTIVATIONS, "leaky", (nn.LeakyReLU, {"negative_slope": 0.5}))
    assert counting.graph_count == 2
