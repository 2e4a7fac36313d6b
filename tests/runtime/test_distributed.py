"""DDP and FSDP2 under jitcore, world size 2 on gloo (CPU): every way in gives eager's losses and gradients.

One pair of processes runs every scenario (spawning costs more than the scenarios); each test reads its
scenario's outcome. DDP's own forward and FSDP's hooks run natively; the wrapped forward compiles, split at DDP's
gradient buckets: one graph per bucket, as many as DDP's reducer has after its first iteration.
"""
from __future__ import annotations

import copy
import datetime
import json
import os
import socket
import subprocess
import sys
import time
import traceback

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

import jitcore as jit
from jitcore import backends

#: under pytest-xdist (`make test`) the module's tests share one worker: one pair of processes serves every test
pytestmark = pytest.mark.xdist_group("distributed")

WORLD = 2
STEPS = 5
#: a bucket cap above one 32x32 weight (4 KiB) and below it with its bias: each Linear layer is one bucket, in
#: whichever order its two gradients become ready (DDP rebuilds its buckets in that order)
CAP_MB = 4100 / 2**20
LAYERS = 4
#: seconds the whole set of scenarios may take before the processes are stopped (a hang fails, never blocks)
DEADLINE = 240


class MLP(torch.nn.Module):
    def __init__(self, extra=False):
        super().__init__()
        self.l1 = torch.nn.Linear(32, 32)
        self.l2 = torch.nn.Linear(32, 32)
        self.l3 = torch.nn.Linear(32, 32)
        self.l4 = torch.nn.Linear(32, 32)
        self.extra = torch.nn.Linear(32, 32) if extra else None

    def forward(self, x):
        rows = x.shape[0]
        x = torch.relu(self.l1(x))
        x = torch.relu(self.l2(x)).reshape(rows, -1)
        x = torch.relu(self.l3(x))
        return self.l4(x).reshape(rows, 2, -1).flatten(1)


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(16, 32)
        self.b = torch.nn.Linear(32, 16)

    def forward(self, x):
        return x + self.b(torch.relu(self.a(x)))


