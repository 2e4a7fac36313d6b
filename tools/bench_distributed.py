"""Distributed training benchmark: DDP and FSDP2, eager vs torch.compile vs jitcore (both inductor), under torchrun.

For each model (a GPT-2-small-sized transformer, torchvision's ResNet-50) and each wrapper (DDP; FSDP2 with every
block and the root `fully_shard`-ed), every compiler trains the same model from the same weights on the same
batches and reports, from rank 0:
- `loss diff`: the largest relative difference of its losses from eager's over every step (targets: float tolerance);
- `first step`: the first optimizer step's wall time, compiling included;
- `step`: the median step time (forward, backward, optimizer; synchronized) after the warm-up steps;
- `graphs`: graphs handed to the backend (jitcore and torch.compile both split DDP's graph per gradient bucket);
- `overlap`: whether gradient communication overlaps backward, from torch.profiler over one step: DDP's bucket
  all-reduces (FSDP2: its reduce-scatters) running while backward compute still runs, with the overlapped share of
  the communication time. On GPUs these are NCCL kernels against compute kernels; on CPU (gloo) the collectives'
  CPU spans against the backward's operator spans.

Run on two GPUs (NCCL):  torchrun --nproc-per-node 2 tools/bench_distributed.py
CPU smoke run (gloo):    torchrun --nproc-per-node 2 tools/bench_distributed.py --device cpu --small
Options: --models gpt2,resnet50  --wrappers ddp,fsdp  --compilers eager,torch.compile,jitcore  --steps N
--warmup N  --bucket-cap-mb MB  --backend NAME (both compilers' backend; default inductor)  --json PATH.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

import jitcore as jit  # noqa: E402
from jitcore import backends  # noqa: E402

COMPILERS = ("eager", "torch.compile", "jitcore")
WRAPPERS = ("ddp", "fsdp")
MODELS = ("gpt2", "resnet50")


# -- models -----------------------------------------------------------------------------------------------------
class Block(nn.Module):
    """A GPT-2 block: pre-norm causal self-attention and MLP."""

    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, 4 * dim)
        self.out = nn.Linear(4 * dim, dim)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    """GPT-2 small's shape by default (12 layers, 768 wide, 12 heads, 50257 tokens, tied embeddings)."""

    def __init__(self, layers=12, dim=768, heads=12, vocab=50257, context=1024):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.wpe = nn.Embedding(context, dim)
        self.blocks = nn.ModuleList([Block(dim, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.wte.weight

    def forward(self, idx):
        positions = torch.arange(idx.shape[1], device=idx.device)
        x = self.wte(idx) + self.wpe(positions)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


def build(name: str, small: bool, device):
    """(model, blocks to fully_shard, batch maker(rank, step) -> (input, target))."""
    if name == "gpt2":
        cfg = dict(layers=4, dim=128, heads=4, vocab=2048, context=64) if small else {}
        model = GPT(**cfg)
        batch, seq = (2, 32) if small else (8, 512)
        vocab = model.wte.num_embeddings

        def make(rank, step):
            g = torch.Generator().manual_seed(1000 * step + rank)
            tokens = torch.randint(0, vocab, (batch, seq + 1), generator=g)
            return tokens[:, :-1].to(device), tokens[:, 1:].to(device)
        return model, list(model.blocks), make
    if name == "resnet50":
        import torchvision  # lazy: only this model needs it

        model = torchvision.models.resnet50(num_classes=100 if small else 1000)
        batch, size = (2, 32) if small else (32, 224)
        blocks = [block for layer in (model.layer1, model.layer2, model.layer3, model.layer4) for block in layer]

        def make(rank, step):
            g = torch.Generator().manual_seed(1000 * step + rank)
            images = torch.randn(batch, 3, size, size, generator=g)
            labels = torch.randint(0, model.fc.out_features, (batch,), generator=g)
            return images.to(device), labels.to(device)
        return model, blocks, make
    raise SystemExit(f"unknown model {name!r}; choose from {', '.join(MODELS)}")


def loss_of(name, output, target):
    if name == "gpt2":
        return F.cross_entropy(output.flatten(0, 1), target.flatten())
    return F.cross_entropy(output, target)


# -- compilers --------------------------------------------------------------------------------------------------
class GraphCount:
    """Wraps a backend and counts the graphs it compiles."""

    def __init__(self, inner):
        self.inner = inner
        self.graphs = 0

    def __call__(self, gm, example_inputs):
        self.graphs += 1
        return self.inner(gm, example_inputs)


def torch_backend(name: str):
    if name == "inductor":
        from torch._inductor.compile_fx import compile_fx  # lazy: inductor is large

        return compile_fx
    from torch._dynamo.backends.registry import lookup_backend  # lazy: only for another backend

    return lookup_backend(name)


def wrap(model, blocks, wrapper: str, device, bucket_cap_mb=None):
    if wrapper == "ddp":
        return DDP(model, device_ids=[device.index] if device.type == "cuda" else None, bucket_cap_mb=bucket_cap_mb)
    from torch.distributed.fsdp import fully_shard  # lazy: FSDP2 is imported only when used

    for block in blocks:
        fully_shard(block)
    fully_shard(model)
    return model


def compiled(model, compiler: str, backend: str):
    """(the callable to train, its GraphCount or None)."""
    if compiler == "eager":
        return model, None
    if compiler == "torch.compile":
        torch._dynamo.reset()
        counter = GraphCount(torch_backend(backend))
        return torch.compile(model, backend=counter), counter
    jit.reset()
    counter = GraphCount(backends.lookup(backend))
    name = f"bench_{backend}_{id(counter)}"
    tags = backends.tags_of(backend)
    backends.register_backend(name, counter, tags=tags)
    return jit.compile(model, backend=name), counter


# -- measuring --------------------------------------------------------------------------------------------------
def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def train_step(run, optimizer, model_name, batch, profile_backward=False):
    inputs, target = batch
    loss = loss_of(model_name, run(inputs), target)
    if profile_backward:
        with torch.profiler.record_function("bench::backward"):
            loss.backward()
    else:
        loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.detach()


def overlap(run, optimizer, model_name, batch, wrapper, device):
    """(overlapped, share of communication time concurrent with backward compute), from one profiled step."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.profiler.profile(activities=activities) as prof:
        train_step(run, optimizer, model_name, batch, profile_backward=True)
        sync(device)
    events = list(prof.events())
    backward = [e for e in events if e.name == "bench::backward"]
    if not backward:
        return None, 0.0
    start, end = backward[0].time_range.start, backward[0].time_range.end
    if device.type == "cuda":
        # NCCL kernels: DDP's bucket all-reduces, FSDP2's gradient reduce-scatters; compute: every other kernel
        # that started once backward had begun
        kernels = [e for e in events if e.device_type == torch.autograd.DeviceType.CUDA]
        marks = ("allreduce",) if wrapper == "ddp" else ("reducescatter",)
        comm = [e for e in kernels if "nccl" in e.name.lower()
                and any(m in e.name.lower().replace("_", "") for m in marks)]
        compute = [e for e in kernels if "nccl" not in e.name.lower() and e.time_range.start >= start]
    else:
        # gloo runs a collective on a worker thread of its own ("gloo:all_reduce"; FSDP2's reduce-scatter is an
        # all-reduce on gloo); compute: the backward's autograd functions on the thread that ran backward
        comm = [e for e in events if e.name == "gloo:all_reduce" and start <= e.time_range.start <= end]
        compute = [e for e in events if e.thread == backward[0].thread and start <= e.time_range.start <= end
                   and e.name.startswith("autograd::engine::evaluate_function")]
    if not comm or not compute:
        return None, 0.0
    intervals = _union([(e.time_range.start, e.time_range.end) for e in compute])
    comm_time = sum(e.time_range.end - e.time_range.start for e in comm) or 1
    shared = sum(_intersection(e.time_range.start, e.time_range.end, intervals) for e in comm)
    last_compute = intervals[-1][1]
    return any(e.time_range.start < last_compute for e in comm) and shared > 0, shared / comm_time


def _union(spans):
    merged = []
    for lo, hi in sorted(spans):
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return merged


def _intersection(lo, hi, intervals) -> float:
    return sum(max(0, min(hi, b) - max(lo, a)) for a, b in intervals)


def run_row(model_name, wrapper, compiler, args, device, rank):
    torch.manual_seed(0)
    model, blocks, make = build(model_name, args.small, device)
    model = model.to(device)
    wrapped = wrap(model, blocks, wrapper, device, args.bucket_cap_mb)
    run, counter = compiled(wrapped, compiler, args.backend)
    optimizer = torch.optim.SGD(wrapped.parameters(), lr=1e-3)
    losses, times = [], []
    for step in range(args.warmup + args.steps):
        batch = make(rank, step)
        sync(device)
        dist.barrier()
        started = time.perf_counter()
        losses.append(train_step(run, optimizer, model_name, batch))
        sync(device)
        times.append(time.perf_counter() - started)
    overlapped, share = overlap(run, optimizer, model_name, make(rank, 10_000), wrapper, device)
    return {"losses": [loss.item() for loss in losses], "first": times[0],
            "step": statistics.median(times[args.warmup:]), "graphs": counter.graphs if counter else None,
            "overlap": overlapped, "overlap_share": share}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--small", action="store_true", help="tiny sizes (CPU smoke run)")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--wrappers", default=",".join(WRAPPERS))
    parser.add_argument("--compilers", default=",".join(COMPILERS))
    parser.add_argument("--backend", default="inductor")
    parser.add_argument("--bucket-cap-mb", type=float, default=None,
                        help="DDP's bucket_cap_mb (default: DDP's 25; with --small 1, so the small models have "
                             "several buckets; torch.compile's DDPOptimizer refuses caps below its 1 MiB first "
                             "bucket)")
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--warmup", type=int, default=None)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    args.steps = args.steps or (3 if args.small else 20)
    args.warmup = args.warmup or (2 if args.small else 5)
    if args.bucket_cap_mb is None and args.small:
        args.bucket_cap_mb = 1.0
    if "RANK" not in os.environ:
        raise SystemExit("run under torchrun: torchrun --nproc-per-node 2 tools/bench_distributed.py [options]")
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    if args.device == "cuda":
        local = int(os.environ.get("LOCAL_RANK", rank))
        torch.cuda.set_device(local)
        device = torch.device("cuda", local)
        dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30), device_id=device)
    else:
        device = torch.device("cpu")
        dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))
    rows = []
    for model_name in args.models.split(","):
        for wrapper in args.wrappers.split(","):
            reference = None
            for compiler in args.compilers.split(","):
                try:
                    result = run_row(model_name, wrapper, compiler, args, device, rank)
                except Exception as exc:
                    traceback.print_exc()
                    result = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}"}
                if compiler == "eager" and "losses" in result:
                    reference = result["losses"]
                if reference is not None and "losses" in result:
                    result["loss_diff"] = max(abs(a - b) / max(abs(b), 1e-12)
                                              for a, b in zip(result["losses"], reference))
                rows.append({"model": model_name, "wrapper": wrapper, "compiler": compiler, **result})
                if rank == 0:
                    print(_line(rows[-1]), flush=True)
                dist.barrier()
    if rank == 0:
        print()
        print(_table(rows, args, world, device))
        if args.json:
            with open(args.json, "w") as out:
                json.dump(rows, out, indent=1)
    dist.destroy_process_group()
    return 0


def _line(row) -> str:
    return "  ".join(f"{key}={value}" for key, value in row.items() if key != "losses")


def _table(rows, args, world, device) -> str:
    where = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU (gloo)"
    out = [f"{world} ranks on {where}, torch {torch.__version__}, backend {args.backend}, "
           f"{'small sizes, ' if args.small else ''}{args.steps} timed steps after {args.warmup}", "",
           "| model | wrapper | compiler | loss diff | first step (s) | step (ms) | vs torch.compile | graphs "
           "| overlap |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    by_key = {(r["model"], r["wrapper"], r["compiler"]): r for r in rows}
    for r in rows:
        if "error" in r:
            out.append(f"| {r['model']} | {r['wrapper']} | {r['compiler']} | error: {r['error']} | | | | | |")
            continue
        compiled_row = by_key.get((r["model"], r["wrapper"], "torch.compile"), {})
        ratio = (f"{r['step'] / compiled_row['step']:.2f}x" if "step" in compiled_row
                 and r["compiler"] != "torch.compile" else "")
        diff = r.get("loss_diff")
        overlapped = {True: f"yes ({r['overlap_share']:.0%})", False: "no", None: "n/a"}[r["overlap"]]
        out.append(f"| {r['model']} | {r['wrapper']} | {r['compiler']} | "
                   f"{'' if diff is None or r['compiler'] == 'eager' else f'{diff:.1e}'} | {r['first']:.2f} | "
                   f"{r['step'] * 1e3:.1f} | {ratio} | {'' if r['graphs'] is None else r['graphs']} | "
                   f"{overlapped} |")
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
