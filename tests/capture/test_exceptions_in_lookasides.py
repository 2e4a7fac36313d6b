"""An exception a modelled operation raises inside an inlined function reaches the code that made the call first:
`hasattr()` over a class's own `__getattribute__`, getattr with a default, a `__getattr__` fallback answer it as
Python does, even when the caller sits inside a try/finally (transformers' config lookups under its attention
dispatch), instead of unwinding to the caller's handler as an uncaught error."""

import torch

import jitcore as jit
from tests.support import check_against_eager, check_registered_against_eager, randn


class _Base:
    def __init__(self):
        self.scale = 2.0

    def __getattribute__(self, key):
        return super().__getattribute__(key)


class _Config(_Base):
    attribute_map = {"factor": "scale"}

    def __getattribute__(self, key):
        if key != "attribute_map" and key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        return super().__getattribute__(key)

    def lookup(self):
        return hasattr(self, "decoder"), getattr(self, "missing", None), self.factor


class _Fallback:
    def __getattr__(self, name):
        return 3.0


_CONFIG = _Config()
_FALLBACK = _Fallback()


def probe_in_try_finally(x):
    done = []
    try:
        has, default, factor = _CONFIG.lookup()
        y = x * factor + has + (default is None)
    finally:
        done.append(1)
    return y, done


def fallback_in_try_except(x):
    try:
        return x * _FALLBACK.anything
    except AttributeError:
        return x


def test_hasattr_inside_try_finally_is_answered_by_hasattr():
    check_against_eager(probe_in_try_finally, (randn(3, seed=1),), expected_graphs=1)
    check_registered_against_eager(probe_in_try_finally, (randn(3, seed=1),))
    assert not jit.explain(probe_in_try_finally, randn(3)).breaks


def test_getattr_fallback_inside_try_except():
    check_against_eager(fallback_in_try_except, (randn(3, seed=1),), expected_graphs=1)
    assert torch.equal(jit.compile(fallback_in_try_except, backend="eager")(torch.ones(2)), torch.full((2,), 3.0))
