"""The built-in and registered backends driven by jitcore itself: graphs and example inputs as capture makes them.

The other backends/ tests hand-build their graphs (tests/backends/graphs.py); these go through `jit.compile`, so they
check the contract from jitcore's side: which GraphModule and example inputs a backend gets, how backend names and
options reach it, and what happens when it fails. CUDA tests are skipped where torch.cuda.is_available() is False.
"""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from jitcore import backends
import jitcore as jit
from jitcore.report.console import EVENTS
from tests.support import CountingBackend, arg_sets, check_against_eager, randn

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def sin_mul_add(x, y):
    return torch.sin(x) * y + 1


def _mlp() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))


# Names and options reach the backend


@pytest.mark.parametrize("name", ["eager", "aot_eager"])
def test_builtin_backend_by_name_runs_jitcores_graph_like_eager(name):
    counting = check_against_eager(sin_mul_add, *arg_sets((3, 4), (3, 4)), backend=name)
    assert counting.op_count == 3


def test_registered_backend_is_found_by_name_and_gets_the_captured_graph():
    received = []

    def recording(gm, example_inputs):
        received.append((gm, example_inputs))
        return gm.forward

    backends.register_backend("recording", recording)
    x, y = randn(3, 4, seed=1), randn(3, 4, seed=2)
    torch.testing.assert_close(jit.compile(sin_mul_add, backend="recording")(x, y), sin_mul_add(x, y))
    ((gm, example_inputs),) = received
    assert isinstance(gm, torch.fx.GraphModule)
    assert [node.op for node in gm.graph.nodes].count("placeholder") == len(example_inputs) == 2


def test_inductor_mode_and_options_given_to_compile_reach_compile_fx(monkeypatch):
    import torch._inductor.compile_fx

    patches_seen = []

    def fake_compile_fx(gm, example_inputs, config_patches=None):
        patches_seen.append(config_patches)
        return gm.forward

    monkeypatch.setattr(torch._inductor.compile_fx, "compile_fx", fake_compile_fx)
    compiled = jit.compile(sin_mul_add, backend="inductor", mode="max-autotune-no-cudagraphs",
                           options={"coordinate-descent-tuning": False})
    x, y = randn(3, 4, seed=1), randn(3, 4, seed=2)
    torch.testing.assert_close(compiled(x, y), sin_mul_add(x, y))
    assert patches_seen == [{"max_autotune": True, "coordinate_descent_tuning": False}]


def test_bad_inductor_mode_fails_at_compile_time_naming_the_valid_modes():
    with pytest.raises(jit.InvalidArgumentError, match="unknown mode 'turbo'.*max-autotune"):
        jit.compile(sin_mul_add, backend="inductor", mode="turbo")


def test_unknown_inductor_option_fails_at_compile_time():
    with pytest.raises(jit.InvalidArgumentError, match="unknown option 'max_autotun'"):
        jit.compile(sin_mul_add, backend="inductor", options={"max_autotun": True})


def test_mode_given_to_a_backend_without_options_is_refused():
    with pytest.raises(jit.InvalidArgumentError, match="'eager' got unknown option"):
        jit.compile(sin_mul_add, backend="eager", mode="default")


# What a backend is handed


def test_example_inputs_are_the_placeholders_fake_tensors_of_one_mode():
    counting = CountingBackend()
    jit.compile(sin_mul_add, backend=counting)(randn(3, 4, seed=1), randn(4, seed=2))
    (gm,), (example_inputs,) = counting.graphs, counting.example_inputs
    placeholders = [node for node in gm.graph.nodes if node.op == "placeholder"]
    assert [node.meta["val"] for node in placeholders] == example_inputs
    assert len({id(example.fake_mode) for example in example_inputs}) == 1
    assert all("val" in node.meta for node in gm.graph.nodes if node.op != "output")


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.int64])
def test_example_inputs_keep_dtype_shape_and_strides(dtype):
    counting = CountingBackend()
    x = torch.arange(24).reshape(4, 6).to(dtype)[:, ::2]  # strides (6, 2)
    jit.compile(lambda t: t * 2, backend=counting)(x)
    (example,) = counting.example_inputs[0]
    assert (example.dtype, example.shape, example.stride(), example.device) == (dtype, x.shape, (6, 2), x.device)
    assert not example.requires_grad


def _fake_input_checks(example, real) -> list[str]:
    """How a backend's example input differs from the real tensor it stands for (empty: it does not)."""
    from torch._subclasses.fake_tensor import FakeTensor

    problems = []
    if not isinstance(example, FakeTensor):
        problems.append(f"a {type(example).__name__}, not a FakeTensor")
    for attribute in ("shape", "stride", "dtype", "device", "requires_grad"):
        expected, actual = getattr(real, attribute), getattr(example, attribute)
        expected, actual = (expected(), actual()) if callable(expected) else (expected, actual)
        if expected != actual:
            problems.append(f"{attribute} {expected} != {actual}")
    return problems


def test_module_parameters_reach_the_backend_as_fakes_with_their_requires_grad_dtype_and_strides():
    torch.manual_seed(0)
    model = nn.Linear(8, 3).double()
    model.bias.requires_grad_(False)
    counting = CountingBackend("aot_eager")
    x = randn(8, 5, dtype=torch.float64).t()  # non-contiguous: strides (1, 5)
    jit.compile(model, backend=counting)(x)
    (example_inputs,) = counting.example_inputs
    real_by_shape_and_grad = {"x": x, "weight": model.weight, "bias": model.bias}
    assert len(example_inputs) == 3
    for example in example_inputs:
        matches = {name: _fake_input_checks(example, real) for name, real in real_by_shape_and_grad.items()}
        assert any(not problems for problems in matches.values()), f"{example!r} matches no real input: {matches}"
    assert sorted(example.requires_grad for example in example_inputs) == [False, False, True]


