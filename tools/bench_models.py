"""Model benchmarks: eager, torch.compile and jitcore, both compilers with the inductor backend, in one process.

For each workload: the largest absolute difference from eager (outputs, and gradients for training workloads), the
first call's time (capture and compile included), the steady-state latency (median of N synchronized calls) and the
speedup over eager. torchvision and Hugging Face workloads run only where those packages are installed; every model
is built from code or a config (random weights, no downloads). A workload that fails under one compiler prints the
error in its row and the run goes on.

Run: `.venv/bin/python tools/bench_models.py [--device cuda|cpu] [--quick] [--only NAME[,NAME]] [--markdown]`.
Smoke check on a CPU: `--device cpu --quick --only mlp`. Each compiler compiles under a fresh inductor and Triton
cache (torch._inductor.utils.fresh_cache), so that neither reuses kernels the other one built, and the two take turns
at compiling first; `--first-calls N` (default 2) compiles each N times in alternating order and reports the mean. Steady-state calls are timed in interleaved rounds; `spread` is how far the slowest round's median
is above the fastest's, a measure of the noise.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime
import functools
import gc
import math
import os
import platform
import statistics
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402
from torch import nn  # noqa: E402

import jitcore as jit  # noqa: E402

__all__ = ["WORKLOADS", "main"]

COMPILERS = ("eager", "torch.compile", "jitcore")

#: jitcore's speedup must be at least this fraction of torch.compile's (the issue's "within 5%").
SPEEDUP_TARGET = 0.95


# Workloads: each builder returns (model or function, args, kwargs) on the device; `big` is False under --quick
# and on a CPU, where C++ compilation and slow kernels make the GPU sizes impractical.


@dataclasses.dataclass(frozen=True)
class Workload:
    """One row: `build(device, big)` makes the callable and its inputs; `train` adds a backward pass per call."""

    name: str
    build: Callable[[torch.device, bool], tuple[Any, tuple, dict]]
    train: bool = False
    needs: str | None = None  # a package the workload imports; the row says "not installed" without it
    description: str = ""


class MLP(nn.Module):
    def __init__(self, width: int, hidden: int, classes: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(width, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


class SmallCNN(nn.Module):
    def __init__(self, channels: int = 32, classes: int = 10) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, channels, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, 2 * channels, 3, stride=2, padding=1)
        self.bn2 = nn.BatchNorm2d(2 * channels)
        self.conv3 = nn.Conv2d(2 * channels, 2 * channels, 3, padding=1)
        self.bn3 = nn.BatchNorm2d(2 * channels)
        self.head = nn.Linear(2 * channels, classes)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = torch.relu(self.bn2(self.conv2(x)))
        x = torch.relu(self.bn3(self.conv3(x))) + x
        return self.head(x.mean(dim=(2, 3)))


class TransformerBlock(nn.Module):
    """Pre-norm block: hand-written multi-head attention and a GELU MLP, each with a residual."""

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        batch, length, dim = x.shape
        head_dim = dim // self.heads
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        q = q.view(batch, length, self.heads, head_dim).transpose(1, 2)
        k = k.view(batch, length, self.heads, head_dim).transpose(1, 2)
        v = v.view(batch, length, self.heads, head_dim).transpose(1, 2)
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(head_dim), dim=-1)
        mixed = (weights @ v).transpose(1, 2).reshape(batch, length, dim)
        x = x + self.proj(mixed)
        return x + self.mlp(self.norm2(x))


def pointwise(x, y):
    """Many elementwise ops on two large tensors: memory-bound in eager, one fused kernel when compiled."""
    a = torch.sin(x) * torch.cos(y) + x * 0.5
    b = torch.sigmoid(a) * torch.tanh(y - 1.0)
    c = torch.exp(-a.abs()) + torch.log1p(b * b)
    d = torch.where(c > 0.5, c * x, c - y)
    return d + torch.relu(a - b) * 2.0 - torch.erf(d * 0.1)


def _seeded(build: Callable[[], Any]) -> Any:
    torch.manual_seed(0)
    return build()


def _randn(device: torch.device, *shape: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(1)
    return torch.randn(*shape, generator=generator).to(device)


def _mlp(device, big):
    model = _seeded(lambda: MLP(1024, 4096, 1024) if big else MLP(64, 128, 10))
    return model.to(device), (_randn(device, 64 if big else 8, 1024 if big else 64),), {}


def _cnn(device, big):
    model = _seeded(lambda: SmallCNN(32 if big else 8))
    return model.to(device), (_randn(device, 32 if big else 2, 3, 64 if big else 16, 64 if big else 16),), {}


def _transformer(device, big):
    dim, heads, batch, length = (512, 8, 16, 128) if big else (32, 2, 2, 16)
    model = _seeded(lambda: TransformerBlock(dim, heads))
    return model.to(device), (_randn(device, batch, length, dim),), {}


def _pointwise(device, big):
    count = 1 << 22 if big else 1 << 14
    return pointwise, (_randn(device, count), _randn(device, count).flip(0)), {}


def _torchvision(name):
    def build(device, big):
        import torchvision

        model = _seeded(lambda: getattr(torchvision.models, name)(weights=None))
        size = (16, 3, 224, 224) if big else (1, 3, 64, 64)
        return model.to(device), (_randn(device, *size),), {}

    return build


def _bert(device, big):
    from transformers import BertConfig, BertModel

    config = BertConfig(hidden_size=256, num_hidden_layers=2, num_attention_heads=4, intermediate_size=1024,
                        vocab_size=8192, max_position_embeddings=256)
    model = _seeded(lambda: BertModel(config))
    batch, length = (16, 128) if big else (2, 16)
    ids = torch.randint(0, config.vocab_size, (batch, length), generator=torch.Generator().manual_seed(1))
    return model.to(device), (ids.to(device),), {"attention_mask": torch.ones(batch, length, device=device,
                                                                               dtype=torch.long)}


def _gpt2(device, big):
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(n_layer=2, n_embd=256, n_head=4, vocab_size=8192, n_positions=256, bos_token_id=0,
                        eos_token_id=0)
    model = _seeded(lambda: GPT2LMHeadModel(config))
    batch, length = (16, 128) if big else (2, 16)
    ids = torch.randint(0, config.vocab_size, (batch, length), generator=torch.Generator().manual_seed(1))
    return model.to(device), (ids.to(device),), {"use_cache": False}


WORKLOADS = [
    Workload("mlp", _mlp, description="3 Linear layers with ReLU"),
    Workload("mlp_train", _mlp, train=True, description="the MLP, forward and backward"),
    Workload("cnn", _cnn, description="3 conv + BatchNorm + ReLU, eval mode"),
    Workload("cnn_train", _cnn, train=True, description="the CNN in train mode, forward and backward"),
    Workload("transformer", _transformer, description="pre-norm block: LayerNorm, attention, GELU MLP"),
    Workload("transformer_train", _transformer, train=True, description="the block, forward and backward"),
    Workload("pointwise", _pointwise, description="~20 elementwise ops over 2 vectors"),
    Workload("resnet18", _torchvision("resnet18"), needs="torchvision", description="torchvision, weights=None"),
    Workload("mobilenet_v3_small", _torchvision("mobilenet_v3_small"), needs="torchvision",
             description="torchvision, weights=None"),
    Workload("bert_2layer", _bert, needs="transformers", description="BertModel from a 2-layer config"),
    Workload("gpt2_2layer", _gpt2, needs="transformers", description="GPT2LMHeadModel from a 2-layer config"),
]


# Measuring


@dataclasses.dataclass
class Result:
    """One compiler on one workload. `error` set means the other fields are missing."""

    median_ms: float | None = None
    first_s: float | None = None
    max_diff: float | None = None
    graphs: int | None = None
    spread: float | None = None  # (slowest round's median / fastest round's median) - 1: the noise in median_ms
    kernels: int | None = None  # device kernels one steady-state call launches (only with --kernels)
    note: str = ""
    error: str = ""


def _tensors(value: Any) -> list[torch.Tensor]:
    """Every tensor in an output: nested tuples, lists, dicts and Hugging Face ModelOutputs, in order."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, dict):  # ModelOutput is an OrderedDict
        return [t for item in value.values() for t in _tensors(item)]
    if isinstance(value, (tuple, list)):
        return [t for item in value for t in _tensors(item)]
    return []


