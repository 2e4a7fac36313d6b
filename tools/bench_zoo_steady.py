"""Steady per-call time of zoo models under jitcore and torch.compile, alternated in one process.

`tools/bench_zoo.py` times each compiler's steady calls right after its own first call, in a child process that
may share the machine with other jobs: on a GPU host running several models at once its steady column moves by 2x
from run to run. This tool builds each model once (the zoo's builder: random weights, eval, no_grad), compiles it
with both front ends and the same backend, and times rounds of calls alternating eager / jitcore / torch.compile,
reporting the best round of each (µs per call) and the ratio. Both compilers get the zoo's counting wrapper around
the backend, so the graph counts printed beside the times mean the same thing.

Run: `python tools/bench_zoo_steady.py --device cuda --only hf/bert,tv/mnasnet0_5` (inductor on a GPU, eager on a
CPU); `--profile NAME` prints cProfile's top entries of one model's jitcore and torch.compile calls.
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

import jitcore as jit  # noqa: E402
from tools.zoo.build import build  # noqa: E402
from tools.zoo.catalogue import select  # noqa: E402
from tools.zoo.measure import Counting, sync  # noqa: E402
from tools.zoo.summary import geomean  # noqa: E402


def _per_call_us(fn, args, kwargs, calls, device) -> float:
    sync(device)
    started = time.perf_counter()
    for _ in range(calls):
        fn(*args, **kwargs)
    sync(device)
    return (time.perf_counter() - started) / calls * 1e6


def measure(name: str, device: torch.device, backend: str, rounds: int, calls: int, profile: bool) -> dict:
    from torch._dynamo.backends.registry import lookup_backend  # lazy: dynamo's import only when measuring
    (entry,) = select(only=[name])
    built = build(entry, device)
    model, args, kwargs = built.model, built.args, built.kwargs
    ours, theirs = Counting(jit.backends.lookup(backend)), Counting(lookup_backend(backend))
    with torch.no_grad():
        compiled = jit.compile(model, backend=ours)
        reference = torch.compile(model, backend=theirs)
        compiled(*args, **kwargs)
        reference(*args, **kwargs)
        best = {"eager": float("inf"), "jitcore": float("inf"), "torch.compile": float("inf")}
        for _ in range(rounds):
            for label, fn in (("eager", model), ("jitcore", compiled), ("torch.compile", reference)):
                best[label] = min(best[label], _per_call_us(fn, args, kwargs, calls, device))
        if profile:
            for label, fn in (("jitcore", compiled), ("torch.compile", reference)):
                profiler = cProfile.Profile()
                profiler.runcall(_per_call_us, fn, args, kwargs, calls * 3, device)
                print(f"===== {name}: {label}")
                pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
    jit.reset()
    torch._dynamo.reset()
    return {"name": name, "graphs": (ours.graphs, theirs.graphs), **best}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", required=True, help="comma-separated zoo names (timm/NAME, tv/NAME, hf/TYPE[:HEAD])")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--backend", default=None, help="both compilers' backend (default: eager on cpu, inductor on cuda)")
    parser.add_argument("--rounds", type=int, default=7, help="alternating timed rounds (best reported)")
    parser.add_argument("--calls", type=int, default=100, help="calls per round")
    parser.add_argument("--profile", default="", help="comma-separated names to profile after timing")
    parser.add_argument("--threads", type=int, default=None, help="torch threads")
    options = parser.parse_args(argv)
    if options.threads:
        torch.set_num_threads(options.threads)
    device = torch.device(options.device)
    backend = options.backend or ("inductor" if device.type == "cuda" else "eager")
    profiled = set(filter(None, options.profile.split(",")))
    print(f"device={device.type} backend={backend} torch={torch.__version__} rounds={options.rounds} "
          f"calls={options.calls}")
    print("| model | graphs j/tc | eager µs | jitcore µs | torch.compile µs | jitcore/torch.compile |")
    print("|---|---|---|---|---|---|")
    ratios = []
    for name in filter(None, options.only.split(",")):
        row = measure(name, device, backend, options.rounds, options.calls, name in profiled)
        ratio = row["jitcore"] / row["torch.compile"]
        ratios.append(ratio)
        print(f"| `{name}` | {row['graphs'][0]}/{row['graphs'][1]} | {row['eager']:.0f} | {row['jitcore']:.0f} | "
              f"{row['torch.compile']:.0f} | {ratio:.2f} |", flush=True)
    if ratios:
        print(f"geomean jitcore/torch.compile steady: {geomean(ratios):.2f}x over {len(ratios)} models")
    return 0


if __name__ == "__main__":
    sys.exit(main())