class Stack(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = torch.nn.Linear(8, 16)
        self.b1, self.b2, self.b3 = Block(), Block(), Block()
        self.out = torch.nn.Linear(16, 4)

    def forward(self, x):
        x = self.inp(x)
        x = self.b1(x)
        x = self.b2(x)
        x = self.b3(x)
        return self.out(torch.relu(x))


class Counting:
    """A backend (eager unless given another) counting the graphs it is given."""

    def __init__(self, inner=None):
        self.graphs = []
        self.inner = inner or backends.lookup("eager")
        self.__name__ = "counting"

    def __call__(self, gm, example_inputs):
        self.graphs.append(gm)
        return self.inner(gm, example_inputs)


def batch(rank: int, step: int, features: int = 32, rows: int = 8):
    return torch.randn(rows, features, generator=torch.Generator().manual_seed(100 * step + rank))


def ddp_pair(extra=False, **options):
    torch.manual_seed(0)
    reference = MLP(extra)
    mine = copy.deepcopy(reference)
    return DDP(reference, bucket_cap_mb=CAP_MB, **options), DDP(mine, bucket_cap_mb=CAP_MB, **options)


def train_against_eager(reference, run_reference, mine, run_mine, rank, accumulate=0, full=lambda g: g):
    """STEPS optimizer steps of both; asserts equal losses and gradients; returns the losses. `accumulate`
    micro-batches per step run under no_sync() first."""
    opt_ref = torch.optim.SGD(reference.parameters(), lr=0.05)
    opt_mine = torch.optim.SGD(mine.parameters(), lr=0.05)
    losses = []
    for step in range(STEPS):
        for micro in range(accumulate):
            x = batch(rank, 1000 + 10 * step + micro, _features(reference))
            with reference.no_sync():
                run_reference(x).square().mean().backward()
            with mine.no_sync():
                run_mine(x).square().mean().backward()
        x = batch(rank, step, _features(reference))
        loss_ref = run_reference(x).square().mean()
        loss_ref.backward()
        loss_mine = run_mine(x).square().mean()
        loss_mine.backward()
        torch.testing.assert_close(loss_mine, loss_ref, rtol=1e-5, atol=1e-6)
        for (name, a), b in zip(reference.named_parameters(), mine.parameters()):
            assert (a.grad is None) == (b.grad is None), name
            if a.grad is not None:
                torch.testing.assert_close(full(b.grad), full(a.grad), rtol=1e-5, atol=1e-6, msg=name)
        opt_ref.step()
        opt_mine.step()
        opt_ref.zero_grad()
        opt_mine.zero_grad()
        losses.append(loss_ref.item())
    return losses


def _features(module) -> int:
    return next(module.parameters()).shape[-1] if not isinstance(module, Stack) else 8


def reducer_buckets(ddp) -> int:
    """How many buckets DDP's reducer has now (rebuilt after its first iteration)."""
    return len(ddp.reducer._get_zeros_like_grad_buckets())


def compiled_autograd_nodes(tensor) -> int:
    """AOTAutograd nodes in tensor's autograd graph: one per compiled graph."""
    seen, stack, found = set(), [tensor.grad_fn], 0
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        found += "CompiledFunction" in node.name()
        stack.extend(next_fn for next_fn, _ in node.next_functions)
    return found


# -- scenarios, each run on both ranks --------------------------------------------------------------------------
def scenario_compile(rank):
    reference, mine = ddp_pair()
    counting = Counting()
    compiled = jit.compile(mine, backend=counting)
    losses = train_against_eager(reference, reference, mine, compiled, rank)
    return {"graphs": len(counting.graphs), "buckets": reducer_buckets(mine), "losses": losses}


def scenario_aot_backward_per_bucket(rank):
    reference, mine = ddp_pair()
    counting = Counting(backends.lookup("aot_eager"))
    # tagged like aot_eager, so each bucket's graph carries the static-input marks AOTAutograd reads
    backends.register_backend("counting_aot", counting, tags=backends.tags_of("aot_eager"), replace=True)
    compiled = jit.compile(mine, backend="counting_aot")
    train_against_eager(reference, reference, mine, compiled, rank)
    loss = compiled(batch(rank, 0)).square().mean()
    nodes = compiled_autograd_nodes(loss)
    loss.backward()
    return {"nodes": nodes, "buckets": reducer_buckets(mine), "graphs": len(counting.graphs)}


def scenario_register(rank):
    reference, mine = ddp_pair()
    jit.register(mine)
    counting = Counting()

    def run(x):
        with jit.enabled(backend=counting):
            return mine(x)
    losses = train_against_eager(reference, reference, mine, run, rank)
    jit.unregister(mine)
    return {"graphs": len(counting.graphs), "buckets": reducer_buckets(mine), "losses": losses}


def _step(model, x):
    return model(x) * 1.0


def scenario_compiled_caller(rank):
    reference, mine = ddp_pair()
    step = jit.compile(_step, backend="aot_eager")
    train_against_eager(reference, reference, mine, lambda x: step(mine, x), rank)
    return {}


def scenario_no_sync(rank):
    reference, mine = ddp_pair()
    compiled = jit.compile(mine, backend="aot_eager")
    train_against_eager(reference, reference, mine, compiled, rank, accumulate=2)
    return {}


def scenario_find_unused(rank):
    reference, mine = ddp_pair(extra=True, find_unused_parameters=True)
    compiled = jit.compile(mine, backend="aot_eager")
    train_against_eager(reference, reference, mine, compiled, rank)
    return {"extra_grad": mine.module.extra.weight.grad is not None}


def scenario_dynamic_batch(rank):
    # the batch size changes: the recompiled graph has symbolic sizes, and each bucket's graph gets them
    reference, mine = ddp_pair()
    counting = Counting(backends.lookup("aot_eager"))
    backends.register_backend("counting_aot_dynamic", counting, tags=backends.tags_of("aot_eager"), replace=True)
    compiled = jit.compile(mine, backend="counting_aot_dynamic")
    opt_ref = torch.optim.SGD(reference.parameters(), lr=0.05)
    opt_mine = torch.optim.SGD(mine.parameters(), lr=0.05)
    for step, rows in enumerate((8, 6, 5, 7, 9)):
        x = batch(rank, step, rows=rows)
        loss_ref = reference(x).square().mean()
        loss_ref.backward()
        loss_mine = compiled(x).square().mean()
        loss_mine.backward()
        torch.testing.assert_close(loss_mine, loss_ref, rtol=1e-5, atol=1e-6)
        for (name, a), b in zip(reference.named_parameters(), mine.parameters()):
            torch.testing.assert_close(b.grad, a.grad, rtol=1e-5, atol=1e-6, msg=name)
        for opt in (opt_ref, opt_mine):
            opt.step()
            opt.zero_grad()
    return {"graphs": len(counting.graphs)}


def scenario_static_graph(rank):
    reference, mine = ddp_pair(static_graph=True)
    compiled = jit.compile(mine, backend="aot_eager")
    train_against_eager(reference, reference, mine, compiled, rank)
    return {}


def scenario_bucket_view(rank):
    reference, mine = ddp_pair(gradient_as_bucket_view=True)
    compiled = jit.compile(mine, backend="aot_eager")
    train_against_eager(reference, reference, mine, compiled, rank)
    return {}


def scenario_explain(rank):
    _, mine = ddp_pair()
    report = jit.explain(mine, batch(rank, 0))
    return {"graphs": report.graph_count, "splits": report.splits, "text": str(report)}


def scenario_default_buckets(rank):
    # default caps (25 MiB, first bucket 1 MiB): this small model is one bucket, its graph is not split
    torch.manual_seed(0)
    reference = MLP()
    mine = DDP(copy.deepcopy(reference))
    counting = Counting()
    compiled = jit.compile(mine, backend=counting)
    train_against_eager(DDP(reference), DDP(reference), mine, compiled, rank)
    return {"graphs": len(counting.graphs), "buckets": reducer_buckets(mine)}


def fsdp_pair():
    from torch.distributed.fsdp import fully_shard  # lazy: FSDP is imported only by its scenario

    made = []
    for _ in range(2):
        torch.manual_seed(0)
        model = Stack()
        for block in (model.b1, model.b2, model.b3):
            fully_shard(block)
        fully_shard(model)
        made.append(model)
    return made


def scenario_fsdp(rank):
    reference, mine = fsdp_pair()
    counting = Counting()
    compiled = jit.compile(mine, backend=counting)
    full = lambda grad: grad.full_tensor()  # noqa: E731
    losses = train_against_eager(reference, reference, mine, compiled, rank, full=full)
    return {"graphs": len(counting.graphs), "losses": losses}


def scenario_fsdp_aot(rank):
    reference, mine = fsdp_pair()
    compiled = jit.compile(mine, backend="aot_eager")
    full = lambda grad: grad.full_tensor()  # noqa: E731
    train_against_eager(reference, reference, mine, compiled, rank, full=full)
    report = jit.explain(mine, batch(rank, 0, 8))
    return {"explained_graphs": report.graph_count}


SCENARIOS = {name[len("scenario_"):]: fn for name, fn in list(globals().items()) if name.startswith("scenario_")}


def _worker(rank, port, out_dir):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD, timeout=datetime.timedelta(seconds=60))
    results = {}
    for name, scenario in SCENARIOS.items():
        started = time.perf_counter()
        try:
            results[name] = scenario(rank)
        except Exception:
            results[name] = {"error": traceback.format_exc()}
        results[name]["seconds"] = time.perf_counter() - started
        dist.barrier()
    with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as out:
        json.dump(results, out)
    dist.destroy_process_group()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    out_dir = str(tmp_path_factory.mktemp("distributed"))
    context = mp.start_processes(_worker, args=(free_port(), out_dir), nprocs=WORLD, join=False,
                                 start_method="spawn")
    deadline = time.monotonic() + DEADLINE
    try:
        while not context.join(timeout=5):
            if time.monotonic() > deadline:
                pytest.fail(f"the distributed scenarios did not finish in {DEADLINE} s")
    finally:
        for process in context.processes:
            if process.is_alive():
                process.terminate()
    found = []
    for rank in range(WORLD):
        with open(os.path.join(out_dir, f"rank{rank}.json")) as f:
            found.append(json.load(f))
    return found


