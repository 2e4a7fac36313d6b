"""A `typing.NamedTuple` (or namedtuple subclass) with methods of its own: a method, a property, a classmethod
and a staticmethod read from an instance inside the captured code are traced into the graph (no break), and the
lookup is guarded, so replacing the method on the class recompiles and calls the new one."""
from typing import NamedTuple, Optional

import torch

import jitcore as jit
from tests.support import CountingBackend


class _Batch(NamedTuple):
    x: torch.Tensor
    mask: Optional[torch.Tensor] = None
    scale: float = 1.0

    def masked(self):
        return self.x if self.mask is None else self.x * self.mask

    @property
    def doubled(self):
        return self.x * 2

    @classmethod
    def plain(cls, t):
        return cls(t, None, 3.0)

    @staticmethod
    def offset():
        return 5


def _f(x):
    b = _Batch(x, x > 0, 2.0)
    c = b.plain(x)
    return b.masked() * b.scale + b.doubled, c.masked() * c.scale + b.offset()


def test_namedtuple_methods_are_traced_in_one_graph():
    counting = CountingBackend()
    compiled = jit.compile(_f, backend=counting)
    x = torch.randn(4)
    for got, expected in zip(compiled(x), _f(x)):
        assert torch.equal(got, expected)
    assert counting.graph_count == 1


def test_replacing_the_method_on_the_class_recompiles():
    compiled = jit.compile(_f, backend="eager")
    x = torch.randn(4)
    compiled(x)
    original = _Batch.masked
    _Batch.masked = lambda self: self.x - 1
    try:
        for got, expected in zip(compiled(x), _f(x)):
            assert torch.equal(got, expected)
    finally:
        _Batch.masked = original
