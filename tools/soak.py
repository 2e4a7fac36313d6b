"""Soak: many calls of compiled code over several threads, with shapes and guards changing; does memory grow?

Run: `.venv/bin/python tools/soak.py [--calls 100000] [--threads 8] [--baseline-seconds 60] [--tracemalloc]`
(not part of `make test`). Each thread calls two compiled functions (a small model step and a function with a
graph break) with batch sizes cycling through SHAPES, a flag and a mode that change guards, and inside/outside
`torch.inference_mode()` every other round; each call appends to the thread's own list and sets a key of the
thread's dict (checked at the end: every side effect exactly once). Memory is read after `--baseline-seconds` (or after a
tenth of the calls, if that comes first) and at the end: RSS from /proc/self/status, and with `--tracemalloc` the
Python heap traced from the start, both less the side-effect lists' own size (they grow by a slot per call). Growth after the baseline is what a long-running server would keep paying.
"""
from __future__ import annotations

import argparse
import gc
import io
import os
import sys
import threading
import time
import tracemalloc

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

import jitcore as jit  # noqa: E402
from jitcore.runtime.cache import STATS  # noqa: E402

SHAPES = (1, 3, 8, 16, 5, 32)
SINK = io.StringIO()


def rss_kib() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def step(model, x, flag, mode, log, seen):
    y = model(x)
    if flag:
        y = y * 2
    if mode == "sum":
        out = y.sum(dim=-1)
    else:
        out = y.mean(dim=-1)
    log.append(1)
    seen["last"] = out
    return out


def with_break(x, log):
    y = torch.relu(x) + 1
    print("tick", file=SINK)
    SINK.seek(0)
    SINK.truncate()
    log.append(2)
    return y * 3


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100_000, help="calls over all threads (each does two)")
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--baseline-seconds", type=float, default=60.0)
    parser.add_argument("--tracemalloc", action="store_true", help="trace the Python heap (slows calls down)")
    parser.add_argument("--backend", default="eager")
    args = parser.parse_args(argv)
    if args.tracemalloc:
        tracemalloc.start()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 16)).eval()
    fast_step = jit.compile(step, backend=args.backend, cache_limit=64)
    fast_break = jit.compile(with_break, backend=args.backend, cache_limit=64)
    inputs = {n: torch.randn(n, 16) for n in SHAPES}
    per_thread = args.calls // args.threads
    logs = [[] for _ in range(args.threads)]
    seen = [{"last": None} for _ in range(args.threads)]
    done = [0] * args.threads
    errors: list = []
    baseline: dict = {}
    started = time.perf_counter()

    def worker(t):
        try:
            for i in range(per_thread):
                n = SHAPES[(i + t) % len(SHAPES)]
                inference = (i // len(SHAPES)) % 2 == 1
                with torch.inference_mode(inference):
                    out = fast_step(model, inputs[n], i % 3 == 0, "sum" if i % 2 else "mean", logs[t], seen[t])
                    fast_break(inputs[n], logs[t])
                if out.shape != (n,):
                    errors.append(f"thread {t} call {i}: shape {tuple(out.shape)}")
                done[t] += 1
        except Exception as exc:  # noqa: BLE001 - reported at the end
            errors.append(f"thread {t}: {exc!r}")

    def take(label):
        gc.collect()
        # the side-effect ledgers grow by design (a list slot per call): their own size is not counted
        ledgers = sum(sys.getsizeof(log) for log in logs)
        baseline[label] = (time.perf_counter() - started, sum(done), rss_kib() - ledgers // 1024,
                           tracemalloc.get_traced_memory()[0] - ledgers if args.tracemalloc else None)

    pool = [threading.Thread(target=worker, args=(t,)) for t in range(args.threads)]
    for th in pool:
        th.start()
    while any(th.is_alive() for th in pool) and "baseline" not in baseline:
        if time.perf_counter() - started >= args.baseline_seconds or sum(done) >= args.calls // 10:
            take("baseline")
        time.sleep(0.2)
    for th in pool:
        th.join()
    take("end")
    base = baseline.get("baseline", baseline["end"])
    end = baseline["end"]
    exact = all(len(log) == 2 * d for log, d in zip(logs, done)) and \
        all(list(s) == ["last"] and (s["last"] is not None) == bool(d) for s, d in zip(seen, done))
    print(f"calls: {sum(done)} x 2 over {args.threads} threads in {end[0]:.1f} s "
          f"({2 * sum(done) / end[0]:.0f} calls/s); graphs {STATS.graphs}, native entries {STATS.native_entries}, "
          f"captures {STATS.captures}")
    print(f"baseline at {base[0]:.1f} s after {base[1]} calls: RSS {base[2] / 1024:.1f} MiB"
          + (f", traced {base[3] / 2**20:.2f} MiB" if base[3] is not None else ""))
    print(f"end      at {end[0]:.1f} s after {end[1]} calls: RSS {end[2] / 1024:.1f} MiB"
          + (f", traced {end[3] / 2**20:.2f} MiB" if end[3] is not None else ""))
    print(f"growth after the baseline: RSS {(end[2] - base[2]) / 1024:+.1f} MiB"
          + (f", traced {(end[3] - base[3]) / 2**20:+.2f} MiB" if end[3] is not None else ""))
    print(f"every side effect exactly once: {'yes' if exact and not errors else 'NO'}; errors: {errors[:3]}")


if __name__ == "__main__":
    main()
