"""Capture: module instances and functions shared by structure (Note [Instances shared by structure]).

The first instance a frame sees is captured by identity; once another instance of the module misses, the path is
captured by type and structure and that one entry serves every instance with the same structure. The guards still
catch what changes the program: another submodule type, a hyper-parameter, `training`, hooks, a parameter of
another shape or dtype, an attribute moved onto the instance, two submodules becoming one object.
"""

import torch
from torch import nn

import jitcore as jit
from tests.support import CountingBackend, check_against_eager, check_registered_against_eager, randn


class Block(nn.Module):
    def __init__(self, d=4, eps=0.5):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)
        self.eps = eps

    def forward(self, x):
        return self.norm(self.lin(x)) * self.eps + x


def run(block, x):
    return block(x)


def blocks(n, **kwargs):
    torch.manual_seed(0)
    return [Block(**kwargs) for _ in range(n)]


def test_twelve_instances_share_one_structural_entry_matches_eager():
    x = randn(2, 4)
    # the first instance by identity, the second makes the path structural: two graphs for twelve instances
    check_against_eager(run, *[(b, x) for b in blocks(12)], expected_graphs=2)


def test_twelve_instances_share_one_entry_registered_matches_eager():
    x = randn(2, 4)
    counting = check_registered_against_eager(run, *[(b, x) for b in blocks(12)])
    assert counting.graph_count == 2


def test_changed_hyper_parameter_recompiles_matches_eager():
    a, b, c = blocks(3)
    c.eps = 2.0
    check_against_eager(run, (a, randn(2, 4)), (b, randn(2, 4)), (c, randn(2, 4)), expected_graphs=3)


class ByMode(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x) * (2 if self.training else 3)


def test_training_flag_of_another_instance_matches_eager():
    torch.manual_seed(0)
    a, b, c = ByMode(), ByMode(), ByMode().eval()
    check_against_eager(run, (a, randn(2, 4)), (b, randn(2, 4)), (c, randn(2, 4)), expected_graphs=3)


def test_changed_submodule_type_matches_eager():
    a, b, c = blocks(3)
    c.norm = nn.Identity()
    check_against_eager(run, (a, randn(2, 4)), (b, randn(2, 4)), (c, randn(2, 4)), expected_graphs=3)


def test_parameter_of_another_dtype_matches_eager():
    a, b, c = blocks(3)
    c.lin.weight = nn.Parameter(c.lin.weight.detach().double())
    c.lin.bias = nn.Parameter(c.lin.bias.detach().double())
    x = randn(2, 4)
    compiled = jit.compile(run, backend="eager")
    compiled(a, x), compiled(b, x)
    try:
        expected = run(c, x)
    except RuntimeError as eager_error:
        try:
            compiled(c, x)
        except RuntimeError as error:
            assert type(error) is type(eager_error)
        else:
            raise AssertionError("the compiled call did not raise as eager did")
    else:
        torch.testing.assert_close(compiled(c, x), expected)


def test_parameter_of_another_shape_matches_eager():
    a, b = blocks(2)
    c, = blocks(1, d=6)
    check_against_eager(run, (a, randn(2, 4)), (b, randn(2, 4)), (c, randn(2, 6)), expected_graphs=3)


def test_hook_added_to_an_instance_runs_matches_eager():
    a, b, c = blocks(3)
    c.lin.register_forward_hook(lambda module, args, out: out * 10)
    check_against_eager(run, (a, randn(2, 4)), (b, randn(2, 4)), (c, randn(2, 4)), expected_graphs=None)


def test_forward_assigned_on_an_instance_matches_eager():
    a, b, c = blocks(3)
    c.forward = lambda x: x - 1
    check_against_eager(run, (a, randn(2, 4)), (b, randn(2, 4)), (c, randn(2, 4)), expected_graphs=None)


class Pair(nn.Module):
    def __init__(self, tied=False):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = self.a if tied else nn.Linear(4, 4)

    def forward(self, x):
        if self.a is self.b:
            return self.a(x) * 2
        return self.a(x) + self.b(x)


def test_submodules_becoming_one_object_matches_eager():
    torch.manual_seed(0)
    check_against_eager(run, (Pair(), randn(2, 4)), (Pair(), randn(2, 4)), (Pair(tied=True), randn(2, 4)),
                        expected_graphs=3)


def test_tied_then_untied_instances_match_eager():
    torch.manual_seed(0)
    check_against_eager(run, (Pair(tied=True), randn(2, 4)), (Pair(tied=True), randn(2, 4)),
                        (Pair(), randn(2, 4)), expected_graphs=3)


def apply(fn, x):
    return fn(x)


def make_scale(k):
    return lambda x: x * k


def test_functions_with_one_code_share_one_entry_matches_eager():
    x = randn(3)
    check_against_eager(apply, *[(make_scale(k), x) for k in (1.0, 2.0, 3.0, 4.0)], expected_graphs=2)


def test_function_with_other_code_recompiles_matches_eager():
    x = randn(3)
    check_against_eager(apply, (make_scale(1.0), x), (make_scale(2.0), x), (lambda x: x - 1, x),
                        expected_graphs=3)


def test_parameters_are_graph_inputs_of_the_structural_entry():
    a, b, c = blocks(3)
    counting = CountingBackend()
    compiled = jit.compile(run, backend=counting)
    x = randn(2, 4)
    for block in (a, b, c):
        torch.testing.assert_close(compiled(block, x), run(block, x))
    # the structural graph reads the parameters as inputs: lin.weight, lin.bias, norm.weight, norm.bias and x
    assert len(counting.example_inputs[-1]) == 5
    with torch.no_grad():
        c.lin.weight.add_(1.0)
    torch.testing.assert_close(compiled(c, x), run(c, x))
    assert counting.graph_count == 2


def test_gradients_reach_each_instance_of_the_structural_entry():
    eager_blocks, compiled_blocks = blocks(4), blocks(4)
    compiled = jit.compile(run, backend="eager")
    x = randn(2, 4)
    for eager_block, compiled_block in zip(eager_blocks, compiled_blocks):
        run(eager_block, x).sum().backward()
        compiled(compiled_block, x).sum().backward()
    for eager_block, compiled_block in zip(eager_blocks, compiled_blocks):
        for (name, expected), (_, actual) in zip(eager_block.named_parameters(), compiled_block.named_parameters()):
            torch.testing.assert_close(actual.grad, expected.grad, msg=name)
