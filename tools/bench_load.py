"""Under load: N threads calling one compiled model, as an inference server does.

Run: `.venv/bin/python tools/bench_load.py [--seconds 2] [--threads 1,2,4,8,16] [--models mlp,transformer]
[--backend eager] [--device cpu]` (on a GPU machine: `--backend inductor --device cuda`).

For each model (an MLP, a small transformer of two pre-norm blocks, and `nn-encoder`: torch's
TransformerEncoderLayer, on request), each mode (inside `torch.inference_mode()` and
outside it) and each thread count, every thread calls `serve(model, x, own, shared)` for a fixed time with batch
sizes cycling through BATCHES (mixed shapes), once through plain eager Python, once through `jit.compile(serve)`
and once through `torch.compile(serve)`. `serve` runs the model and appends to the calling thread's own list and
to one list all threads share: after each run both must hold exactly one entry per call (no side effect lost or
duplicated). Printed per row: calls/s of each, jitcore / torch.compile, graphs compiled and native entries made by
jitcore (first calls are made before the clock starts and counted too), graphs torch.compile compiled, and
whether every side effect happened exactly once.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import threading
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

import jitcore as jit  # noqa: E402
from jitcore.runtime.cache import STATS  # noqa: E402

BATCHES = (1, 4, 8, 16)
FEATURES = 64


def serve(model, x, own, shared):
    out = model(x)
    own.append(1)
    shared.append(1)
    return out


class Block(torch.nn.Module):
    """A pre-norm transformer block as models write it: attention through scaled_dot_product_attention, an MLP."""

    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = torch.nn.LayerNorm(dim), torch.nn.LayerNorm(dim)
        self.qkv, self.proj = torch.nn.Linear(dim, 3 * dim), torch.nn.Linear(dim, dim)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(dim, 2 * dim), torch.nn.GELU(), torch.nn.Linear(2 * dim, dim))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(d, dim=-1)
        q, k, v = (y.view(b, t, self.heads, d // self.heads).transpose(1, 2) for y in (q, k, v))
        att = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(att.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.norm2(x))


def _model_call(model, x):
    """--no-ledger compiles only this (torch.compile guards the length of a list it appends to, so `serve` with
    a growing list recompiles on every call until its recompile limit, then runs natively)."""
    return model(x)


def make_model(name: str, device: str):
    torch.manual_seed(0)
    if name == "mlp":
        model = torch.nn.Sequential(torch.nn.Linear(FEATURES, 256), torch.nn.GELU(), torch.nn.Linear(256, 256),
                                    torch.nn.GELU(), torch.nn.Linear(256, FEATURES))
        shape = lambda batch: (batch, FEATURES)  # noqa: E731
    elif name == "transformer":
        model = torch.nn.Sequential(Block(FEATURES, 4), Block(FEATURES, 4))
        shape = lambda batch: (batch, 8, FEATURES)  # noqa: E731
    elif name == "nn-encoder":
        # torch's own layer: its fast-path checks iterate modules() (a generator using `yield from`), which
        # jitcore runs natively today
        model = torch.nn.TransformerEncoderLayer(FEATURES, nhead=4, dim_feedforward=128, dropout=0.0,
                                                 batch_first=True)
        shape = lambda batch: (batch, 8, FEATURES)  # noqa: E731
    else:
        raise SystemExit(f"unknown model {name!r}")
    return model.to(device).eval(), shape


class _DynamoCounter:
    """torch.compile's backend for the run: counts the graphs Dynamo hands over, then compiles them."""

    def __init__(self, backend: str):
        self.graphs = 0
        self.backend = backend

    def __call__(self, gm, example_inputs):
        self.graphs += 1
        if self.backend == "eager":
            return gm.forward
        from torch._dynamo.backends.registry import lookup_backend  # lazy: only torch.compile's rows need it
        return lookup_backend(self.backend)(gm, example_inputs)


