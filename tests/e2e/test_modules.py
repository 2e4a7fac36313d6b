"""End to end: compiled torch.nn modules, through `jit.compile(module)`'s wrapper module.

Each module test runs eager and compiled on the same module (the wrapper shares its parameters), requires eager-equal
results and one graph, and checks that the wrapper stays usable as a module: parameters, state_dict, train/eval,
in-place parameter updates and attribute replacement.
"""

import torch
from torch import nn

import jitcore as jit
from tests.support import arg_sets, assert_same, check_against_eager, compare_call, randn


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(3, 8)
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class WithBuffer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("offset", torch.arange(3, dtype=torch.float32))

    def forward(self, x):
        return x + self.offset


class WithScale(nn.Module):
    def __init__(self, scale: float) -> None:
        super().__init__()
        self.linear = nn.Linear(3, 3)
        self.scale = scale

    def forward(self, x):
        return self.linear(x) * self.scale


class TrainingDependent(nn.Module):
    def forward(self, x):
        if self.training:
            return x * 2
        return x * 3


def _module(cls, *args, **kwargs):
    torch.manual_seed(0)
    return cls(*args, **kwargs)


# Results equal eager, one graph


def test_linear_matches_eager():
    check_against_eager(_module(nn.Linear, 3, 2), *arg_sets((4, 3)))


def test_sequential_linear_relu_linear_matches_eager():
    model = _module(nn.Sequential, nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2))
    check_against_eager(model, *arg_sets((4, 3)))


def test_layer_norm_matches_eager():
    check_against_eager(_module(nn.LayerNorm, 3), *arg_sets((4, 3)))


def test_conv2d_matches_eager():
    check_against_eager(_module(nn.Conv2d, 2, 3, 3, padding=1), *arg_sets((1, 2, 5, 5)))


def test_user_mlp_module_matches_eager():
    check_against_eager(_module(MLP), *arg_sets((4, 3)))


def test_module_with_buffer_matches_eager():
    check_against_eager(_module(WithBuffer), *arg_sets((4, 3)))


def test_module_with_constant_attribute_matches_eager():
    check_against_eager(_module(WithScale, 2.0), *arg_sets((4, 3)))


def test_module_in_eval_mode_matches_eager():
    model = _module(nn.Sequential, nn.Linear(3, 8), nn.Dropout(0.5), nn.Linear(8, 2)).eval()
    check_against_eager(model, *arg_sets((4, 3)))


# The wrapper is a module


def test_compiled_module_is_a_module(counting):
    compiled = jit.compile(_module(MLP), backend=counting)
    assert isinstance(compiled, nn.Module)


def test_compiled_module_parameters_are_the_original_objects(counting):
    model = _module(MLP)
    compiled = jit.compile(model, backend=counting)
    original = list(model.parameters())
    wrapped = list(compiled.parameters())
    assert len(wrapped) == len(original)
    assert all(w is o for w, o in zip(wrapped, original))


def test_compiled_module_state_dict_keys_equal_the_original(counting):
    model = _module(MLP)
    compiled = jit.compile(model, backend=counting)
    assert list(compiled.state_dict().keys()) == list(model.state_dict().keys())
    assert_same(dict(model.state_dict()), dict(compiled.state_dict()))


def test_compiled_module_eval_propagates_to_the_original(counting):
    model = _module(nn.Sequential, nn.Linear(3, 8), nn.Dropout(0.5), nn.Linear(8, 2))
    compiled = jit.compile(model, backend=counting)
    assert compiled.eval() is compiled
    assert not model.training
    assert all(not m.training for m in model.modules())
    assert not compiled.training


def test_compiled_module_train_propagates_to_the_original(counting):
    model = _module(nn.Sequential, nn.Linear(3, 8), nn.Dropout(0.5), nn.Linear(8, 2)).eval()
    compiled = jit.compile(model, backend=counting)
    compiled.train()
    assert model.training
    assert all(m.training for m in model.modules())
    assert compiled.training


def test_eval_mode_set_on_the_wrapper_changes_the_compiled_result(counting):
    model = TrainingDependent()
    compiled = jit.compile(model, backend=counting)
    compare_call(model, compiled, (randn(4, 3, seed=1),))
    compiled.eval()
    result = compare_call(model, compiled, (randn(4, 3, seed=2),))
    assert_same(randn(4, 3, seed=2) * 3, result)
    assert counting.graph_count == 2


def test_dropout_module_after_eval_matches_eager(counting):
    model = _module(nn.Sequential, nn.Linear(3, 8), nn.Dropout(0.5), nn.Linear(8, 2))
    compiled = jit.compile(model, backend=counting)
    compiled.eval()
    for arg_set in arg_sets((4, 3)):
        compare_call(model, compiled, arg_set)
    assert counting.graph_count == 1


# Changes to the module after compilation


def test_in_place_parameter_update_is_seen_without_recompiling(counting):
    model = _module(nn.Linear, 3, 2)
    compiled = jit.compile(model, backend=counting)
    x = randn(4, 3, seed=1)
    before = compare_call(model, compiled, (x,))
    with torch.no_grad():
        model.weight.add_(1)
    after = compare_call(model, compiled, (x,))
    assert not torch.allclose(before, after)
    assert counting.graph_count == 1


def test_in_place_buffer_update_is_seen_without_recompiling(counting):
    model = _module(WithBuffer)
    compiled = jit.compile(model, backend=counting)
    x = randn(4, 3, seed=1)
    compare_call(model, compiled, (x,))
    model.offset.mul_(-2)
    compare_call(model, compiled, (x,))
    assert counting.graph_count == 1


def test_replaced_constant_attribute_recompiles_with_the_new_value(counting):
    model = _module(WithScale, 2.0)
    compiled = jit.compile(model, backend=counting)
    x = randn(4, 3, seed=1)
    compare_call(model, compiled, (x,))
    model.scale = 3.0
    result = compare_call(model, compiled, (x,))
    with torch.no_grad():
        assert_same(model.linear(x) * 3.0, result.detach())
    assert counting.graph_count == 2


def test_replaced_submodule_is_seen_by_the_next_call(counting):
    model = _module(MLP)
    compiled = jit.compile(model, backend=counting)
    x = randn(4, 3, seed=1)
    compare_call(model, compiled, (x,))
    torch.manual_seed(1)
    model.fc2 = nn.Linear(8, 2)
    compare_call(model, compiled, (x,))  # a new graph or new graph inputs: either way the new weights are used
    assert counting.graph_count >= 1


def test_original_module_is_unchanged_by_compile(counting):
    model = _module(MLP)
    forward_before = type(model).forward
    jit.compile(model, backend=counting)
    assert type(model).forward is forward_before
    assert "forward" not in vars(model)
