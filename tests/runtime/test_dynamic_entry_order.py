"""Runtime: the entries of a frame after automatic dynamic, and which calls each one serves.

A sweep over sizes leaves the first (static) entry in front of the dynamic one automatic dynamic made. A call at
a new size misses the static entry on its argument checks (Note [Arguments first], guards/compile.py) and runs the
dynamic entry; a call at the first size still runs the static one; a size the dynamic entry's shape relations
exclude runs neither, and captures anew. Results equal eager's throughout.
"""
from __future__ import annotations

import torch

import jitcore as jit
from tests.support import assert_same


class _Calls:
    """A backend that runs each graph with gm.forward and counts the calls of each graph."""

    def __init__(self):
        self.calls = []

    def __call__(self, gm, example_inputs):
        index = len(self.calls)
        self.calls.append(0)

        def run(*args):
            self.calls[index] += 1
            return gm.forward(*args)

        return run


def _classify():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, stride=2, padding=1), torch.nn.ReLU(),
                                torch.nn.Conv2d(4, 4, 3, stride=2, padding=1), torch.nn.AdaptiveAvgPool2d(1),
                                torch.nn.Flatten(), torch.nn.Linear(4, 2))

    def classify(images):
        return model(images)

    return classify


def _image(size):
    return torch.randn(1, 3, size, size)


def test_after_a_sweep_new_sizes_run_the_dynamic_entry_and_the_first_size_its_static_one():
    classify, backend = _classify(), _Calls()
    compiled = jit.compile(classify, backend=backend)
    with torch.no_grad():
        for size in (16, 20, 24, 28):
            x = _image(size)
            assert_same(compiled(x), classify(x))
        assert backend.calls == [1, 3]  # 16 on the static graph; 20, 24 and 28 on the dynamic one
        guards = [entry.guard_function for entry in compiled._jitcore_cache.entries]
        assert [entry.gm is not None for entry in compiled._jitcore_cache.entries] == [True, True]
        # the stale static entry misses a new size on its argument's TensorMatch, before the module state
        source = guards[0].source
        assert source.index("TensorMatch") < source.index("module state")
        for size in (32, 40, 16):
            x = _image(size)
            assert_same(compiled(x), classify(x))
        assert backend.calls == [2, 5]


def test_a_dynamic_entry_is_not_reused_where_its_shape_relations_fail():
    classify, backend = _classify(), _Calls()
    compiled = jit.compile(classify, backend=backend)
    with torch.no_grad():
        for size in (16, 20, 24):
            x = _image(size)
            assert_same(compiled(x), classify(x))
        dynamic = compiled._jitcore_cache.entries[1].guard_function
        x = _image(2)  # the second convolution's output would be 1x1: the graph took it to be larger
        cells = compiled.__closure__
        assert dynamic.check(_image(36), cells) and not dynamic.check(x, cells)
        assert [line.split(":")[0] for line in dynamic.failures((x,), cells)] == ["shape relations"]
        assert_same(compiled(x), classify(x))
        assert len(backend.calls) == 3 and backend.calls[:2] == [1, 2] and backend.calls[2] == 1
        x = _image(36)
        assert_same(compiled(x), classify(x))
        assert backend.calls[:2] == [1, 3]