def _max_diff(expected: list[torch.Tensor], actual: list[torch.Tensor]) -> float:
    if len(expected) != len(actual):
        raise AssertionError(f"{len(actual)} tensors where eager gives {len(expected)}")
    diffs = [(e.detach().double() - a.detach().double()).abs().max().item() for e, a in zip(expected, actual)
             if e.numel()]
    return max(diffs, default=0.0)


def _step(call: Callable[..., Any], model: Any, args: tuple, kwargs: dict, train: bool) -> list[torch.Tensor]:
    """One call: inference under no_grad, or forward + backward of a squared-mean loss; returns outputs (+grads)."""
    if not train:
        with torch.no_grad():
            return _tensors(call(*args, **kwargs))
    for parameter in model.parameters():
        parameter.grad = None
    outputs = _tensors(call(*args, **kwargs))
    sum(output.float().pow(2).mean() for output in outputs if output.is_floating_point()).backward()
    return [output.detach() for output in outputs] + [parameter.grad for parameter in model.parameters()]


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _first_call(step: Callable[[], Any], device: torch.device) -> tuple[float, Any]:
    """(seconds, result) of the first call: capture, compilation and the first run, synchronized."""
    _sync(device)
    started = time.perf_counter()
    result = step()
    _sync(device)
    return time.perf_counter() - started, result