def outcome(outcomes, name):
    print({n: round(r.get("seconds", 0), 2) for n, r in outcomes[0].items()})
    for rank, results in enumerate(outcomes):
        assert "error" not in results[name], f"rank {rank}:\n{results[name]['error']}"
    return outcomes[0][name]


def test_compiled_ddp_matches_eager_with_one_graph_per_bucket(outcomes):
    result = outcome(outcomes, "compile")
    assert result["buckets"] == LAYERS
    assert result["graphs"] == result["buckets"]


def test_each_bucket_has_its_own_backward_graph_under_aot(outcomes):
    result = outcome(outcomes, "aot_backward_per_bucket")
    assert result["nodes"] == result["buckets"] == LAYERS
    # every bucket's graph compiled at its first try, static-input marks and all
    assert result["graphs"] == LAYERS


def test_registered_ddp_matches_eager_under_enabled(outcomes):
    result = outcome(outcomes, "register")
    assert result["graphs"] == result["buckets"] == LAYERS


def test_ddp_called_from_a_compiled_function_matches_eager(outcomes):
    outcome(outcomes, "compiled_caller")


def test_no_sync_accumulation_matches_eager(outcomes):
    outcome(outcomes, "no_sync")


def test_find_unused_parameters_matches_eager(outcomes):
    assert outcome(outcomes, "find_unused")["extra_grad"] is False


