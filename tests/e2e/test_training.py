"""End to end: training through graphs captured by `jit.compile(model, backend=...)`.

Each test runs an eager model and a compiled deep copy of it side by side, from the same parameters and inputs, and
requires the same losses, gradients (of inputs and parameters), buffers (BatchNorm's running statistics) and, for
optimizer loops, the same parameters after every step. A CountingBackend in front of the real backend proves that
graphs were captured. Inductor compiles C++ on CPU (seconds per graph), so only the MLP runs under it.
"""

from __future__ import annotations

import copy
import math

import pytest
import torch
from torch import nn

import jitcore as jit
from jitcore.report.console import EVENTS
from tests.support import CountingBackend, randn

#: Gradients of a compiled model are the same math in another order (AOTAutograd's decomposed backward, fused
#: kernels): equal up to float32 rounding, not bit for bit.
_TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 16)
        self.fc3 = nn.Linear(16, 4)

    def forward(self, x):
        x = torch.relu(self.fc1(x))
        x = torch.tanh(self.fc2(x))
        return self.fc3(x)


class SmallCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(6)
        self.conv2 = nn.Conv2d(6, 8, 3, stride=2)
        self.bn2 = nn.BatchNorm2d(8)
        self.head = nn.Linear(8, 5)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = torch.relu(self.bn2(self.conv2(x)))
        x = x.mean(dim=(2, 3))
        return self.head(x)