def _timed_calls(step: Callable[[], Any], device: torch.device, warmup: int, iterations: int) -> list[float]:
    """Seconds of each of `iterations` calls after `warmup` untimed ones, each synchronized before and after."""
    for _ in range(warmup):
        step()
    times = []
    for _ in range(iterations):
        _sync(device)
        started = time.perf_counter()
        step()
        _sync(device)
        times.append(time.perf_counter() - started)
    return times


def _kernel_count(step: Callable[[], Any], device: torch.device) -> int | None:
    """Kernels that one call launches on the device, from torch.profiler; None where the profiler sees none."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    activity = ProfilerActivity.CUDA if device.type == "cuda" else ProfilerActivity.CPU
    try:
        with profile(activities=[activity]) as prof:
            step()
            _sync(device)
    except Exception:  # noqa: BLE001 - the count is optional; a profiler that fails leaves the cell empty
        return None
    wanted = DeviceType.CUDA if device.type == "cuda" else DeviceType.CPU
    return sum(1 for event in prof.events() if event.device_type == wanted) or None


def _fresh_cache():
    """torch._inductor.utils.fresh_cache (fresh_inductor_cache before torch 2.8), or nothing if neither exists."""
    from torch._inductor import utils

    maker = getattr(utils, "fresh_cache", None) or getattr(utils, "fresh_inductor_cache", None)
    return maker() if maker is not None else contextlib.nullcontext()


def _compiled(compiler: str, target: Any) -> Any:
    if compiler == "eager":
        return target
    if compiler == "torch.compile":
        return torch.compile(target, backend="inductor")
    return jit.compile(target, backend="inductor")


def _graph_count(compiler: str) -> int:
    if compiler == "torch.compile":
        from torch._dynamo.utils import counters

        return counters["stats"]["unique_graphs"]
    if compiler == "jitcore":
        from jitcore.runtime.cache import STATS

        return STATS.graphs
    return 0


def _jitcore_notes(events_before: int) -> str:
    """What jitcore said while compiling: graph breaks and fallbacks, shortened to fit a table cell."""
    from jitcore.report.console import EVENTS

    said = [(topic, message) for topic, message in EVENTS[events_before:] if topic in ("breaks", "fallbacks")]
    if not said:
        return ""
    topic, message = said[0]
    more = f" (+{len(said) - 1} more)" if len(said) > 1 else ""
    return f"{topic}: {_short(message, 110)}{more}"


def _dynamo_notes() -> str:
    from torch._dynamo.utils import counters

    breaks = sum(counters["graph_break"].values())
    return f"{breaks} graph break(s)" if breaks else ""


def _short(text: str, limit: int = 140) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def run_workload(workload: Workload, device: torch.device, big: bool, warmup: int, iterations: int, rounds: int,
                 kernels: bool, verbose: bool, jitcore_first: bool = False, first_calls: int = 1
                 ) -> dict[str, Result]:
    """Each compiler on one freshly built workload; a failure is caught and becomes that compiler's row.

    First every compiler makes its first call (timed alone, under its own fresh inductor cache; eager first, then
    torch.compile and jitcore in the order `jitcore_first` says); then the steady state is timed in `rounds`
    interleaved rounds (in a rotating order), so that drift in GPU clocks or machine load falls on all three alike.
    """
    from jitcore.report.console import EVENTS

    try:
        target, args, kwargs = workload.build(device, big)
    except ImportError as exc:
        return {compiler: Result(error=f"not installed ({exc.name or exc})") for compiler in COMPILERS}
    except Exception as exc:  # noqa: BLE001 - a workload that cannot be built is reported, not fatal
        return {compiler: Result(error=f"build failed: {type(exc).__name__}: {_short(exc)}") for compiler in COMPILERS}
    if isinstance(target, nn.Module):
        target.train(workload.train)
    model = target if isinstance(target, nn.Module) else nn.Module()
    results = {compiler: Result() for compiler in COMPILERS}
    steps: dict[str, Callable[[], Any]] = {}
    reference: list[torch.Tensor] | None = None
    torch._dynamo.reset()
    jit.reset()
    order = ["eager", "jitcore", "torch.compile"] if jitcore_first else list(COMPILERS)
    with contextlib.ExitStack() as caches:  # each compiler's cache directory lives until its timing is done
        for compiler in order:
            result = results[compiler]
            graphs_before, events_before = _graph_count(compiler), len(EVENTS)
            try:
                if compiler != "eager":
                    caches.enter_context(_fresh_cache())
                call = _compiled(compiler, target)
                step = functools.partial(_step, call, model, args, kwargs, workload.train)
                result.first_s, first = _first_call(step, device)
                if compiler == "eager":
                    reference, result.max_diff = first, 0.0
                else:
                    result.max_diff = _max_diff(reference, first) if reference is not None else None
                    result.graphs = _graph_count(compiler) - graphs_before
                    result.note = _jitcore_notes(events_before) if compiler == "jitcore" else _dynamo_notes()
                steps[compiler] = step
            except Exception as exc:  # noqa: BLE001 - one compiler failing must not stop the others or the run
                _record_failure(result, exc, verbose)
        times: dict[str, list[float]] = {compiler: [] for compiler in steps}
        round_medians: dict[str, list[float]] = {compiler: [] for compiler in steps}
        for round_index in range(rounds):
            order = list(steps)[round_index % len(steps):] + list(steps)[:round_index % len(steps)]
            for compiler in order:
                if results[compiler].error:
                    continue
                try:
                    measured = _timed_calls(steps[compiler], device, warmup, iterations)
                except Exception as exc:  # noqa: BLE001
                    _record_failure(results[compiler], exc, verbose)
                    continue
                times[compiler] += measured
                round_medians[compiler].append(statistics.median(measured))
        for compiler, measured in times.items():
            if measured and not results[compiler].error:
                results[compiler].median_ms = statistics.median(measured) * 1e3
                results[compiler].spread = max(round_medians[compiler]) / min(round_medians[compiler]) - 1
            if kernels and not results[compiler].error:
                results[compiler].kernels = _kernel_count(steps[compiler], device)
        del steps, reference
    _repeat_first_calls(results, target, model, args, kwargs, workload.train, device, jitcore_first, first_calls,
                        verbose)
    del target, model, args, kwargs
    torch._dynamo.reset()
    jit.reset()
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return results


def _repeat_first_calls(results, target, model, args, kwargs, train, device, jitcore_first, first_calls,
                        verbose) -> None:
    """Compile again from scratch `first_calls - 1` more times, the two compilers taking turns in the opposite
    order each time, and report the mean first call: whoever compiles second in a process gains from caches
    the first one warmed (compile workers, lazily built tables), so one ordering alone favours one of them."""
    timed = {c: [results[c].first_s] for c in ("torch.compile", "jitcore") if results[c].first_s is not None
             and not results[c].error}
    order = ["jitcore", "torch.compile"] if jitcore_first else ["torch.compile", "jitcore"]
    for _ in range(first_calls - 1):
        order.reverse()
        for compiler in order:
            if compiler not in timed:
                continue
            torch._dynamo.reset()
            jit.reset()
            try:
                with _fresh_cache():
                    step = functools.partial(_step, _compiled(compiler, target), model, args, kwargs, train)
                    seconds, _ = _first_call(step, device)
                timed[compiler].append(seconds)
            except Exception as exc:  # noqa: BLE001
                _record_failure(results[compiler], exc, verbose)
                timed.pop(compiler)
    for compiler, seconds in timed.items():
        results[compiler].first_s = statistics.mean(seconds)
        if verbose:
            print(f"  {compiler} first calls: {', '.join(f'{t:.2f}' for t in seconds)} s", flush=True)


def _record_failure(result: Result, exc: Exception, verbose: bool) -> None:
    if verbose:
        traceback.print_exc()
    result.error = f"{type(exc).__name__}: {_short(exc)}"


def _warm_up_process(device: torch.device) -> None:
    """Pay once, before any measurement, for what only the first compile in a process costs (imports, the
    inductor compile workers, CUDA context and Triton set-up, AOTAutograd's partitioner and backward compilation),
    so that it lands on neither compiler's first call, whichever compiles first."""

    def tiny(x, weight):
        return torch.relu(x @ weight) * 2 + 1

    x, weight = torch.ones(8, 8, device=device), torch.ones(8, 8, device=device)
    layer = nn.Sequential(nn.Linear(8, 8), nn.ReLU()).to(device)
    for compiler in COMPILERS[1:]:
        try:
            with _fresh_cache():
                with torch.no_grad():
                    _compiled(compiler, tiny)(x, weight)
                _compiled(compiler, tiny)(x, weight.requires_grad_()).sum().backward()
                weight.requires_grad_(False)
                # a module's parameters take their own path (static inputs) through AOTAutograd and Inductor
                _compiled(compiler, layer)(x).sum().backward()
        except Exception as exc:  # noqa: BLE001 - its rows will show the error; the other compiler still runs
            print(f"warm-up of {compiler} failed: {type(exc).__name__}: {_short(exc)}", flush=True)
    _sync(device)
    torch._dynamo.reset()
    jit.reset()


# Reporting


def _speedup(eager: Result, other: Result) -> float | None:
    if eager.median_ms is None or other.median_ms is None:
        return None
    return eager.median_ms / other.median_ms


def _target_met(results: dict[str, Result]) -> str:
    """Whether jitcore's speedup is within 5% of torch.compile's (or above) and its first call no slower."""
    eager, tc, jc = results["eager"], results["torch.compile"], results["jitcore"]
    tc_speedup, jc_speedup = _speedup(eager, tc), _speedup(eager, jc)
    if jc_speedup is None:
        return "no (jitcore failed)"
    if tc_speedup is None:
        return "n/a (torch.compile failed)"
    speed_ok = jc_speedup >= SPEEDUP_TARGET * tc_speedup
    first_ok = jc.first_s <= tc.first_s
    if speed_ok and first_ok:
        return "yes"
    reasons = ([] if speed_ok else ["speed"]) + ([] if first_ok else ["first call"])
    return "no (" + ", ".join(reasons) + ")"


def _fmt(value: float | None, spec: str, suffix: str = "") -> str:
    return "-" if value is None else f"{value:{spec}}{suffix}"


_COLUMNS = ["workload", "eager ms", "torch.compile ms", "tc speedup", "tc first s", "jitcore ms", "jit speedup",
            "jit first s", "spread e/tc/jit", "graphs tc/jit", "max diff tc / jit", "target met", "notes"]
_KERNEL_COLUMN = "kernels e/tc/jit"


def _row(workload: Workload, results: dict[str, Result], kernels: bool) -> list[str]:
    eager, tc, jc = results["eager"], results["torch.compile"], results["jitcore"]
    if eager.error:
        return [workload.name] + ["-"] * (len(_COLUMNS) - 2 + kernels) + [f"eager: {eager.error}"]
    kernel_cell = ["/".join(_fmt(results[c].kernels, "d") for c in COMPILERS)] if kernels else []
    notes = [f"{name}: {r.error}" for name, r in (("torch.compile", tc), ("jitcore", jc)) if r.error]
    notes += [f"{name} {r.note}" for name, r in (("torch.compile", tc), ("jitcore", jc)) if r.note and not r.error]
    return [
        workload.name,
        _fmt(eager.median_ms, ".3f"),
        _fmt(tc.median_ms, ".3f"),
        _fmt(_speedup(eager, tc), ".2f", "x"),
        _fmt(tc.first_s, ".2f"),
        _fmt(jc.median_ms, ".3f"),
        _fmt(_speedup(eager, jc), ".2f", "x"),
        _fmt(jc.first_s, ".2f"),
        "/".join(_fmt(None if results[c].spread is None else 100 * results[c].spread, ".0f", "%") for c in COMPILERS),
        f"{_fmt(tc.graphs, 'd')}/{_fmt(jc.graphs, 'd')}",
        *kernel_cell,
        f"{_fmt(tc.max_diff, '.1e')} / {_fmt(jc.max_diff, '.1e')}",
        _target_met(results),
        "; ".join(notes),
    ]


def _print_plain(row: list[str], widths: list[int]) -> None:
    print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip(), flush=True)