def test_changing_batch_size_splits_the_dynamic_graph_too(outcomes):
    # one static graph, then one shape-generic graph: each split into one graph per bucket
    assert outcome(outcomes, "dynamic_batch")["graphs"] == 2 * LAYERS


def test_static_graph_matches_eager(outcomes):
    outcome(outcomes, "static_graph")


def test_gradient_as_bucket_view_matches_eager(outcomes):
    outcome(outcomes, "bucket_view")


def test_default_caps_keep_a_small_model_in_one_graph(outcomes):
    result = outcome(outcomes, "default_buckets")
    assert result["graphs"] == result["buckets"] == 1


def test_explain_says_the_graph_was_split_for_ddp(outcomes):
    result = outcome(outcomes, "explain")
    assert result["graphs"] == LAYERS
    (split,) = result["splits"]
    assert f"split for DDP into {LAYERS} graphs, one per gradient bucket" in split
    assert "all-reduce" in split and "bucket cap" in split
    assert "split for DDP" in result["text"]


def test_fsdp2_blocks_compile_one_by_one_and_match_eager(outcomes):
    # the root's forward before and after its blocks, and each block's forward: hooks run natively between them
    assert outcome(outcomes, "fsdp")["graphs"] == 5


def test_fsdp2_under_aot_matches_eager(outcomes):
    assert outcome(outcomes, "fsdp_aot")["explained_graphs"] == 5


_AUTOENABLED = """
import os, sys, torch, torch.distributed as dist, torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP
from tests.runtime.test_distributed import MLP, CAP_MB, batch, STEPS, fsdp_pair

def train(model, x):
    return model(x).square().mean()

def worker(rank, port):
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=2)
    torch.manual_seed(0)
    model = DDP(MLP(), bucket_cap_mb=CAP_MB)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for step in range(STEPS):
        loss = train(model, batch(rank, step))
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    fsdp, _ = fsdp_pair()
    opt = torch.optim.SGD(fsdp.parameters(), lr=0.05)
    fsdp_losses = []
    for step in range(STEPS):
        loss = train(fsdp, batch(rank, step, 8))
        loss.backward()
        opt.step()
        opt.zero_grad()
        fsdp_losses.append(loss.item())
    from jitcore.report.console import EVENTS
    from jitcore.runtime.stats import STATS
    splits = [m for t, m in EVENTS if t == "distributed"]
    if rank == 0:
        print("RESULT", repr((losses, fsdp_losses, STATS.graphs, splits)))
    dist.destroy_process_group()

if __name__ == "__main__":
    mp.spawn(worker, args=(int(sys.argv[1]),), nprocs=2)
"""


def test_jitcore_1_compiles_ddp_split_at_buckets_and_fsdp2_blocks(outcomes, tmp_path):
    script = tmp_path / "train_ddp.py"
    script.write_text(_AUTOENABLED)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {**os.environ, "JITCORE": "1", "PYTHONPATH": root}
    done = subprocess.run([sys.executable, str(script), str(free_port())], env=env, cwd=root,
                          capture_output=True, text=True, timeout=DEADLINE)
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(line for line in done.stdout.splitlines() if line.startswith("RESULT"))
    losses, fsdp_losses, graphs, splits = eval(line[len("RESULT "):])
    torch.testing.assert_close(losses, outcome(outcomes, "compile")["losses"], rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(fsdp_losses, outcome(outcomes, "fsdp")["losses"], rtol=1e-5, atol=1e-6)
    assert any(f"split for DDP into {LAYERS} graphs" in message for message in splits), splits
    assert graphs >= LAYERS
