"""Capture: nn.Modules constructed inside the compiled function. Stateless torch.nn modules (activations,
containers of them, Dropout in eval) and user modules whose __init__ stores constants are one graph; the module
each call makes is never shared between calls when it escapes; a module with parameters breaks (its constructor
draws from the RNG), and the result still equals eager."""

import pytest
import torch
from torch import nn

import jitcore as jit
from tests.support import CountingBackend, assert_same, randn


class Scale(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.s = s

    def forward(self, x):
        return x * self.s


def softmax_inline(x):
    return nn.Softmax(dim=-1)(x * 2)


def two_activations(x):
    return nn.ReLU()(x) + nn.GELU()(x)


def sequential_of_activations(x):
    return nn.Sequential(nn.ReLU(), nn.Tanh())(x)


def dropout_in_eval(x):
    d = nn.Dropout(0.5)
    d.eval()
    return d(x), d.training


def sequential_eval_reaches_children(x):
    s = nn.Sequential(nn.Dropout(0.9), nn.ReLU())
    s.eval()
    return s(x), s[0].training


def identity_flatten(x):
    return nn.Flatten()(nn.Identity()(x.unsqueeze(0)))


def user_module(x):
    return Scale(3.0)(x)


def user_modules_in_module_list(x):
    for m in nn.ModuleList([Scale(2.0), Scale(0.5)]):
        x = m(x)
    return x


def user_module_attribute_set(x):
    m = Scale(1.0)
    m.s = 4.0
    m.extra = 1
    return m(x) + m.extra


def user_module_holding_activation(x):
    m = Scale(2.0)
    m.act = nn.Tanh()
    return m.act(m(x))


@pytest.mark.parametrize("fn", [softmax_inline, two_activations, sequential_of_activations, dropout_in_eval,
                                sequential_eval_reaches_children, identity_flatten, user_module,
                                user_modules_in_module_list, user_module_attribute_set,
                                user_module_holding_activation])
def test_stateless_module_made_inside_is_one_graph(fn):
    backend = CountingBackend()
    compiled = jit.compile(fn, backend=backend)
    for seed in (0, 1):
        x = randn(2, 3, seed=seed)
        assert_same(fn(x), compiled(x))
    assert backend.graph_count == 1


def test_module_made_inside_under_enabled():
    jit.register(user_module_attribute_set)
    x = randn(2, 3)
    with jit.enabled(backend="eager"):
        got = user_module_attribute_set(x)
    assert_same(user_module_attribute_set(x), got)


def returns_new_module(x):
    m = Scale(2.0)
    m.s = 5.0
    return m(x), m


def test_escaping_module_is_a_fresh_object_each_call():
    compiled = jit.compile(returns_new_module, backend=CountingBackend())
    x = randn(3)
    y1, m1 = compiled(x)
    y2, m2 = compiled(x)
    assert m1 is not m2
    assert type(m1) is Scale and m1.s == 5.0 and m2.s == 5.0
    m1.s = 7.0
    assert m2.s == 5.0
    assert_same(returns_new_module(x)[0], y2)


def linear_made_inside(x):
    torch.manual_seed(0)
    lin = nn.Linear(3, 2)
    return lin(x)


def test_module_with_parameters_made_inside_matches_eager_and_rng():
    x = randn(2, 3)
    expected = linear_made_inside(x)
    after_eager = torch.rand(1)
    got = jit.compile(linear_made_inside, backend="eager")(x)
    after_compiled = torch.rand(1)
    assert_same(expected, got)
    assert_same(after_eager, after_compiled)


def test_building_a_module_inside_does_not_consume_rng():
    def fn(x):
        return nn.Dropout(0.1).eval()(x) + torch.rand(3)

    torch.manual_seed(3)
    expected = fn(torch.ones(3))
    torch.manual_seed(3)
    got = jit.compile(fn, backend="eager")(torch.ones(3))
    assert_same(expected, got)


class Noisy(nn.Module):
    def __init__(self, log):
        super().__init__()
        log.append("init")
        self.k = len(log)

    def forward(self, x):
        return x + self.k


def test_user_module_init_side_effects_replayed():
    def fn(x, log):
        return Noisy(log)(x)

    x = randn(3)
    eager_log, compiled_log = [], []
    expected = fn(x, eager_log)
    got = jit.compile(fn, backend="eager")(x, compiled_log)
    assert_same(expected, got)
    assert compiled_log == eager_log


class Holder(nn.Module):
    def __init__(self):
        super().__init__()
        self.items = []

    def forward(self, x):
        self.items.append(1)
        return x + len(self.items)


def test_mutable_attribute_of_module_made_inside_keeps_its_mutations():
    def fn(x):
        h = Holder()
        h(x)
        return h(x), len(h.items)

    x = randn(3)
    assert_same(fn(x), jit.compile(fn, backend="eager")(x))


def test_a_module_made_inside_is_one_graph_after_torch_compile_wrapped_module_init(monkeypatch):
    # torch.compile's first run replaces nn.Module.__init__ with a wrapper (Dynamo's generation tagging); the
    # patch is undone after the test
    from torch._dynamo.mutation_guard import install_generation_tagging_init
    monkeypatch.setattr(nn.Module, "__init__", nn.Module.__init__)
    monkeypatch.setattr(nn.Module, "__setstate__", nn.Module.__setstate__)
    monkeypatch.setattr(nn.Module, "___needs_generation_tag_patch", True, raising=False)
    install_generation_tagging_init()
    assert nn.Module.__init__.__name__ == "patched_init"
    backend = CountingBackend()
    compiled = jit.compile(user_module, backend=backend)
    for seed in (0, 1):
        x = randn(2, 3, seed=seed)
        assert_same(user_module(x), compiled(x))
    assert backend.graph_count == 1
