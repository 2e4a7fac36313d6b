"""End to end: a stack of blocks with a graph break inside each block compiles one set of graphs for the block class
from the first call, however many blocks there are (Note [Instances shared by structure]).

A block read from a module that holds another module of its type (a `ModuleList`, a `Sequential`, two attributes
of one class) gets the compiled copy of its forward captured by structure from its first call, and so do the modules
its frame reads through it and the values its resume functions receive; what differs between blocks (training
flag, hooks, parameter shapes, submodule types) still misses and gets graphs of its own.
"""
import functools
import io

import pytest
import torch
from torch import nn

import jitcore as jit
from jitcore.runtime import install
from tests.support import check_against_eager, randn

SINK = io.StringIO()


class Block(nn.Module):
    def __init__(self, d=4, hidden=8):
        super().__init__()
        self.up = nn.Linear(d, hidden)
        self.down = nn.Linear(hidden, d)
        self.scale = nn.Identity()

    def forward(self, x):
        h = torch.relu(self.up(x))
        print("block", file=SINK)  # a graph break inside every block
        return x + self.down(h) * 0.5


class Mixer(nn.Module):
    """A break inside a call whose result is still to be combined: `self.scale` waits on the stack."""

    def __init__(self, d=4):
        super().__init__()
        self.inner = Block(d)
        self.scale = nn.Tanh()

    def forward(self, x):
        return x + self.scale(self.inner(x))


class EarlyBreak(nn.Module):
    """Breaks before reading `self`: the resume function still gets `self` by structure."""

    def __init__(self, d=4):
        super().__init__()
        self.lin = nn.Linear(d, d)

    def forward(self, x):
        print("early", file=SINK)
        return torch.tanh(self.lin(x)) + x


class Stack(nn.Module):
    def __init__(self, n, make=Block):
        super().__init__()
        torch.manual_seed(0)
        self.blocks = nn.Sequential(*[make() for _ in range(n)])

    def forward(self, x):
        return self.blocks(x) * 2


def entries_by_code() -> dict:
    found = {}
    for cache in install.ALL_CACHES:
        if cache.entries:
            found.setdefault(cache.code.co_qualname, []).append(len(cache.entries))
    return found


def grad_input(seed=0):
    """An input that requires grad, as every block's output does: the first block sees what the others see."""
    return randn(2, 4, seed=seed).requires_grad_()


def graphs_for(model, x) -> int:
    jit.reset()
    return check_against_eager(model, (x,), (x + 1,), expected_graphs=None).graph_count


def test_graph_count_does_not_grow_with_the_number_of_blocks():
    x = grad_input()
    two, twelve = graphs_for(Stack(2), x), graphs_for(Stack(12), x)
    # the stack's own graph, the block before its break, the block after it: once for every block
    assert twelve == two == 3


def test_each_block_code_has_one_entry_from_the_first_call():
    jit.reset()
    check_against_eager(Stack(12), (grad_input(),), expected_graphs=3)
    found = entries_by_code()
    assert found["Block.forward"] == [1, 1], found  # the forward and its resume function


def test_value_waiting_on_the_stack_is_shared_by_structure():
    x = grad_input()
    two, eight = graphs_for(Stack(2, Mixer), x), graphs_for(Stack(8, Mixer), x)
    assert eight == two
    found = entries_by_code()
    assert found["Mixer.forward"] == found["Block.forward"] == [1, 1], found


def test_self_unread_before_the_break_is_shared_by_structure():
    x = grad_input()
    two, eight = graphs_for(Stack(2, EarlyBreak), x), graphs_for(Stack(8, EarlyBreak), x)
    assert eight == two
    found = entries_by_code()
    assert found["EarlyBreak.forward"] == [1, 1], found


@pytest.fixture
def loops_resume(monkeypatch):
    """The loop over the blocks resumes in graphs, where the break's callee is decided with what capture knows
    (Note [Sharing follows the arguments]); a loop run natively (the default, Note [Breaks inside loops]) cannot
    tell whether a twin follows, so it shares a module's forward by structure from the start."""
    monkeypatch.setattr(jit.config, "loop_breaks", "resume")


@pytest.mark.usefixtures("loops_resume")
def test_module_called_alone_is_guarded_by_identity():
    # no twin beside it: the callee copy starts by identity, its module state batched and pinned
    jit.reset()
    check_against_eager(Stack(1), (randn(2, 4),), expected_graphs=3)
    jit.reset()
    compiled = jit.compile(Stack(1), backend="eager")
    compiled(randn(2, 4))
    block_caches = [c for c in install.ALL_CACHES if c.entries and c.code.co_qualname == "Block.forward"]
    assert block_caches and all((("local", "self"),) not in c.policy.structural_paths for c in block_caches)


def test_block_in_training_mode_misses_matches_eager():
    model = Stack(4)
    model.blocks[2].train()
    model.eval()
    model.blocks[2].training = True
    check_against_eager(model, (randn(2, 4),), (randn(2, 4, seed=3),), expected_graphs=None)
    model.blocks[1].training = True  # now the entry for a block in training serves it too
    check_against_eager(model, (randn(2, 4),), expected_graphs=None)


