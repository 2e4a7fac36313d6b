"""Runtime: objects the call makes itself are never guarded by identity after a graph break.

A module built in `forward` (`loss_fct = nn.CrossEntropyLoss()`, as Hugging Face heads do), a lambda or closure, or
a container of them, handed to the resume function as a live local, is a new object on every call: the resume
function captures it by structure from its first call (runtime/break_wiring.py), so the cache does not grow per
call. A repeated block with a break inside gets at most two entries per code (one by structure from the first call
where its container shows the repeat: tests/e2e/test_repeated_blocks_broken_inside.py), never one per instance up
to the cache limit.
"""

import torch
from torch import nn

import jitcore as jit
from jitcore.runtime import install
from tests.support import check_against_eager, check_registered_against_eager, randn


@jit.disable
def python_side(x):
    """Runs in Python: a graph break at the call."""
    return x


def labels(seed):
    return torch.randint(0, 5, (4,), generator=torch.Generator().manual_seed(seed))


class Head(nn.Module):
    def forward(self, scores, labels):
        loss_fct = nn.CrossEntropyLoss()
        scores = python_side(scores)
        return loss_fct(scores.view(-1, 5), labels.view(-1))


def test_loss_module_made_in_forward_matches_eager():
    check_against_eager(Head(), *[(randn(4, 5, seed=s), labels(s)) for s in range(4)],
                        expected_graphs=None)


def resume_entries(fn) -> list:
    """Entries of each resume function of `fn` (caches of codes named like fn's that are not fn's own code)."""
    code = getattr(fn, "forward", fn).__code__
    return [len(cache.entries) for cache in install.ALL_CACHES
            if cache.code.co_name == code.co_name and cache.code.co_filename == code.co_filename
            and cache.code is not code and cache.entries]


def test_loss_module_made_in_forward_one_entry_per_resume_function():
    jit.reset()
    head = Head()
    compiled = jit.compile(head, backend="eager")
    for seed in range(10):
        scores, targets = randn(4, 5, seed=seed), labels(seed)
        torch.testing.assert_close(compiled(scores, targets), head(scores, targets))
    assert resume_entries(Head) == [1]


def lambda_across_break(x):
    scale = lambda t: t * 3  # noqa: E731
    x = python_side(x)
    return scale(x) + 1


def closure_across_break(x, k):
    def shift(t):
        return t + k
    x = python_side(x)
    return shift(x)


def modules_in_a_dict_across_break(x):
    acts = {"a": nn.ReLU(), "b": nn.Tanh()}
    x = python_side(x)
    return acts["a"](x) + acts["b"](x)


def test_lambda_made_inside_keeps_one_resume_entry_matches_eager():
    jit.reset()
    check_against_eager(lambda_across_break, *[(randn(3, seed=s),) for s in range(10)], expected_graphs=None)
    assert resume_entries(lambda_across_break) == [1]


def test_closure_made_inside_matches_eager_both_doors():
    jit.reset()
    check_against_eager(closure_across_break, *[(randn(3, seed=s), s) for s in range(4)], expected_graphs=None)
    check_registered_against_eager(closure_across_break, *[(randn(3, seed=s), s) for s in range(4)])


def test_modules_in_a_dict_made_inside_keep_one_resume_entry_matches_eager():
    jit.reset()
    arg_sets = [(randn(3, seed=s),) for s in range(10)]
    check_against_eager(modules_in_a_dict_across_break, *arg_sets, expected_graphs=None)
    assert resume_entries(modules_in_a_dict_across_break) == [1]
    check_registered_against_eager(modules_in_a_dict_across_break, *arg_sets)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.norm = nn.LayerNorm(4)

    def forward(self, x):
        x = self.lin(x)
        x = python_side(x)
        return self.norm(x) + x


class Stack(nn.Module):
    def __init__(self, n):
        super().__init__()
        torch.manual_seed(0)
        self.blocks = nn.ModuleList(Block() for _ in range(n))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


def test_break_inside_twelve_blocks_stays_under_the_cache_limit_matches_eager():
    jit.reset()
    check_against_eager(Stack(12), (randn(2, 4, seed=1),), (randn(2, 4, seed=2),), expected_graphs=None)
    per_code = [len(cache.entries) for cache in install.ALL_CACHES if cache.entries]
    # at most: the first block by identity, every other by structure, and (for the loop's resume function, which
    # continues the loop: Note [Iterators carried across a break]) the loop's end with the code after it
    assert max(per_code) <= 3, per_code


def test_break_inside_twelve_blocks_registered_matches_eager():
    jit.reset()
    check_registered_against_eager(Stack(12), (randn(2, 4, seed=1),), (randn(2, 4, seed=2),))
    per_code = [len(cache.entries) for cache in install.ALL_CACHES if cache.entries]
    assert max(per_code) <= 2, per_code