def _columns(kernels: bool) -> list[str]:
    columns = list(_COLUMNS)
    if kernels:
        columns.insert(columns.index("graphs tc/jit") + 1, _KERNEL_COLUMN)
    return columns


def _markdown(rows: list[list[str]], columns: list[str]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join(" --- " for _ in columns) + "|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def _environment(device: torch.device) -> str:
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor() or "CPU"
    return (f"{datetime.date.today().isoformat()}, torch {torch.__version__}, Python {platform.python_version()}, "
            f"device {device.type} ({name}), {torch.get_num_threads()} CPU threads")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--quick", action="store_true", help="small inputs and few iterations (a smoke check)")
    parser.add_argument("--only", default="", help="comma-separated workload names: " +
                        ", ".join(w.name for w in WORKLOADS))
    parser.add_argument("--iterations", type=int, default=None,
                        help="timed calls per compiler in each round (default 20, quick 3)")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved timing rounds (default 5, quick 2)")
    parser.add_argument("--kernels", action="store_true",
                        help="also count the kernels one steady call launches (torch.profiler; on a CPU, its "
                             "CPU events)")
    parser.add_argument("--first-calls", type=int, default=2,
                        help="times each compiler compiles from scratch, taking turns in alternating order; the "
                             "first-call column is their mean (default 2)")
    parser.add_argument("--markdown", action="store_true", help="print a markdown table at the end, for docs")
    parser.add_argument("--verbose", action="store_true", help="print tracebacks of failures")
    args = parser.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: torch.cuda.is_available() is False here; use --device cpu")
    device = torch.device(args.device)
    chosen = [w for w in WORKLOADS if not args.only or w.name in args.only.split(",")]
    unknown = set(filter(None, args.only.split(","))) - {w.name for w in WORKLOADS}
    if unknown:
        parser.error(f"--only: unknown workload(s) {', '.join(sorted(unknown))}")
    big = device.type == "cuda" and not args.quick
    iterations = args.iterations or (3 if args.quick else 20)
    rounds = args.rounds or (2 if args.quick else 5)
    warmup = 2 if args.quick else 5
    warnings.filterwarnings("ignore")
    torch._dynamo.config.cache_size_limit = 64

    print(_environment(device), flush=True)
    print(f"sizes {'GPU' if big else 'small'}; steady state: {rounds} interleaved rounds of {warmup} warm-up + "
          f"{iterations} timed calls per compiler; both compilers use backend='inductor' (default mode)", flush=True)
    _warm_up_process(device)
    columns = _columns(args.kernels)
    widths = [18, 9, 16, 10, 10, 10, 11, 11, 15, 13] + ([16] if args.kernels else []) + [17, 20, 0]
    _print_plain(columns, widths)
    rows = []
    for index, workload in enumerate(chosen):  # every other workload compiles with jitcore before torch.compile
        results = run_workload(workload, device, big, warmup, iterations, rounds, args.kernels, args.verbose,
                               jitcore_first=index % 2 == 1, first_calls=args.first_calls)
        row = _row(workload, results, args.kernels)
        rows.append(row)
        _print_plain(row, widths)
    if args.markdown:
        print()
        print(_markdown(rows, columns))
    return 0


if __name__ == "__main__":
    sys.exit(main())
