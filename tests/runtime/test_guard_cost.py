"""Dispatch cost stays flat: module state is one batched check, many entries are picked by shape."""
import torch

import jitcore as jit
from jitcore.report.console import EVENTS
from jitcore.config import config


class Wide(torch.nn.Module):
    """100 Linear(2, 2): 200 parameters, 100 submodules, 400 hook dicts."""

    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(2, 2) for _ in range(100))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def _entry(compiled_module):
    return type(compiled_module).forward._jitcore_cache.entries[-1]


def test_module_with_200_parameters_is_guarded_by_a_bounded_number_of_checks(counting):
    model = Wide()
    compiled = jit.compile(model, backend=counting)
    x = torch.randn(3, 2)
    torch.testing.assert_close(compiled(x), model(x))
    checks = len(_entry(compiled).guard_function.tree)
    # global state, the batched module state, self, x, and what name resolution relied on (Linear.forward in its
    # class dict, linear.py's F and F.linear): independent of the number of parameters and layers
    assert checks <= 8, _entry(compiled).guard_function.tree.pretty()


def test_replacing_a_parameter_recompiles_with_the_new_values(counting):
    model = Wide()
    compiled = jit.compile(model, backend=counting)
    x = torch.randn(3, 2)
    compiled(x)
    model.layers[7].weight = torch.nn.Parameter(torch.randn(2, 2))
    torch.testing.assert_close(compiled(x), model(x))
    assert counting.graph_count == 2


def test_in_place_parameter_update_does_not_recompile(counting):
    model = Wide()
    compiled = jit.compile(model, backend=counting)
    x = torch.randn(3, 2)
    compiled(x)
    with torch.no_grad():
        model.layers[3].weight.mul_(2)
    torch.testing.assert_close(compiled(x), model(x))
    assert counting.graph_count == 1


def test_freezing_a_parameter_recompiles(counting):
    model = Wide()
    compiled = jit.compile(model, backend=counting)
    x = torch.randn(3, 2)
    compiled(x)
    model.layers[0].bias.requires_grad_(False)
    out = compiled(x)
    torch.testing.assert_close(out, model(x))
    assert counting.graph_count == 2


def test_swapping_a_parameters_data_for_another_shape_recompiles(counting):
    """`.data = ...` keeps the Parameter object but changes its shape: the batched check sees it."""
    model = torch.nn.Sequential(*(torch.nn.Linear(4, 4) for _ in range(3)))
    compiled = jit.compile(model, backend=counting)
    compiled(torch.randn(2, 4))
    with torch.no_grad():
        model[2].weight.data = torch.randn(3, 4)
        model[2].bias.data = torch.randn(3)
    x = torch.randn(2, 4)
    out = compiled(x)
    assert out.shape == (2, 3)
    torch.testing.assert_close(out, model(x))
    assert counting.graph_count == 2


def test_adding_a_hook_after_compiling_is_honoured(counting):
    model = Wide()
    compiled = jit.compile(model, backend=counting)
    x = torch.randn(3, 2)
    compiled(x)
    seen = []
    model.layers[5].register_forward_hook(lambda mod, args, out: seen.append(out.shape))
    torch.testing.assert_close(compiled(x), model(x))
    assert len(seen) == 2  # once in the compiled call, once in the eager call


def test_recompile_reason_names_the_module_flag_that_changed(monkeypatch):
    monkeypatch.setattr(config, "log", "recompiles")

    class Flagged(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = torch.nn.ModuleList(torch.nn.Linear(2, 2) for _ in range(3))
            self.drop = torch.nn.Dropout(0.5)

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return self.drop(x)

    model = Flagged().eval()
    compiled = jit.compile(model, backend="eager")
    x = torch.randn(2, 2)
    compiled(x)
    model.drop.train()
    compiled(x)
    reasons = [m for t, m in EVENTS if t == "recompiles"]
    assert any("self.drop.training changed False -> True" in m for m in reasons), reasons


def test_many_entries_are_selected_by_shape_and_stay_correct(counting):
    def f(x):
        return x * 2 + x.shape[0]

    compiled = jit.compile(f, backend=counting, cache_limit=16, dynamic=False)  # one static entry per shape
    shapes = [(n, 3) for n in range(1, 9)]
    for shape in shapes:
        compiled(torch.ones(shape))
    dispatch = compiled._jitcore_cache.dispatch
    assert "___table" in dispatch.source
    for shape in reversed(shapes):
        x = torch.randn(shape)
        torch.testing.assert_close(compiled(x), f(x))
    assert counting.graph_count == 8


def test_recompile_reason_is_reported_against_the_newest_entry_only(monkeypatch):
    monkeypatch.setattr(config, "log", "recompiles")

    def f(x):
        return x + 1

    compiled = jit.compile(f, backend="eager", dynamic=False)  # static shapes: one entry per size
    for n in (2, 3, 4):
        compiled(torch.ones(n))
    reasons = [m for t, m in EVENTS if t == "recompiles"]
    assert len(reasons) == 2
    assert "changed 3 -> 4" in reasons[-1] and "2 -> 4" not in reasons[-1]


def test_after_automatic_dynamic_a_new_size_tries_only_the_dynamic_entry(counting):
    # the static entry of the first size stays in front; the shape switch sends every other size straight to the
    # dynamic entry instead of through the static entry's failing guard
    def f(x):
        return x * 2

    compiled = jit.compile(f, backend=counting)
    for n in range(1, 9):
        compiled(torch.ones(n))
    cache = compiled._jitcore_cache
    assert len(cache.entries) == 2
    namespace = cache.dispatcher.namespace
    assert "___table" in cache.dispatch.source
    static, dynamic = cache.entries
    assert [guard for guard, _ in namespace["___fallback"]] == [dynamic.guard_check]
    assert [guard for guard, _ in namespace["___table"][(1,)]] == [static.guard_check, dynamic.guard_check]
    for n in (1, 5, 9):
        x = torch.randn(n)
        torch.testing.assert_close(compiled(x), f(x))
    assert counting.graph_count == 2
