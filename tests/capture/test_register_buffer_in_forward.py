"""`self.register_buffer(...)` inside a compiled forward, on a module made before the call: captured without a
graph break as a side effect. Reads later in the call see the tensor, the real module has the buffer after the
call (persistent or not, as `state_dict` shows), the next call (where it exists) recompiles once and reuses it,
and a name that clashes with an attribute raises eager's KeyError."""
import pytest
import torch
import torch.nn as nn

import jitcore as jit
from tests.support import CountingBackend


class _Lazy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        if not hasattr(self, "running"):
            self.register_buffer("running", x.detach().mean(0))
            self.register_buffer("scratch", torch.ones(3), persistent=False)
        self.running.mul_(0.5).add_(x.detach().mean(0))
        return self.fc(x) + self.running * self.scratch


def test_buffer_registered_in_forward_matches_eager_in_one_graph_per_path():
    eager, jitted = _Lazy(), _Lazy()
    jitted.load_state_dict(eager.state_dict())
    counting = CountingBackend()
    compiled = jit.compile(jitted, backend=counting)
    for seed in range(3):
        x = torch.randn(2, 3, generator=torch.Generator().manual_seed(seed))
        assert torch.allclose(compiled(x), eager(x))
        assert set(dict(jitted.named_buffers())) == {"running", "scratch"}
        assert torch.allclose(jitted.running, eager.running)
    assert set(jitted.state_dict()) == set(eager.state_dict()) == {"fc.weight", "fc.bias", "running"}
    assert counting.graph_count == 2  # the first call's path, then the path where the buffers exist


class _Clash(nn.Module):
    def __init__(self):
        super().__init__()
        self.taken = 1.0

    def forward(self, x):
        self.register_buffer("taken", x * 2)
        return x + 1


def test_a_name_already_taken_raises_eagers_key_error():
    with pytest.raises(KeyError) as expected:
        _Clash()(torch.ones(2))
    with pytest.raises(KeyError) as got:
        jit.compile(_Clash(), backend="eager")(torch.ones(2))
    assert str(got.value) == str(expected.value)
