"""Measure one built model: eager, jitcore and torch.compile with the same backend, in this process.

For each compiler: the first call's time (capture and compile included), the steady time (median of a few calls),
whether the output matches eager's, the graphs the backend received, and any exception that reached the caller.
jitcore's breaks (reason, user file:line) and fallbacks come from `jit.explain()` on a fresh copy; torch.compile's
graph breaks from torch._dynamo's counters. The record grows phase by phase and `save` is called after each, so
a child killed by its timeout still leaves what it measured and the phase it was in.
Entry point: `measure(built, record, save, device, backend)`.
"""
from __future__ import annotations

import contextlib
import gc
import os
import shutil
import statistics
import sys
import tempfile
import time
import traceback

import torch

import jitcore as jit
from jitcore import backends as jit_backends
from jitcore.report import console as jit_console
from tools.zoo.compare import max_difference

__all__ = ["measure", "warm_up", "compile_caches", "Counting", "sync", "COMPILERS", "STEADY_CALLS", "CACHES"]

#: the compilers a record can hold, by their key in it
COMPILERS = ("jitcore", "torch")

#: how each measured compile meets inductor's and Triton's caches: "fresh" (default) gives every compiler run of
#: every model its own empty cache directory and clears inductor's in-memory caches first, so neither compiler
#: finds what the other (or a concurrent child, with --jobs > 1) compiled; "shared" leaves torch's defaults
CACHES = ("fresh", "shared")
_CACHE_VARIABLES = ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")

#: steady-state calls per compiler (median reported); fewer when a call is slow
STEADY_CALLS = 5
_STEADY_BUDGET_S = 3.0


class Counting:
    """A backend that counts the graphs it is handed and their ops (call nodes), and compiles them with `inner`;
    both compilers get one, so their counts mean the same thing."""

    def __init__(self, inner):
        self.inner = inner
        self.graphs = 0
        self.ops = 0
        self.__name__ = getattr(inner, "__name__", "counting")

    def __call__(self, gm, example_inputs):
        self.graphs += 1
        self.ops += sum(1 for node in gm.graph.nodes if node.op.startswith("call_"))
        return self.inner(gm, example_inputs)


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _timed(fn, args, kwargs, device):
    sync(device)
    started = time.perf_counter()
    out = fn(*args, **kwargs)
    sync(device)
    return out, time.perf_counter() - started


def _steady(fn, args, kwargs, device, calls: int) -> float | None:
    """Median time of up to `calls` calls (at least 2 unless `calls` is 0: no timing, None)."""
    times = []
    budget_end = time.perf_counter() + _STEADY_BUDGET_S
    while len(times) < calls and (len(times) < 2 or time.perf_counter() < budget_end):
        times.append(_timed(fn, args, kwargs, device)[1])
    return statistics.median(times) if times else None


def _user_frame(exc: BaseException) -> str:
    """file:line of the innermost frame outside torch, jitcore and this tool: where the user would look."""
    where = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        path = frame.filename
        if "/torch/" in path or "/jitcore/" in path or "/tools/zoo/" in path or path.startswith("<"):
            continue
        where = f"{_short(path)}:{frame.lineno}"
    return where


def _short(path: str) -> str:
    return path.split("site-packages/")[-1]


def _error(exc: BaseException) -> dict:
    last = traceback.extract_tb(exc.__traceback__)[-1:] or [None]
    raised_at = f"{_short(last[0].filename)}:{last[0].lineno}" if last[0] else ""
    return {"type": type(exc).__name__, "message": str(exc)[:500], "user_frame": _user_frame(exc),
            "raised_at": raised_at}


def _run_compiled(compiled, built, eager_out, device, result: dict, calls: int) -> None:
    """First call, correctness and steady time of one compiler, into `result`. The first call is timed twice:
    wall time (`first_s`) and this process's CPU time (`first_cpu_s`), which other jobs on a shared machine do
    not inflate (on a CPU run with one torch thread the two agree when the machine is idle)."""
    try:
        cpu_started = time.process_time()
        out, result["first_s"] = _timed(compiled, built.args, built.kwargs, device)
        result["first_cpu_s"] = time.process_time() - cpu_started
    except Exception as exc:  # reached the caller: the record says so
        result["error"] = _error(exc)
        return
    result["max_diff"] = max_difference(eager_out, out)
    result["correct"] = result["max_diff"] <= 1.0
    try:
        result["steady_s"] = _steady(compiled, built.args, built.kwargs, device, calls)
    except Exception as exc:  # a later call that raises is as bad as the first
        result["error"] = _error(exc)


def _jitcore(built, eager_out, device, backend, record, save, calls: int) -> None:
    result = record["jitcore"] = {"phase": "first call"}
    save()
    jit.reset()
    counting = Counting(jit_backends.lookup(backend))
    compiled = jit.compile(built.model, backend=counting)
    _run_compiled(compiled, built, eager_out, device, result, calls)
    result["graphs"], result["ops"] = counting.graphs, counting.ops
    result["fallbacks"] = [e.message[:300] for e in jit_console.EVENTS if e.topic == "fallbacks"]
    result["phase"] = "explain"
    save()
    try:
        report = jit.explain(built.model, *built.args, **built.kwargs)
    except Exception as exc:  # the tool's own problem; the timed run above is what counts
        result["explain_error"] = _error(exc)
    else:
        result["explain_graphs"] = report.graph_count
        result["breaks"] = [{"reason": b.reason[:300], "where": b.where, "function": b.function,
                             "resumed": b.resumed} for b in report.breaks]
        result["explain_fallbacks"] = [m[:300] for m in report.fallbacks]
    result.pop("phase")
    del compiled
    jit.reset()


