"""Note [Constant module attributes]: module configuration the graph baked in (stride, eps, a permutation list) is
checked by the module-state batch, at C speed, and a change to any of it still misses the entry."""
import torch

import jitcore as jit
from jitcore.guards import BatchIdentityMatch
from tests.support import CountingBackend


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = torch.nn.ModuleList(torch.nn.Conv2d(3, 3, 3, padding=1) for _ in range(3))
        self.norm = torch.nn.LayerNorm(3, eps=1e-5)
        self.dims = [0, 2, 3, 1]
        self.scale = 1000.5

    def forward(self, x):
        for conv in self.convs:
            x = conv(x)
        x = self.norm(x.permute(*self.dims))
        return x * self.scale


def _run(model, x):
    backend = CountingBackend()
    compiled = jit.compile(model, backend=backend)
    with torch.no_grad():
        compiled(x)
    return compiled, backend


def _batch_describing(compiled):
    import gc
    found = [o for o in gc.get_objects() if type(o) is BatchIdentityMatch and o.const_keys]
    return found


def test_module_configuration_is_checked_in_the_batch():
    model, x = Block().eval(), torch.randn(1, 3, 8, 8)
    earlier = _batch_describing(None)  # other tests' batches in this worker (held, so no address is reused)
    compiled, backend = _run(model, x)
    assert backend.graph_count == 1
    batches = [b for b in _batch_describing(compiled) if not any(b is e for e in earlier)]
    assert any("constant attributes" in b.describe() for b in batches)
    assert all(b.holds() for b in batches if b.const_keys)  # the fast path agrees with the model as it is
    names = {name for b in batches for name in b.const_names}
    assert any(name.endswith("convs.0.stride") for name in names), names
    assert any(name.endswith("norm.eps") for name in names), names


def test_rebinding_a_convolution_stride_misses_and_matches_eager():
    model, x = Block().eval(), torch.randn(1, 3, 8, 8)
    compiled, backend = _run(model, x)
    with torch.no_grad():
        compiled.convs[1].stride = (2, 2)
        got = compiled(x)
        model.convs[1].stride = (2, 2)
        expected = model(x)
    assert backend.graph_count == 2
    assert got.shape == expected.shape == (1, 4, 4, 3)
    torch.testing.assert_close(got, expected)


def test_a_list_changed_in_place_misses():
    model, x = Block().eval(), torch.randn(1, 3, 8, 8)
    compiled, backend = _run(model, x)
    with torch.no_grad():
        compiled.dims[1], compiled.dims[2] = 3, 2  # same list object, other contents
        got = compiled(x)
        expected = model(x)
    assert backend.graph_count == 2
    torch.testing.assert_close(got, expected)


def test_an_equal_value_rebound_does_not_recompile():
    model, x = Block().eval(), torch.randn(1, 3, 8, 8)
    compiled, backend = _run(model, x)
    with torch.no_grad():
        for _ in range(3):
            compiled.scale = float("1000.5")  # a new float object, equal to the old one
            compiled.dims = [0, 2, 3, 1]  # a new list, equal items
            compiled(x)
    assert backend.graph_count == 1


def test_a_value_of_another_type_misses():
    model, x = Block().eval(), torch.randn(1, 3, 8, 8)
    compiled, backend = _run(model, x)
    with torch.no_grad():
        compiled.norm.eps = 1  # int, not float: equal-looking values of another type are not the same constant
        compiled(x)
    assert backend.graph_count == 2


def test_a_hook_added_after_compiling_runs():
    model, x = Block().eval(), torch.randn(1, 3, 8, 8)
    compiled, backend = _run(model, x)
    seen = []
    compiled.convs[2].register_forward_hook(lambda module, args, out: seen.append(out.shape))
    with torch.no_grad():
        compiled(x)
    assert seen == [torch.Size([1, 3, 8, 8])]


def test_a_deleted_instance_attribute_misses():
    class Scaled(torch.nn.Module):
        factor = 2.0  # the class default, seen once the instance's own value is deleted

        def __init__(self):
            super().__init__()
            self.layers = torch.nn.Sequential(*(torch.nn.Linear(4, 4) for _ in range(4)))
            self.factor = 3.0

        def forward(self, x):
            return self.layers(x) * self.factor

    model, x = Scaled(), torch.randn(2, 4)
    compiled, backend = _run(model, x)
    del compiled.factor
    with torch.no_grad():
        got = compiled(x)
        expected = model.layers(x) * 2.0
    torch.testing.assert_close(got, expected)
    assert backend.graph_count == 2


def test_a_counter_that_changes_every_call_is_not_pinned():
    class Stepping(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = torch.nn.Sequential(*(torch.nn.Linear(4, 4) for _ in range(4)))
            self.step = 0

        def forward(self, x):
            self.step += 1
            return self.layers(x) * self.step

    model, x = Stepping(), torch.randn(2, 4)
    compiled, backend = _run(model, x)
    with torch.no_grad():
        for step in range(2, 8):
            got = compiled(x)
            torch.testing.assert_close(got, model.layers(x) * step)
    assert backend.graph_count <= 2
