"""Capture: nn.Module calls (user modules and torch.nn layers) inlined through `forward` into one graph.

Parameters and buffers must be graph inputs, not constants baked into the graph: tests count the graph's
placeholders or update a parameter in place between calls and require the new value to be used without a new graph.
Stateful layers (BatchNorm in train mode) run on two identical copies, eager and compiled, and compare the running
statistics after every call. Stateless ones use `check_against_eager` on the module itself.
"""

import copy

import pytest
import torch
from torch import nn

import jitcore as jit
from tests.support import arg_sets, assert_same, check_against_eager, compare_call, randint, randn


def _module(cls, *args, **kwargs):
    torch.manual_seed(0)
    return cls(*args, **kwargs)


def _placeholders(gm):
    return [node for node in gm.graph.nodes if node.op == "placeholder"]


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(3, 3)
        self.norm = nn.LayerNorm(3)

    def forward(self, x):
        return self.norm(torch.relu(self.linear(x)) + x)


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.first = Block()
        self.second = Block()
        self.head = nn.Linear(3, 2)

    def forward(self, x):
        return self.head(self.second(self.first(x)))


class WithHelpers(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(3, 4)
        self.scale = 0.5
        self.names = ["a", "b"]

    @property
    def width(self):
        return self.proj.out_features

    def _project(self, x):
        return self.proj(x) * self.scale

    def forward(self, x):
        y = self._project(x)
        return {name: y[:, : self.width // 2] + i for i, name in enumerate(self.names)}


class TrainingBranch(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(3, 3)

    def forward(self, x):
        y = self.linear(x)
        if self.training:
            return y * 2
        return y - 1


class Counter(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("calls", torch.zeros(()))

    def forward(self, x):
        self.calls.add_(1)
        return x * self.calls


class KeywordForward(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(3, 3)

    def forward(self, x, *, residual=None, scale=1.0):
        y = self.linear(x) * scale
        if residual is not None:
            y = y + residual
        return y


class CallsChildWithKeywords(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.child = KeywordForward()

    def forward(self, x):
        return self.child(x, residual=x, scale=2.0)


def _check_stateful(make, inputs, counting, *, train: bool):
    """Run eager and compiled on two identical copies; results and every buffer must agree after each call."""
    eager = make()
    copy_for_compile = copy.deepcopy(eager)
    eager.train(train)
    copy_for_compile.train(train)
    compiled = jit.compile(copy_for_compile, backend=counting)
    for x in inputs:
        assert_same(eager(x.clone()), compiled(x.clone()))
        assert_same(dict(eager.named_buffers()), dict(copy_for_compile.named_buffers()), "buffers")
    assert counting.graph_count == 1


# Parameters and buffers are graph inputs


def test_linear_weight_and_bias_are_graph_placeholders(counting):
    """x, weight and bias are the graph's three inputs: the parameters are not baked in as constants."""
    model = _module(nn.Linear, 3, 2)
    compiled = jit.compile(model, backend=counting)
    compare_call(model, compiled, (randn(4, 3, seed=1),))
    assert len(_placeholders(counting.graphs[0])) == 3


def test_buffer_is_a_graph_placeholder(counting):
    """BatchNorm1d in eval mode reads two buffers: x, weight, bias, running mean and running var are inputs."""
    model = _module(nn.BatchNorm1d, 3).eval()
    compiled = jit.compile(model, backend=counting)
    compare_call(model, compiled, (randn(4, 3, seed=1),))
    assert len(_placeholders(counting.graphs[0])) == 5


def test_nested_module_parameters_are_graph_placeholders(counting):
    """Every parameter of every submodule is an input of the one graph."""
    model = _module(Net)
    compiled = jit.compile(model, backend=counting)
    compare_call(model, compiled, (randn(4, 3, seed=1),))
    assert counting.graph_count == 1
    assert len(_placeholders(counting.graphs[0])) == 1 + len(list(model.parameters()))


def test_in_place_parameter_update_changes_result_without_recompiling(counting):
    """The weight is read at each call, not when the graph was made."""
    model = _module(Net)
    compiled = jit.compile(model, backend=counting)
    x = randn(4, 3, seed=1)
    before = compare_call(model, compiled, (x,))
    with torch.no_grad():
        model.head.weight.mul_(-2)
    after = compare_call(model, compiled, (x,))
    assert not torch.allclose(before, after)
    assert counting.graph_count == 1


def test_module_called_from_compiled_function_uses_current_parameters(counting):
    """A module reached through a closure: its parameters are graph inputs too."""
    model = _module(nn.Linear, 3, 2)

    def f(x):
        return model(x).relu()

    compiled = jit.compile(f, backend=counting)
    x = randn(4, 3, seed=1)
    compare_call(f, compiled, (x,))
    with torch.no_grad():
        model.bias.add_(5)
    compare_call(f, compiled, (x,))
    assert counting.graph_count == 1


def test_buffer_mutated_in_forward_is_seen_by_the_module(counting):
    """`self.calls.add_(1)` runs in the graph and updates the real buffer, like eager."""
    eager = Counter()
    for_compile = Counter()
    compiled = jit.compile(for_compile, backend=counting)
    for seed in (1, 2, 3):
        x = randn(4, 3, seed=seed)
        assert_same(eager(x), compiled(x))
        assert_same(eager.calls, for_compile.calls, "calls buffer")
    assert counting.graph_count == 1


def test_attribute_set_on_module_in_forward_is_seen_after_the_call(counting):
    """A Python attribute stored on `self` in forward is set on the real module, like eager."""

    class RemembersBatch(nn.Module):
        def forward(self, x):
            self.last_batch = x.shape[0]
            return x * 2

    eager, for_compile = RemembersBatch(), RemembersBatch()
    compiled = jit.compile(for_compile, backend=counting)
    for seed in (1, 2):
        x = randn(4, 3, seed=seed)
        assert_same(eager(x), compiled(x))
        assert for_compile.last_batch == eager.last_batch
    assert counting.graph_count == 1


# User modules


def test_submodule_forward_calls_are_inlined_matches_eager():
    check_against_eager(_module(Net), *arg_sets((4, 3)))


def test_user_module_with_attributes_helper_method_and_property_matches_eager():
    check_against_eager(_module(WithHelpers), *arg_sets((4, 3)))


def test_child_module_called_with_keyword_arguments_matches_eager():
    check_against_eager(_module(CallsChildWithKeywords), *arg_sets((4, 3)))


def test_compiled_module_called_with_keyword_arguments_matches_eager(counting):
    model = _module(KeywordForward)
    compiled = jit.compile(model, backend=counting)
    for seed in (1, 2):
        x, r = randn(4, 3, seed=seed), randn(4, 3, seed=seed + 10)
        assert_same(model(x, residual=r, scale=3.0), compiled(x, residual=r, scale=3.0))
    assert counting.graph_count == 1


def test_training_flag_branch_in_train_mode_matches_eager():
    check_against_eager(_module(TrainingBranch).train(), *arg_sets((4, 3)))


def test_training_flag_branch_in_eval_mode_matches_eager():
    check_against_eager(_module(TrainingBranch).eval(), *arg_sets((4, 3)))


def test_switching_train_and_eval_recompiles_and_matches_eager(counting):
    """`self.training` is guarded: eval() gives a second graph, train() again reuses the first."""
    model = _module(TrainingBranch)
    compiled = jit.compile(model, backend=counting)
    compare_call(model, compiled, (randn(4, 3, seed=1),))
    model.eval()
    compare_call(model, compiled, (randn(4, 3, seed=2),))
    assert counting.graph_count == 2
    model.train()
    compare_call(model, compiled, (randn(4, 3, seed=3),))
    assert counting.graph_count == 2


def test_sequential_of_user_blocks_matches_eager():
    check_against_eager(_module(nn.Sequential, Block(), Block(), nn.Linear(3, 1)), *arg_sets((4, 3)))


def test_module_returning_dict_of_named_children_outputs_matches_eager():
    class Multi(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = nn.Linear(3, 2)
            self.b = nn.Linear(3, 4)

        def forward(self, x):
            return {name: child(x) for name, child in self.named_children()}

    check_against_eager(_module(Multi), *arg_sets((4, 3)))


# torch.nn layers


def test_linear_matches_eager():
    check_against_eager(_module(nn.Linear, 3, 2), *arg_sets((4, 3)))


def test_linear_without_bias_matches_eager():
    check_against_eager(_module(nn.Linear, 3, 2, bias=False), *arg_sets((4, 3)))


def test_conv1d_matches_eager():
    check_against_eager(_module(nn.Conv1d, 2, 3, 3, padding=1), *arg_sets((2, 2, 6)))


def test_conv2d_with_stride_matches_eager():
    check_against_eager(_module(nn.Conv2d, 2, 3, 3, stride=2), *arg_sets((1, 2, 7, 7)))


def test_batch_norm_1d_train_mode_updates_running_stats_like_eager(counting):
    """Running mean, var and num_batches_tracked of the compiled copy equal eager's after every call."""
    _check_stateful(lambda: _module(nn.BatchNorm1d, 3), [randn(4, 3, seed=1), randn(4, 3, seed=2)], counting,
                    train=True)


def test_batch_norm_1d_eval_mode_matches_eager(counting):
    model = _module(nn.BatchNorm1d, 3)
    with torch.no_grad():
        model.running_mean.copy_(randn(3, seed=5))
        model.running_var.copy_(randn(3, seed=6).abs() + 0.5)
    _check_stateful(lambda: copy.deepcopy(model), [randn(4, 3, seed=1), randn(4, 3, seed=2)], counting,
                    train=False)


def test_batch_norm_2d_train_mode_updates_running_stats_like_eager(counting):
    """Running statistics of the compiled copy equal eager's after every call."""
    _check_stateful(lambda: _module(nn.BatchNorm2d, 2), [randn(2, 2, 3, 3, seed=1), randn(2, 2, 3, 3, seed=2)],
                    counting, train=True)


def test_batch_norm_2d_eval_mode_matches_eager(counting):
    _check_stateful(lambda: _module(nn.BatchNorm2d, 2), [randn(2, 2, 3, 3, seed=1), randn(2, 2, 3, 3, seed=2)],
                    counting, train=False)


def test_layer_norm_matches_eager():
    check_against_eager(_module(nn.LayerNorm, (2, 3)), *arg_sets((4, 2, 3)))


def test_embedding_matches_eager():
    model = _module(nn.Embedding, 10, 4)
    check_against_eager(model, (randint(5, high=5, seed=1).abs(),), (randint(5, high=5, seed=2).abs(),))


def test_dropout_in_eval_mode_is_identity_matches_eager():
    check_against_eager(_module(nn.Sequential, nn.Linear(3, 3), nn.Dropout(0.5)).eval(), *arg_sets((4, 3)))


def test_dropout_with_p_zero_in_train_mode_matches_eager():
    check_against_eager(_module(nn.Sequential, nn.Linear(3, 3), nn.Dropout(0.0)).train(), *arg_sets((4, 3)))


def test_multihead_attention_eval_matches_eager():
    class SelfAttention(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.attn = nn.MultiheadAttention(8, 2, batch_first=True)

        def forward(self, x):
            out, weights = self.attn(x, x, x)
            return out, weights

    check_against_eager(_module(SelfAttention).eval(), *arg_sets((2, 3, 8)))


@pytest.mark.parametrize(
    "activation",
    [nn.ReLU(), nn.GELU(), nn.SiLU(), nn.Tanh(), nn.Softmax(dim=-1)],
    ids=["relu", "gelu", "silu", "tanh", "softmax"],
)
def test_activation_module_after_linear_matches_eager(activation):
    check_against_eager(_module(nn.Sequential, nn.Linear(3, 4), activation), *arg_sets((4, 3)))


class _WithParameterContainers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.pl = torch.nn.ParameterList([torch.nn.Parameter(torch.full((3,), float(i))) for i in range(3)])
        self.pd = torch.nn.ParameterDict({"a": torch.nn.Parameter(torch.ones(3)),
                                          "b": torch.nn.Parameter(torch.zeros(3))})

    def forward(self, x):
        for p in self.pl:
            x = x + p
        x = x * self.pl[1] + self.pl[-1]
        for k, v in self.pd.items():
            x = x + v
        return x + self.pd["a"] + len(self.pl) + len(self.pd)


def test_parameter_list_and_dict_are_indexed_and_iterated_in_one_graph():
    check_against_eager(_WithParameterContainers(), (randn(3, seed=1),))


def _hooked():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    model[0].register_forward_hook(lambda mod, args, out: out * 10)
    model[2].register_forward_pre_hook(lambda mod, args: (args[0] + 1,))
    model[2].register_forward_pre_hook(lambda mod, args, kwargs: ((args[0] * 2,), kwargs), with_kwargs=True)
    model[1].register_forward_hook(lambda mod, args, kwargs, out: out - 1, with_kwargs=True)
    return model


def test_forward_hooks_and_pre_hooks_are_traced_into_one_graph():
    check_against_eager(_hooked(), (randn(3, 4, seed=1),), (randn(3, 4, seed=2),))


def test_hook_side_effects_happen_once_per_call_and_removal_recompiles(counting):
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Tanh())
    seen = []
    handle = model[0].register_forward_hook(lambda mod, args, out: seen.append(tuple(out.shape)))
    compiled = jit.compile(model, backend=counting)
    x = randn(2, 4, seed=1)
    torch.testing.assert_close(compiled(x), model(x))
    torch.testing.assert_close(compiled(x), model(x))
    assert seen == [(2, 4)] * 4 and counting.graph_count == 1
    handle.remove()
    torch.testing.assert_close(compiled(x), model(x))
    assert len(seen) == 4 and counting.graph_count == 2
