"""A break inside a module whose class overrides `__call__` and hands on to `super().__call__(...)` (transformers'
GradientCheckpointingLayer, the base of every decoder layer): the call a break runs natively gets the override's
compiled copy, and the super call inside it the forward's, so the layer's ops stay in graphs on both sides of the
break instead of the whole layer running in Python."""
import torch
from torch import nn

import jitcore as jit
from tests.support import CountingBackend, check_against_eager, randn


class CheckpointingLayer(nn.Module):
    """GradientCheckpointingLayer's shape: rewrite kwargs in training, then nn.Module's call."""

    checkpointing = False

    def __call__(self, *args, **kwargs):
        if self.checkpointing and self.training:
            kwargs["scale"] = 1.0
        return super().__call__(*args, **kwargs)


class Block(CheckpointingLayer):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)

    def forward(self, x, scale=2.0):
        x = self.a(x).relu()
        n = int(x.sum() > 0)  # the break: a tensor read as a Python number
        return self.b(x) * scale + n


class OneBlock(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.block = Block()

    def forward(self, x):
        return self.block(x.sin(), scale=0.5)


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.layers = nn.ModuleList([Block() for _ in range(3)])
        self.norm = nn.LayerNorm(8)

    def forward(self, x):
        x = self.norm(x)
        for layer in self.layers:
            x = layer(x, scale=0.5)
        return self.norm(x)


def graph_ops(counting: CountingBackend) -> int:
    return sum(1 for gm in counting.graphs for node in gm.graph.nodes if node.op.startswith("call"))


def torch_compile_counts(model, x) -> tuple:
    torch._dynamo.reset()
    counting = CountingBackend()
    with torch.no_grad():
        torch.compile(model, backend=counting)(x)
    torch._dynamo.reset()
    return counting.graph_count, graph_ops(counting)


def test_forward_under_the_override_is_captured_on_both_sides_of_the_break():
    counting = check_against_eager(OneBlock(), (randn(4, 8),), (randn(4, 8, seed=1),), expected_graphs=None)
    # before: the block ran in Python (one graph, `sin`); now forward is two graphs (linear, relu, sum, gt;
    # linear, mul, add) after the caller's prefix
    assert graph_ops(counting) >= 1 + 4 + 3
    graphs, ops = torch_compile_counts(OneBlock(), randn(4, 8))
    assert graph_ops(counting) >= ops


def test_repeated_overriding_blocks_share_entries_and_match_eager():
    model = Stack().eval()
    counting = CountingBackend()
    compiled = jit.compile(model, backend=counting)
    with torch.no_grad():
        for seed in range(3):
            x = randn(6, 8, seed=seed)
            torch.testing.assert_close(compiled(x), model(x))
    # the break lies inside Stack.forward's loop, so that frame runs natively (Note [Breaks inside loops]) and
    # each block's call runs its override's compiled copy: forward before and after the break, the three blocks
    # sharing their entries (the norms are torch's own modules, run as they are, as under torch.compile)
    assert graph_ops(counting) >= 4 + 3
    assert counting.graph_count <= 6
    _, ops = torch_compile_counts(Stack().eval(), randn(6, 8))
    assert graph_ops(counting) >= ops


def test_override_that_changes_the_arguments_still_runs():
    model = OneBlock().train()
    model.block.checkpointing = True  # the override replaces `scale`: its compiled copy must see that
    check_against_eager(model, (randn(4, 8),), expected_graphs=None)


def test_hooked_module_under_the_override_runs_its_hooks():
    model = OneBlock()
    seen = []
    model.block.register_forward_hook(lambda module, args, out: seen.append(out.shape))
    check_against_eager(model, (randn(4, 8),), expected_graphs=None)
    assert seen and all(shape == (4, 8) for shape in seen)
