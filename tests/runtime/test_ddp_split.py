"""Graphs captured under a DDP forward are split at DDP's gradient buckets (runtime/ddp_split.py), in one process.

A world-size-1 gloo group (an in-memory store, no ports) is enough for DistributedDataParallel to run its forward
and reducer; tests/runtime/test_distributed.py runs two processes.
"""
from __future__ import annotations

import copy
import types

import pytest
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import jitcore as jit
from jitcore.runtime.ddp_split import bucket_limits
from tests.support import CountingBackend, check_against_eager, check_registered_against_eager

#: each 16x16 Linear (1 KiB weight + 64 B bias) is one bucket
CAP_MB = 1050 / 2**20


@pytest.fixture(scope="module", autouse=True)
def process_group():
    if dist.is_initialized():
        yield
        return
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        yield
    finally:
        dist.destroy_process_group()


class Three(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(16, 16)
        self.b = torch.nn.Linear(16, 16)
        self.c = torch.nn.Linear(16, 16)

    def forward(self, x):
        return self.c(torch.tanh(self.b(torch.tanh(self.a(x)))))


def _ddp(module, **options):
    return DDP(module, bucket_cap_mb=CAP_MB, **options)


def test_compile_and_register_split_one_graph_per_bucket():
    torch.manual_seed(0)
    x = torch.randn(4, 16)
    check_against_eager(_ddp(Three()), (x,), expected_graphs=3)
    counting = check_registered_against_eager(_ddp(Three()), (x,))
    assert counting.graph_count == 3


def test_a_model_within_one_bucket_is_not_split():
    torch.manual_seed(0)
    check_against_eager(DDP(Three()), (torch.randn(4, 16),), expected_graphs=1)


def _train_both(model, make_input, backend, steps=3):
    reference = copy.deepcopy(model)
    mine = _ddp(model)
    compiled = jit.compile(mine, backend=backend)
    ref = _ddp(reference)
    for step in range(steps):
        x = make_input(step)
        expected = ref(x).float().square().mean()
        expected.backward()
        got = compiled(x).float().square().mean()
        got.backward()
        torch.testing.assert_close(got, expected)
        for (name, a), b in zip(reference.named_parameters(), model.parameters()):
            torch.testing.assert_close(b.grad, a.grad, msg=name)
        for p in (*reference.parameters(), *model.parameters()):
            p.grad = None


class Tied(torch.nn.Module):
    """An embedding whose weight is also the output head's (GPT-2's tying): one parameter read by two buckets."""

    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(32, 16)
        self.mid = torch.nn.Linear(16, 16)
        self.head = torch.nn.Linear(16, 32, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, tokens):
        return self.head(torch.relu(self.mid(self.embed(tokens))))


def test_a_weight_tied_across_buckets_gets_its_gradient_from_both_graphs():
    torch.manual_seed(0)
    counting = CountingBackend("aot_eager")
    _train_both(Tied(), lambda step: torch.randint(0, 32, (4, 5), generator=torch.Generator().manual_seed(step)),
                counting)
    assert counting.graph_count >= 2


class Broken(torch.nn.Module):
    """A graph break between buckets: the graph before it and the resume function's graph are each split."""

    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(16, 16), torch.nn.Linear(16, 16)
        self.c, self.d = torch.nn.Linear(16, 16), torch.nn.Linear(16, 16)

    def forward(self, x):
        x = self.b(torch.relu(self.a(x)))
        if x.sum() > 1e9:  # a jump on a tensor: a graph break
            x = x * 0
        return self.d(torch.relu(self.c(x)))


def test_graphs_on_both_sides_of_a_break_are_split():
    torch.manual_seed(0)
    counting = CountingBackend("aot_eager")
    _train_both(Broken(), lambda step: torch.randn(4, 16, generator=torch.Generator().manual_seed(step)), counting)
    assert counting.graph_count == 4


class Passthrough(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(16, 16), torch.nn.Linear(16, 16)

    def forward(self, x):
        y = self.b(torch.relu(self.a(x)))
        return y, x, self.a.weight, y.shape[0]


def test_outputs_that_are_inputs_parameters_and_sizes_are_returned_as_eager_returns_them():
    torch.manual_seed(0)
    check_against_eager(_ddp(Passthrough()), (torch.randn(4, 16),), expected_graphs=2)


def test_bucket_limits_follow_ddp_configuration():
    ddp = _ddp(Three())
    assert bucket_limits(ddp) == [int(CAP_MB * 2**20)] * 2
    assert bucket_limits(DDP(Three())) == [dist._DEFAULT_FIRST_BUCKET_BYTES, 25 * 2**20]
    # a DDP of a torch without _bucket_config: its bucket_bytes_cap and whether that is the default
    older = types.SimpleNamespace(bucket_bytes_cap=25 * 2**20, bucket_bytes_cap_default=True)
    assert bucket_limits(older) == [dist._DEFAULT_FIRST_BUCKET_BYTES, 25 * 2**20]
    older.bucket_bytes_cap_default = False
    assert bucket_limits(older) == [25 * 2**20] * 2


def test_explain_reports_the_split():
    torch.manual_seed(0)
    report = jit.explain(_ddp(Three()), torch.randn(4, 16))
    assert report.graph_count == 3
    assert report.graph_break_count == 0
    assert "split for DDP into 3 graphs" in report.splits[0]
    assert "split for DDP" in str(report)
    assert "split for DDP" in report._repr_html_()


def test_a_ddp_call_inside_a_compiled_function_breaks_with_its_own_kind():
    torch.manual_seed(0)
    ddp = _ddp(Three())

    def step(model, x):
        return model(x).sum()

    report = jit.explain(step, ddp, torch.randn(4, 16))
    assert [b.kind for b in report.breaks] == ["distributed_module"]
    # the module's forward: three bucket graphs; the caller's sum after the break: one
    assert report.graph_count == 4