def _torch_compile(built, eager_out, device, backend, record, save, calls: int) -> None:
    from torch._dynamo.backends.registry import lookup_backend  # lazy: keeps dynamo's import out of jitcore's time
    from torch._dynamo.utils import counters  # lazy: as above
    result = record["torch"] = {"phase": "first call"}
    save()
    torch._dynamo.reset()
    counters.clear()
    counting = Counting(lookup_backend(backend))
    compiled = torch.compile(built.model, backend=counting)
    _run_compiled(compiled, built, eager_out, device, result, calls)
    result["graphs"], result["ops"] = counting.graphs, counting.ops
    result["break_reasons"] = sorted(counters["graph_break"], key=lambda r: -counters["graph_break"][r])[:10]
    result["breaks"] = sum(counters["graph_break"].values())
    result.pop("phase")
    del compiled
    torch._dynamo.reset()


@contextlib.contextmanager
def compile_caches(caches: str):
    """Inductor's and Triton's on-disk caches for one measured compile (see CACHES): with "fresh", a new
    temporary directory named by TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR (read by inductor and Triton each
    time they look a cache up) and inductor's in-memory caches cleared; the variables are put back and the
    directory removed afterwards. Yields the directory (None for "shared")."""
    if caches not in CACHES:
        raise ValueError(f"caches must be one of {', '.join(CACHES)}, not {caches!r}")
    if caches == "shared":
        yield None
        return
    _clear_inductor_memory()
    folder = tempfile.mkdtemp(prefix="zoo-inductor-")
    before = {name: os.environ.get(name) for name in _CACHE_VARIABLES}
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = folder
    os.environ["TRITON_CACHE_DIR"] = os.path.join(folder, "triton")
    try:
        yield folder
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        _clear_inductor_memory()
        shutil.rmtree(folder, ignore_errors=True)


def _clear_inductor_memory() -> None:
    """Empty inductor's in-process caches (compiled modules, kernels), where inductor has been loaded."""
    utils = sys.modules.get("torch._inductor.utils")
    clear = getattr(utils, "clear_caches", None) or getattr(utils, "clear_inductor_caches", None)
    if clear is not None:
        clear()


_warmed: set = set()


class _WarmUp(torch.nn.Module):
    """The layers most models are made of (convolution, batch and layer norm, linear, embedding, attention, the
    usual activations), so that compiling it loads and sets up what every first call of a model would otherwise
    pay for once per process: lazily imported decompositions and meta functions, fake-tensor machinery."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.bn = torch.nn.BatchNorm2d(4)
        self.fc = torch.nn.Linear(4, 4)
        self.ln = torch.nn.LayerNorm(4)
        self.emb = torch.nn.Embedding(10, 4)
        self.mha = torch.nn.MultiheadAttention(4, 2, batch_first=True)

    def forward(self, x, ids):
        y = torch.nn.functional.hardswish(self.bn(self.conv(x))).mean((2, 3))
        y = self.ln(torch.nn.functional.gelu(self.fc(y))) + self.emb(ids).sum(1)
        q = y[:, None, :]
        y = y + torch.nn.functional.scaled_dot_product_attention(q, q, q).squeeze(1) + self.mha(q, q, q)[0][:, 0]
        return torch.softmax(y, -1) + torch.nn.functional.silu(y) * torch.sigmoid(y).clamp(0, 1)


def warm_up(device: torch.device, backend: str, compilers=COMPILERS) -> None:
    """Compile a small model of common layers (`_WarmUp`) under each compiler first (once per process), so that
    neither pays one-off imports and set-up inside a model's first call: whichever ran first would pay them for
    both."""
    model = _WarmUp().to(device).eval()
    inputs = (torch.randn(2, 3, 8, 8, device=device), torch.randint(0, 10, (2, 3), device=device))
    for name in compilers:
        if (name, device, backend) in _warmed:
            continue
        _warmed.add((name, device, backend))
        with torch.no_grad():
            if name == "jitcore":
                jit.compile(model, backend=backend)(*inputs)
                jit.reset()
            else:
                torch.compile(model, backend=backend)(*inputs)
                torch._dynamo.reset()


def _forget_fake_results() -> None:
    """Empty the fake-tensor dispatch cache, which FakeTensorMode keeps for the whole process: the second
    compiler of a model would otherwise find the shapes of the first one's operations there."""
    from torch._subclasses.fake_tensor import FakeTensorMode  # lazy: as the dynamo imports above
    FakeTensorMode.cache_clear()


def measure(built, record: dict, save, device: torch.device, backend: str, compilers=COMPILERS,
            steady_calls: int = STEADY_CALLS, caches: str = "fresh") -> None:
    """Fill `record` with eager's figures and those of each compiler (jitcore, torch) for `built`, in that
    order; `save()` after each phase. `steady_calls=0` skips the steady-state timing (tests); `caches`: see
    CACHES (each compiler's run, timed call and explain included, inside its own `compile_caches`)."""
    record["phase"] = "eager"
    save()
    with torch.no_grad():
        eager_out, first = _timed(built.model, built.args, built.kwargs, device)
        again = built.model(*built.args, **built.kwargs)
        steady = _steady(built.model, built.args, built.kwargs, device, steady_calls)
        record["eager"] = {"first_s": first, "steady_s": steady,
                           "deterministic": max_difference(eager_out, again) <= 1.0}
        del again
        runners = {"jitcore": _jitcore, "torch": _torch_compile}
        for name in compilers:
            record["phase"] = name
            gc.collect()
            _forget_fake_results()
            started = time.perf_counter()
            with compile_caches(caches):
                runners[name](built, eager_out, device, backend, record, save, steady_calls)
            record[name]["phase_s"] = round(time.perf_counter() - started, 2)
        record["caches"] = caches
    record.pop("phase")
    save()