def run_cell(fn, model, shape, device, threads: int, seconds: float, inference: bool):
    """(calls/s, calls per thread ok, shared ok) of `threads` threads calling fn for `seconds`."""
    inputs = [torch.randn(*shape(b), device=device) for b in BATCHES]
    shared: list = []
    owns = [[] for _ in range(threads)]
    counts = [0] * threads
    errors: list = []
    start = threading.Barrier(threads + 1)
    stop = threading.Event()

    def worker(t):
        mode = torch.inference_mode() if inference else contextlib.nullcontext()
        try:
            with mode:
                start.wait()
                i = t
                while not stop.is_set():
                    fn(model, inputs[i % len(inputs)], owns[t], shared)
                    counts[t] += 1
                    i += 1
        except Exception as exc:  # noqa: BLE001 - reported in the table
            errors.append(repr(exc))
            start.abort()

    pool = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
    for th in pool:
        th.start()
    try:
        start.wait()
    except threading.BrokenBarrierError:
        pass
    began = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for th in pool:
        th.join()
    elapsed = time.perf_counter() - began
    total = sum(counts)
    exact = not errors and len(shared) == total and all(len(o) == c for o, c in zip(owns, counts))
    return total / elapsed, exact, errors


def warm(fn, model, shape, device, inference: bool) -> None:
    """First calls of every shape before the clock starts (they compile)."""
    inputs = [torch.randn(*shape(b), device=device) for b in BATCHES]  # made as run_cell makes them
    mode = torch.inference_mode() if inference else contextlib.nullcontext()
    with mode:
        for _ in range(3):  # torch.compile recompiles a shape once more when it turns it dynamic
            for x in inputs:
                fn(model, x, [], [])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="timed seconds per cell")
    parser.add_argument("--threads", default="1,2,4,8,16")
    parser.add_argument("--models", default="mlp,transformer")
    parser.add_argument("--backend", default="eager", help="backend of jit.compile and torch.compile")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--modes", default="inference,plain")
    parser.add_argument("--no-ledger", action="store_true",
                        help="compile only the model call; the lists are appended to outside the compiled code")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    thread_counts = [int(n) for n in args.threads.split(",")]
    header = (f"{'model':<12}{'mode':<10}{'thr':>4}{'eager/s':>10}{'jit/s':>10}{'tc/s':>10}{'jit/tc':>8}"
              f"{'jit graphs':>11}{'native':>7}{'tc graphs':>10}  exactly once")
    print(f"backend={args.backend} device={args.device} seconds/cell={args.seconds} batches={BATCHES} "
          f"torch={torch.__version__} cpu threads={torch.get_num_threads()}")
    print(header)
    print("-" * len(header))
    for name in args.models.split(","):
        model, shape = make_model(name, args.device)
        for mode in args.modes.split(","):
            inference = mode == "inference"
            jit.reset()
            torch._dynamo.reset()
            graphs0, native0 = STATS.graphs, STATS.native_entries
            counter = _DynamoCounter(args.backend)
            if args.no_ledger:
                jit_call = jit.compile(_model_call, backend=args.backend)
                tc_call = torch.compile(_model_call, backend=counter)
                compiled = lambda model, x, own, shared, f=jit_call: (own.append(1), shared.append(1), f(model, x))[2]  # noqa: E731,E501
                dynamo = lambda model, x, own, shared, f=tc_call: (own.append(1), shared.append(1), f(model, x))[2]  # noqa: E731,E501
            else:
                compiled = jit.compile(serve, backend=args.backend)
                dynamo = torch.compile(serve, backend=counter)
            warm(compiled, model, shape, args.device, inference)
            warm(dynamo, model, shape, args.device, inference)
            for threads in thread_counts:
                eager_rate, eager_ok, eager_err = run_cell(serve, model, shape, args.device, threads,
                                                           args.seconds, inference)
                jit_rate, jit_ok, jit_err = run_cell(compiled, model, shape, args.device, threads, args.seconds,
                                                     inference)
                tc_rate, tc_ok, tc_err = run_cell(dynamo, model, shape, args.device, threads, args.seconds,
                                                  inference)
                ok = "yes" if eager_ok and jit_ok and tc_ok else \
                    f"NO eager={eager_ok} jit={jit_ok} tc={tc_ok} {(eager_err + jit_err + tc_err)[:1]}"
                print(f"{name:<12}{mode:<10}{threads:>4}{eager_rate:>10.0f}{jit_rate:>10.0f}{tc_rate:>10.0f}"
                      f"{jit_rate / tc_rate if tc_rate else float('nan'):>8.2f}"
                      f"{STATS.graphs - graphs0:>11}{STATS.native_entries - native0:>7}{counter.graphs:>10}  {ok}",
                      flush=True)


if __name__ == "__main__":
    main()