def test_hook_on_one_block_runs_matches_eager():
    model = Stack(4)
    model.blocks[1].register_forward_hook(lambda module, args, out: out * 10)
    model.blocks[3].down.register_forward_pre_hook(lambda module, args: (args[0] - 1,))
    check_against_eager(model, (randn(2, 4),), (randn(2, 4, seed=3),), expected_graphs=None)


def test_block_with_other_parameter_shapes_misses_matches_eager():
    model = Stack(4)
    torch.manual_seed(1)
    model.blocks[2] = Block(hidden=16)
    counting = check_against_eager(model, (randn(2, 4),), (randn(2, 4, seed=3),), expected_graphs=None)
    assert counting.graph_count > graphs_for(Stack(4), randn(2, 4))


def test_block_with_other_submodule_type_misses_matches_eager():
    model = Stack(4)
    model.blocks[1].scale = nn.Tanh()
    model.blocks[3].up = nn.Linear(4, 8, bias=False)
    check_against_eager(model, (randn(2, 4),), (randn(2, 4, seed=3),), expected_graphs=None)


def test_weights_changed_between_calls_are_read_matches_eager():
    model = Stack(6)
    compiled = jit.compile(model, backend="eager")
    x = randn(2, 4)
    torch.testing.assert_close(compiled(x), model(x))
    with torch.no_grad():
        for block in model.blocks:
            block.down.weight.mul_(-2.0)
    torch.testing.assert_close(compiled(x), model(x))


class Stage(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.mix = nn.Linear(4, 4)
        self.blocks = nn.Sequential(*[Block() for _ in range(n)])

    def forward(self, x):
        x = self.mix(x)
        return self.blocks(x)


def test_stages_with_other_block_counts_share_the_stage_graph_matches_eager():
    # the stage frame only calls its block list (whose own frame reads it): how many blocks it holds is not
    # guarded there, so stages of 2, 3 and 5 blocks share the stage's entry
    jit.reset()
    torch.manual_seed(0)
    model = nn.Sequential(Stage(2), Stage(3), Stage(5))
    check_against_eager(model, (grad_input(),), (grad_input(seed=2),), expected_graphs=None)
    found = entries_by_code()
    assert found["Stage.forward"] == [1, 1], found  # the forward and its resume function
    assert found["Block.forward"] == [1, 1], found


# -- sharing follows the arguments (Note [Sharing follows the arguments], capture/continuation.py) -----------
def passthrough(func):
    """A decorator that hands its receiver on inside `*args` (transformers' deprecate_kwarg)."""
    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return func(*args, **kwargs)
    return wrapped


class Router(nn.Module):
    def __init__(self, d=4):
        super().__init__()
        self.gate = nn.Linear(d, d)

    def forward(self, x):
        h = self.gate(x)
        print("router", file=SINK)
        return torch.softmax(h, -1)


class Experts(nn.Module):
    """Reached in method form (`self.experts.mix(h)`), with a router of the same class as its owner's."""

    def __init__(self, d=4):
        super().__init__()
        self.router = Router(d)
        self.proj = nn.Linear(d, d)

    def mix(self, x):
        weights = self.router(x.cos())
        return self.proj(x) * weights


def checkpointed(cls):
    """GradientCheckpointingLayer's shape: the class's forward becomes a function that hands `self` on in *args."""
    inner = cls.forward

    @functools.wraps(inner)
    def checkpointing(self, *args, **kwargs):
        return inner(self, *args, **kwargs)
    cls.forward = checkpointing
    return cls


@checkpointed
class WrappedBlock(nn.Module):
    def __init__(self, d=4):
        super().__init__()
        self.router = Router(d)
        self.experts = Experts(d)

    @passthrough
    def forward(self, x, scale=1.0):
        y = x.sin()
        return y + self.experts.mix(y) * scale + self.router(y)


class WrappedStack(nn.Module):
    def __init__(self, n):
        super().__init__()
        torch.manual_seed(0)
        self.layers = nn.ModuleList([WrappedBlock() for _ in range(n)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x, scale=0.5)
        return x * 2


@pytest.mark.parametrize("grad", [False, True])
def test_receiver_handed_through_wrappers_is_shared_from_the_first_call(grad):
    jit.reset()
    x = grad_input() if grad else randn(2, 4)
    with torch.set_grad_enabled(grad):
        check_against_eager(WrappedStack(3), (x,), (x + 1,), expected_graphs=None)
    found = entries_by_code()
    for code in ("passthrough.<locals>.wrapped", "WrappedBlock.forward", "Experts.mix", "Router.forward",
                 "checkpointed.<locals>.checkpointing"):
        assert all(count == 1 for count in found[code]), (code, found)


@pytest.mark.usefixtures("loops_resume")
def test_module_passed_as_an_argument_beside_a_twin_is_shared():
    class Apply(nn.Module):
        def __init__(self, n):
            super().__init__()
            torch.manual_seed(0)
            self.blocks = nn.ModuleList([Block() for _ in range(n)])

        def forward(self, x):
            for block in self.blocks:
                x = run(block, x)
            return x

    jit.reset()
    check_against_eager(Apply(4), (grad_input(),), expected_graphs=None)
    found = entries_by_code()
    assert found["run"] == [1, 1] and found["Block.forward"] == [1, 1], found


def run(block, x):
    y = x * 3
    return block(y) - 1