def test_non_contiguous_input_reaches_the_backend_with_its_strides_and_gets_its_gradient():
    counting = CountingBackend("aot_eager")

    def f(x, w):
        return (x @ w).relu()

    a = randn(6, 4).requires_grad_()
    w = randn(6, 3, dtype=torch.float32)
    out = jit.compile(f, backend=counting)(a.t(), w)
    (example_inputs,) = counting.example_inputs
    assert [_fake_input_checks(e, r) for e, r in zip(example_inputs, (a.t(), w))] == [[], []]
    assert example_inputs[0].stride() == (1, 4)
    out.sum().backward()
    expected = a.detach().clone().requires_grad_()
    (expected.t() @ w).relu().sum().backward()
    torch.testing.assert_close(a.grad, expected.grad)


@needs_cuda
def test_example_inputs_on_cuda_are_fake_cuda_tensors_with_requires_grad():
    counting = CountingBackend("aot_eager")
    model = _mlp().cuda()
    jit.compile(model, backend=counting)(randn(5, 8).cuda())
    example_inputs = counting.example_inputs[0]
    assert {example.device.type for example in example_inputs} == {"cuda"}
    assert sorted(example.requires_grad for example in example_inputs) == [False, True, True, True, True]


# Failures while compiling


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks cudagraphs where CUDA is missing")
def test_cudagraphs_without_cuda_falls_back_to_native_and_names_the_backend():
    x, y = randn(3, 4, seed=1), randn(3, 4, seed=2)
    torch.testing.assert_close(jit.compile(sin_mul_add, backend="cudagraphs")(x, y), sin_mul_add(x, y))
    messages = [message for topic, message in EVENTS if topic == "fallbacks"]
    assert any("'cudagraphs'" in m and "sin_mul_add()" in m and "needs CUDA" in m for m in messages), messages


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks cudagraphs where CUDA is missing")
def test_cudagraphs_without_cuda_under_fullgraph_raises_backend_compile_error():
    with pytest.raises(jit.BackendCompileError, match="cudagraphs needs CUDA"):
        jit.compile(sin_mul_add, backend="cudagraphs", fullgraph=True)(randn(3, 4, seed=1), randn(3, 4, seed=2))


# Training on CUDA


@needs_cuda
@pytest.mark.parametrize("name", ["aot_eager", "cudagraphs", "inductor"])
def test_mlp_grads_on_cuda_match_eager(name):
    model = _mlp().cuda()
    twin = copy.deepcopy(model)
    counting = CountingBackend(name)
    compiled = jit.compile(twin, backend=counting)
    for seed in (1, 2):
        model.zero_grad()
        twin.zero_grad()
        x = randn(5, 8, seed=seed).cuda()
        model(x).pow(2).sum().backward()
        compiled(x).pow(2).sum().backward()
        for (param_name, expected), actual in zip(model.named_parameters(), twin.parameters()):
            torch.testing.assert_close(actual.grad, expected.grad, rtol=1e-4, atol=1e-5,
                                       msg=lambda m: f"{param_name}.grad: {m}")
    assert counting.graph_count == 1


@needs_cuda
@pytest.mark.parametrize("mode", ["default", "reduce-overhead"])
def test_inductor_optimizer_loop_on_cuda_sees_in_place_parameter_updates(mode):
    """Parameters are marked as static inputs: cudagraph replays read them in place, so each SGD step's update
    must show in the next step's loss exactly as in eager."""
    model = _mlp().cuda()
    twin = copy.deepcopy(model)
    compiled = jit.compile(twin, backend="inductor", mode=mode)
    opt_a = torch.optim.SGD(model.parameters(), lr=0.1)
    opt_b = torch.optim.SGD(twin.parameters(), lr=0.1)
    x = randn(5, 8, seed=3).cuda()
    for _ in range(4):
        for net, opt in ((model, opt_a), (compiled, opt_b)):
            opt.zero_grad()
            loss = net(x).pow(2).mean()
            loss.backward()
            opt.step()
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)
    for expected, actual in zip(model.parameters(), twin.parameters()):
        torch.testing.assert_close(actual, expected, rtol=1e-4, atol=1e-5)


def test_float_that_turns_dynamic_in_a_resume_graph_compiles_with_aot_eager(monkeypatch):
    """A float read from a tensor (a break) changes every call and becomes a graph input; AOTAutograd refuses to
    tensorify it when it only decides a branch (TensorifyScalarRestartAnalysis): jitcore captures again with the
    float as a constant instead of failing (found by the fuzzer). Strict mode turns any backend failure into an
    error, so this passes only if every graph compiled."""
    monkeypatch.setattr(jit.config, "strict", True)

    def f(x, y):
        v = float(y.max())
        t = torch.sigmoid(x) + 1 if v > -0.35 else x / 2
        return t * 2

    compiled = jit.compile(f, backend="aot_eager")
    x = randn(3, seed=1)
    for s in (0.5, 1.5, 2.5, -3.5, 4.0):
        y = torch.full((3,), s)
        torch.testing.assert_close(compiled(x, y), f(x, y))