class HandWrittenAttention(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        batch, length, dim = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(batch, length, self.heads, dim // self.heads).transpose(1, 2)
        k = k.view(batch, length, self.heads, dim // self.heads).transpose(1, 2)
        v = v.view(batch, length, self.heads, dim // self.heads).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(dim // self.heads)
        mixed = torch.softmax(scores, dim=-1) @ v
        return self.out(mixed.transpose(1, 2).reshape(batch, length, dim))


class TransformerBlock(nn.Module):
    """Pre-norm block: x + attention(LayerNorm(x)), then x + MLP(LayerNorm(x))."""

    def __init__(self, dim: int = 16, heads: int = 2, library_attention: bool = False) -> None:
        super().__init__()
        self.library_attention = library_attention
        self.norm1 = nn.LayerNorm(dim)
        if library_attention:
            self.attention = nn.MultiheadAttention(dim, heads, batch_first=True)
        else:
            self.attention = HandWrittenAttention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        h = self.norm1(x)
        if self.library_attention:
            h = self.attention(h, h, h, need_weights=False)[0]
        else:
            h = self.attention(h)
        x = x + h
        return x + self.mlp(self.norm2(x))


class PrintingMLP(nn.Module):
    """A `print` between two layers: a prefix graph, the print natively, then the resume function's graph."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        print("between layers")
        return self.fc2(h)


def _seeded(cls, *args, **kwargs) -> nn.Module:
    torch.manual_seed(0)
    return cls(*args, **kwargs)


def _input(*shape: int, seed: int, requires_grad: bool = True) -> torch.Tensor:
    return randn(*shape, seed=seed).requires_grad_(requires_grad)


def _twin(model: nn.Module, backend) -> tuple[nn.Module, nn.Module, CountingBackend]:
    """A deep copy of `model` compiled with `backend` behind a CountingBackend: (copy, compiled copy, counter)."""
    counting = backend if isinstance(backend, CountingBackend) else CountingBackend(backend)
    twin = copy.deepcopy(model)
    return twin, jit.compile(twin, backend=counting), counting


def _assert_step_matches(eager_model, eager_call, compiled_model, compiled_call, x) -> None:
    """One forward and backward of each model on clones of `x`: same loss, input grad, parameter grads, buffers."""
    x_eager = x.detach().clone().requires_grad_(x.requires_grad)
    x_compiled = x.detach().clone().requires_grad_(x.requires_grad)
    eager_out = eager_call(x_eager)
    compiled_out = compiled_call(x_compiled)
    torch.testing.assert_close(compiled_out, eager_out, **_TOLERANCE)
    assert compiled_out.requires_grad and compiled_out.grad_fn is not None
    # a loss that weights each output differently, so a wrong gradient cannot hide behind a symmetric sum
    weights = randn(*eager_out.shape, seed=99)
    (eager_out * weights).sum().backward()
    (compiled_out * weights).sum().backward()
    if x.requires_grad:
        torch.testing.assert_close(x_compiled.grad, x_eager.grad, **_TOLERANCE)
    _assert_same_state(eager_model, compiled_model, grads=True)


def _assert_same_state(eager_model: nn.Module, compiled_model: nn.Module, *, grads: bool) -> None:
    """Parameters (and their .grad, None where eager has None), and every buffer, equal between the two models."""
    compiled_parameters = dict(compiled_model.named_parameters())
    for name, expected in eager_model.named_parameters():
        actual = compiled_parameters[name]
        torch.testing.assert_close(actual, expected, **_TOLERANCE, msg=lambda m: f"parameter {name}: {m}")
        if grads and expected.grad is None:
            assert actual.grad is None, f"parameter {name} got a gradient through the compiled model, none in eager"
        elif grads:
            assert actual.grad is not None, f"parameter {name} got no gradient through the compiled model"
            torch.testing.assert_close(actual.grad, expected.grad, **_TOLERANCE, msg=lambda m: f"{name}.grad: {m}")
    compiled_buffers = dict(compiled_model.named_buffers())
    for name, expected in eager_model.named_buffers():
        torch.testing.assert_close(compiled_buffers[name], expected, **_TOLERANCE, msg=lambda m: f"buffer {name}: {m}")


# Gradients equal eager's, one forward and backward per input set


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_mlp_grads_match_eager(backend):
    model = _seeded(MLP)
    twin, compiled, counting = _twin(model, backend)
    for seed in (1, 2):
        model.zero_grad()
        twin.zero_grad()
        _assert_step_matches(model, model, twin, compiled, _input(6, 8, seed=seed))
    assert counting.graph_count == 1


def test_mlp_grads_match_eager_with_inductor():
    model = _seeded(MLP)
    twin, compiled, counting = _twin(model, "inductor")
    _assert_step_matches(model, model, twin, compiled, _input(6, 8, seed=1))
    assert counting.graph_count == 1


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_mlp_parameter_grads_match_eager_when_the_input_needs_none(backend):
    model = _seeded(MLP)
    twin, compiled, counting = _twin(model, backend)
    _assert_step_matches(model, model, twin, compiled, _input(6, 8, seed=1, requires_grad=False))
    assert counting.graph_count == 1


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_cnn_with_batchnorm_in_train_mode_matches_grads_and_running_stats(backend):
    model = _seeded(SmallCNN)
    twin, compiled, counting = _twin(model, backend)
    for seed in (1, 2, 3):  # the running statistics accumulate over the calls
        model.zero_grad()
        twin.zero_grad()
        _assert_step_matches(model, model, twin, compiled, _input(4, 3, 10, 10, seed=seed))
    assert twin.bn1.num_batches_tracked.item() == 3
    assert counting.graph_count == 1


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_cnn_in_eval_mode_uses_running_stats_like_eager(backend):
    model = _seeded(SmallCNN)
    twin, compiled, counting = _twin(model, backend)
    _assert_step_matches(model, model, twin, compiled, _input(4, 3, 10, 10, seed=1))
    model.eval()
    compiled.eval()
    model.zero_grad()
    twin.zero_grad()
    _assert_step_matches(model, model, twin, compiled, _input(4, 3, 10, 10, seed=2))
    assert twin.bn1.num_batches_tracked.item() == 1  # eval mode does not update the statistics


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_transformer_block_with_hand_written_attention_grads_match_eager(backend):
    model = _seeded(TransformerBlock)
    twin, compiled, counting = _twin(model, backend)
    for seed in (1, 2):
        model.zero_grad()
        twin.zero_grad()
        _assert_step_matches(model, model, twin, compiled, _input(2, 5, 16, seed=seed))
    assert counting.graph_count == 1


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_transformer_block_with_multihead_attention_grads_match_eager(backend):
    model = _seeded(TransformerBlock, library_attention=True)
    twin, compiled, counting = _twin(model, backend)
    for seed in (1, 2):
        model.zero_grad()
        twin.zero_grad()
        _assert_step_matches(model, model, twin, compiled, _input(2, 5, 16, seed=seed))
    assert counting.graph_count == 1


# Optimizer loops: parameters equal eager's after every step


def _optimizer(name: str, model: nn.Module) -> torch.optim.Optimizer:
    if name == "sgd":
        return torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return torch.optim.Adam(model.parameters(), lr=0.01)


def _train_side_by_side(model: nn.Module, backend, optimizer: str, shape: tuple[int, ...], steps: int = 5):
    twin, compiled, counting = _twin(model, backend)
    eager_optimizer = _optimizer(optimizer, model)
    compiled_optimizer = _optimizer(optimizer, twin)
    for step in range(steps):
        eager_optimizer.zero_grad()
        compiled_optimizer.zero_grad()
        _assert_step_matches(model, model, twin, compiled, _input(*shape, seed=10 + step, requires_grad=False))
        eager_optimizer.step()
        compiled_optimizer.step()
        _assert_same_state(model, twin, grads=False)
    return counting


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_mlp_optimizer_loop_matches_eager_parameters_after_each_step(backend, optimizer):
    counting = _train_side_by_side(_seeded(MLP), backend, optimizer, (6, 8))
    assert counting.graph_count == 1  # in-place parameter updates need no recompile


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_cnn_optimizer_loop_matches_eager_parameters_after_each_step(optimizer):
    counting = _train_side_by_side(_seeded(SmallCNN), "aot_eager", optimizer, (4, 3, 10, 10))
    assert counting.graph_count == 1


def test_transformer_block_adam_loop_matches_eager_parameters_after_each_step():
    counting = _train_side_by_side(_seeded(TransformerBlock), "aot_eager", "adam", (2, 5, 16))
    assert counting.graph_count == 1


# Grad mode, requires_grad and autograd details around the captured graph


def test_call_under_no_grad_then_training_recompiles_for_grad_mode():
    model = _seeded(MLP)
    twin, compiled, counting = _twin(model, "aot_eager")
    with torch.no_grad():
        assert not compiled(_input(6, 8, seed=1)).requires_grad
    _assert_step_matches(model, model, twin, compiled, _input(6, 8, seed=2))
    assert counting.graph_count == 2  # grad mode is guarded: one entry for inference, one for training
    recompiles = [message for topic, message in EVENTS if topic == "recompiles"]
    assert any("grad mode" in message for message in recompiles), recompiles


def test_input_that_starts_requiring_grad_recompiles_and_gets_its_gradient():
    counting = CountingBackend("aot_eager")

    def f(x, w):
        return (x @ w).tanh()

    compiled = jit.compile(f, backend=counting)
    w = randn(8, 3).requires_grad_()
    compiled(randn(4, 8, seed=1), w).sum().backward()
    x = _input(4, 8, seed=1)
    w.grad = None
    compiled(x, w).sum().backward()
    x_eager, w_eager = _input(4, 8, seed=1), randn(8, 3).requires_grad_()
    f(x_eager, w_eager).sum().backward()
    torch.testing.assert_close(x.grad, x_eager.grad)
    torch.testing.assert_close(w.grad, w_eager.grad)
    assert counting.graph_count == 2


def test_loss_computed_inside_a_compiled_step_function_backpropagates_into_the_model():
    model = _seeded(MLP)
    twin = copy.deepcopy(model)
    counting = CountingBackend("aot_eager")

    def loss_of(network, x, target):
        return nn.functional.cross_entropy(network(x), target)

    compiled = jit.compile(loss_of, backend=counting)
    x, target = randn(6, 8, seed=1), torch.tensor([0, 1, 2, 3, 0, 1])
    expected = loss_of(model, x, target)
    actual = compiled(twin, x, target)
    torch.testing.assert_close(actual, expected)
    expected.backward()
    actual.backward()
    _assert_same_state(model, twin, grads=True)
    assert counting.graph_count == 1


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_dropout_in_train_mode_draws_the_same_mask_as_eager_from_the_same_seed(backend):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.5), nn.Linear(8, 2))
    twin, compiled, counting = _twin(model, backend)
    x = randn(6, 8, seed=1)
    torch.manual_seed(5)
    expected = model(x)
    torch.manual_seed(5)
    actual = compiled(x)
    torch.testing.assert_close(actual, expected)
    expected.sum().backward()
    actual.sum().backward()
    _assert_same_state(model, twin, grads=True)
    assert counting.graph_count == 1


class _NoGradScale(nn.Module):
    """A scale computed under torch.no_grad() inside forward: gradients must not flow through it."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        with torch.no_grad():
            scale = self.fc(x).abs().mean()
        return self.fc(x) * scale + self.fc(x).detach()


def test_no_grad_region_and_detach_inside_forward_stop_gradients_like_eager():
    model = _seeded(_NoGradScale)
    twin, compiled, counting = _twin(model, "aot_eager")
    _assert_step_matches(model, model, twin, compiled, _input(4, 8, seed=1))
    assert counting.graph_count == 1


def test_in_place_relu_between_layers_matches_eager_grads():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(inplace=True), nn.Linear(8, 2))
    twin, compiled, counting = _twin(model, "aot_eager")
    _assert_step_matches(model, model, twin, compiled, _input(4, 8, seed=1))
    assert counting.graph_count == 1


def test_gradients_accumulate_over_calls_before_one_backward():
    model = _seeded(MLP)
    twin, compiled, counting = _twin(model, "aot_eager")
    expected = sum(model(randn(4, 8, seed=seed)).sum() for seed in (1, 2, 3))
    actual = sum(compiled(randn(4, 8, seed=seed)).sum() for seed in (1, 2, 3))
    expected.backward()
    actual.backward()
    _assert_same_state(model, twin, grads=True)
    assert counting.graph_count == 1


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_unfreezing_a_layer_recompiles_and_the_layer_gets_gradients(backend):
    model = _seeded(MLP)
    model.fc1.requires_grad_(False)
    twin, compiled, counting = _twin(model, backend)
    _assert_step_matches(model, model, twin, compiled, _input(4, 8, seed=1, requires_grad=False))
    assert twin.fc1.weight.grad is None
    for network in (model, twin):
        network.fc1.requires_grad_(True)
        network.zero_grad()
    _assert_step_matches(model, model, twin, compiled, _input(4, 8, seed=2, requires_grad=False))
    assert counting.graph_count == 2


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_freezing_a_layer_recompiles_and_the_layer_gets_no_gradient(backend):
    model = _seeded(MLP)
    twin, compiled, counting = _twin(model, backend)
    compiled(_input(4, 8, seed=1)).sum().backward()
    for network in (model, twin):
        network.fc1.requires_grad_(False)
        network.zero_grad(set_to_none=True)
    compiled(_input(4, 8, seed=2)).sum().backward()
    assert twin.fc1.weight.grad is None and twin.fc2.weight.grad is not None
    assert counting.graph_count == 2


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_bfloat16_autocast_forward_and_backward_match_eager(backend):
    model = _seeded(MLP)
    twin, compiled, counting = _twin(model, backend)
    x = randn(4, 8, seed=1)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        expected, actual = model(x), compiled(x)
    assert actual.dtype == expected.dtype == torch.bfloat16
    torch.testing.assert_close(actual, expected)
    expected.float().sum().backward()
    actual.float().sum().backward()
    _assert_same_state(model, twin, grads=True)
    assert counting.graph_count == 1


class _WithRunningMean(nn.Module):
    """A buffer updated in place under no_grad during forward (an exponential moving average of activations)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 4)
        self.register_buffer("average", torch.zeros(4))

    def forward(self, x):
        y = self.fc(x)
        with torch.no_grad():
            self.average.mul_(0.9).add_(y.mean(0) * 0.1)
        return {"scaled": y * 2, "centred": (y - self.average).tanh()}


def test_buffer_updated_in_forward_and_dict_outputs_match_eager_over_steps():
    model = _seeded(_WithRunningMean)
    twin, compiled, counting = _twin(model, "aot_eager")
    for seed in (1, 2, 3):
        expected, actual = model(randn(4, 8, seed=seed)), compiled(randn(4, 8, seed=seed))
        assert list(actual) == ["scaled", "centred"]
        (expected["scaled"].sum() + expected["centred"].pow(2).sum()).backward()
        (actual["scaled"].sum() + actual["centred"].pow(2).sum()).backward()
        _assert_same_state(model, twin, grads=True)
    assert counting.graph_count == 1


class _TiedEmbedding(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embedding = nn.Embedding(10, 8)
        self.out = nn.Linear(8, 10, bias=False)
        self.out.weight = self.embedding.weight

    def forward(self, ids):
        return self.out(torch.tanh(self.embedding(ids)))


def test_tied_weights_reach_the_backend_as_one_fake_tensor_and_get_both_gradient_contributions():
    model = _seeded(_TiedEmbedding)
    twin, compiled, counting = _twin(model, "aot_eager")
    ids = torch.tensor([[1, 2, 3], [4, 5, 6]])
    model(ids).pow(2).sum().backward()
    compiled(ids).pow(2).sum().backward()
    _assert_same_state(model, twin, grads=True)
    # one object reached from two sources is one graph input (guarded `is`, as Dynamo de-duplicates inputs)
    inputs = counting.example_inputs[0]
    assert len(inputs) == 2
    assert tuple(inputs[1].shape) == tuple(model.embedding.weight.shape)


# Graph breaks inside a training step


def test_print_between_layers_splits_the_graph_and_grads_still_match_eager(capsys):
    model = _seeded(PrintingMLP)
    twin, compiled, counting = _twin(model, "aot_eager")
    for seed in (1, 2):
        model.zero_grad()
        twin.zero_grad()
        _assert_step_matches(model, model, twin, compiled, _input(6, 8, seed=seed))
        assert capsys.readouterr().out == "between layers\n" * 2  # once by eager, once by the compiled copy
    assert counting.graph_count == 2  # the prefix graph and the resume function's graph


def test_print_between_layers_adam_loop_matches_eager(capsys):
    counting = _train_side_by_side(_seeded(PrintingMLP), "aot_eager", "adam", (6, 8))
    assert capsys.readouterr().out == "between layers\n" * 10
    assert counting.graph_count == 2


@jit.disable
def _opaque_lookup(obj, name):
    return object.__getattribute__(obj, name)


class _OpaqueConfig:
    """A config object with its own __getattribute__, as transformers' PreTrainedConfig has, that runs code jitcore
    does not trace (a Python __getattribute__ alone is inlined): reading an attribute of it is a graph break."""

    def __init__(self, scale: float) -> None:
        self.scale = scale

    def __getattribute__(self, name):
        return _opaque_lookup(self, name)


class ConfiguredMLP(nn.Module):
    """Reads `self.config.scale` between two layers, the way Hugging Face models read their config in forward."""

    def __init__(self) -> None:
        super().__init__()
        self.config = _OpaqueConfig(0.5)
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        scale = self.config.scale
        return self.fc2(h) * scale


def test_config_attribute_break_between_layers_gives_eager_grads():
    model = _seeded(ConfiguredMLP)
    twin, compiled, counting = _twin(model, "aot_eager")
    for seed in (1, 2):
        model.zero_grad()
        twin.zero_grad()
        _assert_step_matches(model, model, twin, compiled, _input(6, 8, seed=seed))
    assert counting.graph_count >= 1


def test_config_attribute_break_between_layers_compiles_the_layers_after_it():
    """The attribute read runs in Python and the rest of forward (fc2, the scaling) is the resume function's graph,
    as after a print; it must not make the rest of forward native."""
    model = _seeded(ConfiguredMLP)
    twin, compiled, counting = _twin(model, "aot_eager")
    _assert_step_matches(model, model, twin, compiled, _input(6, 8, seed=1))
    assert counting.graph_count == 2, [gm.code for gm in counting.graphs]


# Backend failures during training


def _exploding_backend(gm, example_inputs):
    raise RuntimeError("backend exploded")


def test_failing_backend_runs_the_model_natively_with_eager_grads_and_says_so():
    model = _seeded(MLP)
    twin = copy.deepcopy(model)
    compiled = jit.compile(twin, backend=_exploding_backend)
    _assert_step_matches(model, model, twin, compiled, _input(6, 8, seed=1))
    messages = [message for topic, message in EVENTS if topic == "fallbacks"]
    assert any("_exploding_backend" in m and "forward" in m and "backend exploded" in m for m in messages), messages


def test_failing_backend_under_fullgraph_raises_backend_compile_error():
    compiled = jit.compile(_seeded(MLP), backend=_exploding_backend, fullgraph=True)
    with pytest.raises(jit.BackendCompileError, match="backend exploded") as info:
        compiled(_input(6, 8, seed=1))
    assert "_exploding_backend" in str(info.value)
