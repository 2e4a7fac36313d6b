"""`delattr(self, name)` / `del self.name` of a plain attribute inside a compiled forward is a side effect, not a
graph break: the attribute is gone after the call (and for reads later in the call, which raise eager's
AttributeError), and a module whose attribute was added back recompiles only where the facts relied on changed."""
import pytest
import torch
import torch.nn as nn

import jitcore as jit
from tests.support import CountingBackend


class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.old = 0

    def forward(self, x):
        y = self.fc(x)
        if hasattr(self, "old"):
            delattr(self, "old")
        self.old = y.shape[0]
        self.tmp = 1
        del self.tmp
        return y, hasattr(self, "tmp")


def test_deleting_plain_attributes_in_forward_is_replayed_without_a_break():
    eager, jitted = _Net(), _Net()
    jitted.load_state_dict(eager.state_dict())
    counting = CountingBackend()
    compiled = jit.compile(jitted, backend=counting)
    for _ in range(3):
        x = torch.randn(2, 3)
        (got, got_has), (expected, expected_has) = compiled(x), eager(x)
        assert torch.allclose(got, expected) and got_has == expected_has
        assert vars(jitted).keys() == vars(eager).keys() and jitted.old == eager.old
    assert counting.graph_count == 1


class _ReadAfterDelete(nn.Module):
    def __init__(self):
        super().__init__()
        self.gone = 1.0

    def forward(self, x):
        del self.gone
        return x * self.gone


def test_reading_a_deleted_attribute_raises_eagers_attribute_error():
    eager, module = _ReadAfterDelete(), _ReadAfterDelete()
    with pytest.raises(AttributeError) as expected:
        eager(torch.ones(2))
    with pytest.raises(AttributeError) as got:
        jit.compile(module, backend="eager")(torch.ones(2))
    assert str(got.value) == str(expected.value)
    assert not hasattr(eager, "gone") and not hasattr(module, "gone")  # the delete happened before the raise
