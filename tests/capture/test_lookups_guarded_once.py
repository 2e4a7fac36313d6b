"""Note [Lookups guarded once] (capture/context.py): a capture makes the guards of one name lookup (a builtin not
shadowed by a global, a name found along a class's MRO) once, and the guard set is what it was when every lookup
made its checks and the duplicates were dropped; a change to what such a guard checks still recompiles."""
from __future__ import annotations

import torch

import jitcore as jit
from jitcore.capture.context import CaptureContext
from jitcore.capture.frame import capture_frame
from tests.support import CountingBackend


class Scaled:
    factor = 2.0

    def scale(self, x):
        return x * self.factor

    def twice(self, x):
        return self.scale(self.scale(x))


class Shifted(Scaled):
    def scale(self, x):
        return super().scale(x) + len((1, 2))


def _many_lookups(x, obj):
    for _ in range(3):
        x = obj.twice(x) + len((x,))
    return x


def _guards(fn, *args):
    params = fn.__code__.co_varnames[:fn.__code__.co_argcount]
    captured = capture_frame(fn.__code__, fn.__globals__, (), dict(zip(params, args)), fn.__qualname__)
    return list(captured.guards)


def test_guard_set_is_the_same_as_making_every_lookups_checks(monkeypatch):
    args = (torch.randn(3), Shifted())
    once = _guards(_many_lookups, *args)
    monkeypatch.setattr(CaptureContext, "_guarded_once", lambda self, owner, name, after: False)
    every_time = _guards(_many_lookups, *args)
    assert once == every_time
    assert [(s, c.describe()) for s, c in once] == [(s, c.describe()) for s, c in every_time]


def test_class_attribute_changed_after_repeated_lookups_recompiles():
    counter = CountingBackend()
    obj = Shifted()
    compiled = jit.compile(_many_lookups, backend=counter)
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x, obj), _many_lookups(x, obj))
    try:
        Scaled.factor = 3.0
        torch.testing.assert_close(compiled(x, obj), _many_lookups(x, obj))
        Shifted.scale = lambda self, x: x - 1  # found earlier in the MRO now
        torch.testing.assert_close(compiled(x, obj), _many_lookups(x, obj))
    finally:
        Scaled.factor = 2.0
        Shifted.scale = _SHIFTED_SCALE
    assert counter.graph_count == 3


_SHIFTED_SCALE = Shifted.scale


def test_builtin_shadowed_by_a_global_after_repeated_lookups_recompiles():
    counter = CountingBackend()
    obj = Scaled()
    compiled = jit.compile(_many_lookups, backend=counter)
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x, obj), _many_lookups(x, obj))
    globals()["len"] = lambda item: 10
    try:
        torch.testing.assert_close(compiled(x, obj), _many_lookups(x, obj))
    finally:
        del globals()["len"]
    torch.testing.assert_close(compiled(x, obj), _many_lookups(x, obj))
    assert counter.graph_count == 2
