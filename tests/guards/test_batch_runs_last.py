"""The module-state batch runs after every per-value check (Note [Batches last], guards/compile.py).

A module that fills a cache dict on its first call leaves two entries: the first one captured with the dict empty,
which fails on every later call. The first entry must fail on the dict's keys without paying for the batch over
the module's parameters, attributes and hook dicts; only the entry that passes everything else runs it.
"""
from __future__ import annotations

import torch

import jitcore as jit
from jitcore.guards.torch_checks import BatchIdentityMatch
from tests.support import assert_same


class _CachedBias(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)
        self.bias_cache = {}

    def forward(self, x):
        key = str(x.device)
        if key not in self.bias_cache:
            self.bias_cache[key] = torch.ones(4)
        return self.linear(x) + self.bias_cache[key]


def test_an_entry_failing_on_an_attribute_does_not_run_the_module_state_batch(monkeypatch):
    runs = []
    holds = BatchIdentityMatch.holds

    def counted(self):
        runs.append(self)
        return holds(self)

    monkeypatch.setattr(BatchIdentityMatch, "holds", counted)
    torch.manual_seed(0)
    model = _CachedBias()
    reference = _CachedBias()
    reference.load_state_dict(model.state_dict())
    compiled = jit.compile(model, backend="eager")
    x = torch.randn(2, 4)
    for _ in range(2):
        assert_same(compiled(x), reference(x))
    runs.clear()
    assert_same(compiled(x), reference(x))
    # one batch run: the passing entry's; the stale first entry failed on bias_cache's keys before its batch
    assert len(runs) == 1, runs


def test_a_replaced_parameter_still_fails_the_entry_when_the_batch_runs_last():
    torch.manual_seed(0)
    model = _CachedBias()
    compiled = jit.compile(model, backend="eager")
    x = torch.randn(2, 4)
    compiled(x)
    compiled(x)
    model.linear.weight = torch.nn.Parameter(torch.zeros(4, 4))
    assert_same(compiled(x), model.linear(x) + 1)
