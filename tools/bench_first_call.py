"""First-call time (capture and compile) of zoo models under jitcore and torch.compile, alternated in one process.

`tools/bench_zoo.py` times each compiler's first call once, in a child that may share the machine with other jobs,
so one model's ratio moves by 0.1 between runs. This tool builds each model once (the zoo's builder: random
weights, eval, no_grad), warms both compilers up on the zoo's common layers, then makes several first calls of
each, alternating which compiler goes first in each round: before every first call it forgets the compiled code
(`jit.reset()` / `torch._dynamo.reset()`), collects garbage and empties FakeTensorMode's dispatch cache, so each
call captures from scratch. It reports the best process CPU time of each (one torch thread by default: CPU time
is then what the load on a shared machine changes least) and the ratio, per model and as a geomean.

Run: `python tools/bench_first_call.py --only hf/bert,tv/resnet18 --rounds 3`; `--profile NAME` prints cProfile's
top entries of one model's jitcore first call; `--json FILE` writes the rows.
"""
from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

import jitcore as jit  # noqa: E402
from tools.zoo.build import build  # noqa: E402
from tools.zoo.catalogue import select  # noqa: E402
from tools.zoo.measure import Counting, warm_up  # noqa: E402
from tools.zoo.summary import geomean  # noqa: E402

#: the twelve models of session 11's measurement: encoders, decoders, encoder-decoder, mixture of experts, CNNs
#: with batch norm, depthwise convolutions, window attention
DEFAULT_MODELS = ("hf/bert", "hf/gpt2:causal_lm", "hf/t5", "hf/llama", "hf/mixtral", "hf/qwen2",
                  "timm/convnext_zepto_rms", "timm/test_vit", "timm/test_efficientnet", "tv/resnet18", "tv/swin_t",
                  "tv/mobilenet_v3_small")


def _fresh() -> None:
    from torch._subclasses.fake_tensor import FakeTensorMode  # lazy: as tools/zoo/measure.py
    jit.reset()
    torch._dynamo.reset()
    FakeTensorMode.cache_clear()
    gc.collect()


def _first_call_cpu_s(make, args, kwargs, profiler=None) -> tuple:
    """Process CPU time of one first call of a freshly compiled model, and the graphs its backend received."""
    _fresh()
    compiled, counting = make()
    started = time.process_time()
    if profiler is None:
        compiled(*args, **kwargs)
    else:
        profiler.runcall(compiled, *args, **kwargs)
    spent = time.process_time() - started
    del compiled
    _fresh()
    return spent, counting.graphs


def measure(name: str, backend: str, rounds: int, profile: bool) -> dict:
    from torch._dynamo.backends.registry import lookup_backend  # lazy: dynamo's import only when measuring
    (entry,) = select(only=[name])
    device = torch.device("cpu")
    built = build(entry, device)
    model, args, kwargs = built.model, built.args, built.kwargs

    def ours():
        counting = Counting(jit.backends.lookup(backend))
        return jit.compile(model, backend=counting), counting

    def theirs():
        counting = Counting(lookup_backend(backend))
        return torch.compile(model, backend=counting), counting

    makers = {"jitcore": ours, "torch.compile": theirs}
    best = {label: float("inf") for label in makers}
    graphs = {}
    with torch.no_grad():
        model(*args, **kwargs)
        for round_ in range(rounds):
            order = list(makers) if round_ % 2 == 0 else list(reversed(makers))
            for label in order:
                spent, graphs[label] = _first_call_cpu_s(makers[label], args, kwargs)
                best[label] = min(best[label], spent)
        if profile:
            profiler = cProfile.Profile()
            _first_call_cpu_s(ours, args, kwargs, profiler)
            print(f"===== {name}: jitcore first call")
            pstats.Stats(profiler).sort_stats("tottime").print_stats(40)
    return {"name": name, "graphs": (graphs["jitcore"], graphs["torch.compile"]), **best}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default=",".join(DEFAULT_MODELS),
                        help="comma-separated zoo names (default: the twelve of DEFAULT_MODELS)")
    parser.add_argument("--backend", default="eager", help="both compilers' backend (default eager)")
    parser.add_argument("--rounds", type=int, default=3, help="first calls of each compiler (best reported)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--profile", default="", help="comma-separated names whose jitcore first call to profile")
    parser.add_argument("--json", default="", help="write the rows to this file")
    options = parser.parse_args(argv)
    torch.set_num_threads(options.threads)
    profiled = set(filter(None, options.profile.split(",")))
    with torch.no_grad():
        warm_up(torch.device("cpu"), options.backend)
    print(f"backend={options.backend} torch={torch.__version__} rounds={options.rounds} threads={options.threads} "
          f"jitcore={os.path.dirname(jit.__file__)}")
    print("| model | graphs j/tc | jitcore CPU s | torch.compile CPU s | jitcore/torch.compile |")
    print("|---|---|---|---|---|")
    rows = []
    for name in filter(None, options.only.split(",")):
        row = measure(name, options.backend, options.rounds, name in profiled)
        row["ratio"] = row["jitcore"] / row["torch.compile"]
        rows.append(row)
        print(f"| `{name}` | {row['graphs'][0]}/{row['graphs'][1]} | {row['jitcore']:.3f} | "
              f"{row['torch.compile']:.3f} | {row['ratio']:.2f} |", flush=True)
    if rows:
        print(f"geomean jitcore/torch.compile first call: {geomean([r['ratio'] for r in rows]):.3f}x "
              f"over {len(rows)} models")
    if options.json:
        with open(options.json, "w") as handle:
            json.dump(rows, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
