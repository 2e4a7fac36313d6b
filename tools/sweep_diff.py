"""Shape sweeps, differentially: each corpus program over each of its sweeps, jitcore and torch.compile against eager.

    PYTHONPATH=. python tools/sweep_diff.py [--only name,name] [--modes auto,dynamic,static,register] [--all]
    PYTHONPATH=. python tools/sweep_diff.py --print-counts     # torch.compile's counts, for tools/sweep_corpus.py

Modes: `auto` is `jit.compile(f)` against `torch.compile(f)` (dynamic=None), `dynamic` and `static` pass
dynamic=True / False to both, `register` is `jit.register(f)` + `with jit.enabled():` against torch.compile's auto.
Every call of both compilers is checked against eager (values, dtype, shape, requires_grad, the exception's type
and, for jitcore, its message; what it printed; its tensor arguments and the module's buffers after the call; with
`grads`, the gradients of the inputs and parameters after a backward over the float outputs); graphs are counted
with a counting backend (each graph then runs as the eager backend would).
jitcore's contained faults (`fallbacks` events other than a graph that raised) count as errors.
The table lists the rows where jitcore is wrong, errors or makes more graphs than torch.compile (`--all`: every
row), then the counts: wrong / errors / more / same / fewer / tc-wrong (torch.compile wrong on the sweep, jitcore right
with more graphs; the corpus's TORCH_COMPILE_WRONG says why).
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import dataclasses
import io
import logging
import sys
import traceback
from typing import Any

import torch
import torch._dynamo

import jitcore as jit
from jitcore import events
from tools import sweep_corpus
from tools.sweep_corpus import PROGRAMS, TORCH_COMPILE_WRONG, Program, params

__all__ = ["Row", "run_program", "main", "eager_calls", "jit_calls", "torch_compile_calls", "compare", "compare_outcome"]

MODES = ("auto", "dynamic", "static", "register")
_DYNAMIC = {"auto": None, "dynamic": True, "static": False, "register": None}


class Counter:
    """A backend that counts the graphs it is handed and runs each as it is (the eager backend)."""

    def __init__(self):
        self.graphs = 0

    def __call__(self, gm, example_inputs):
        self.graphs += 1
        return gm.forward


@dataclasses.dataclass
class Outcome:
    """One call: its result or exception, and the gradients taken after it (None: not asked)."""

    result: Any = None
    error: BaseException | None = None
    grads: list | None = None
    printed: str = ""
    state: list | None = None


def _float_tensors(value, out):
    if isinstance(value, torch.Tensor):
        if value.requires_grad and value.dtype.is_floating_point:
            out.append(value)
    elif isinstance(value, (tuple, list)):
        for item in value:
            _float_tensors(item, out)
    elif isinstance(value, dict):
        for item in value.values():
            _float_tensors(item, out)
    return out


def _state(trained, args) -> list:
    """What a call may have changed besides its result: its tensor arguments (in place) and the module's buffers."""
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    tensors += [t for a in args if isinstance(a, list) for t in a if isinstance(t, torch.Tensor)]
    if isinstance(trained, torch.nn.Module):
        tensors += list(trained.buffers())
    return [t.detach().clone() for t in tensors]


def _call(fn, program: Program, trained, args) -> Outcome:
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            result = fn(*args)
    except Exception as exc:  # the program's own error: compared with eager's
        return Outcome(error=exc, printed=printed.getvalue(), state=_state(trained, args))
    outcome = Outcome(result=result, printed=printed.getvalue(), state=_state(trained, args))
    if program.grads:
        outs = _float_tensors(result, [])
        if outs:
            sum(out.sum() for out in outs).backward()
        leaves = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
        leaves += [t for a in args if isinstance(a, list) for t in a if isinstance(t, torch.Tensor) and t.requires_grad]
        leaves += params(trained)
        outcome.grads = [None if leaf.grad is None else leaf.grad.clone() for leaf in leaves]
        for leaf in leaves:
            leaf.grad = None
    return outcome


def _tolerance(dtype):
    return (1e-2, 1e-2) if dtype in (torch.float16, torch.bfloat16) else (1e-4, 1e-5)


def compare(expected, actual, path="result") -> str | None:
    """None when `actual` is what eager gave, else what differs."""
    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, torch.Tensor):
            return f"{path}: tensor expected, got {type(actual).__name__}"
        for what in ("dtype", "shape", "requires_grad", "device"):
            if getattr(expected, what) != getattr(actual, what):
                return f"{path}: {what} {getattr(expected, what)} != {getattr(actual, what)}"
        rtol, atol = _tolerance(expected.dtype)
        try:
            torch.testing.assert_close(actual.detach(), expected.detach(), rtol=rtol, atol=atol, equal_nan=True)
        except AssertionError as exc:
            return f"{path}: values differ ({str(exc).splitlines()[0]})"
        return None
    if type(expected) is not type(actual):
        return f"{path}: {type(expected).__name__} expected, got {type(actual).__name__} {actual!r:.60}"
    if isinstance(expected, (tuple, list)):
        if len(expected) != len(actual):
            return f"{path}: length {len(expected)} != {len(actual)}"
        for index, (e, a) in enumerate(zip(expected, actual)):
            problem = compare(e, a, f"{path}[{index}]")
            if problem:
                return problem
        return None
    if expected != actual and not (expected != expected and actual != actual):
        return f"{path}: {expected!r} != {actual!r}"
    return None


def compare_outcome(expected: Outcome, actual: Outcome, messages: bool) -> str | None:
    if expected.error is not None or actual.error is not None:
        if expected.printed != actual.printed:
            return f"printed {actual.printed[:60]!r} != eager's {expected.printed[:60]!r}"
        if expected.error is None:
            return f"raised {type(actual.error).__name__}: {str(actual.error)[:120]}"
        if actual.error is None:
            return f"returned where eager raised {type(expected.error).__name__}"
        if type(expected.error) is not type(actual.error):
            return f"raised {type(actual.error).__name__} where eager raised {type(expected.error).__name__}"
        if messages and str(expected.error) != str(actual.error):
            return f"message {str(actual.error)[:80]!r} != eager's {str(expected.error)[:80]!r}"
        return None
    problem = compare(expected.result, actual.result)
    if problem is None and expected.printed != actual.printed:
        problem = f"printed {actual.printed[:60]!r} != eager's {expected.printed[:60]!r}"
    if problem is None and expected.state is not None:
        problem = compare(expected.state, actual.state, "state")
    if problem is None and expected.grads is not None:
        problem = compare(expected.grads, actual.grads, "grads")
    return problem


def _outcomes(fn, program: Program, trained, items) -> list[Outcome]:
    return [_call(fn, program, trained, program.args(item)) for item in items]


def eager_calls(program: Program, items) -> list[Outcome]:
    made = program.make()
    return _outcomes(made, program, made, items)


def jit_calls(program: Program, items, mode: str) -> tuple[list[Outcome], int]:
    """jitcore's outcomes of one sweep in one mode, and its graph count."""
    jit.reset()
    counter = Counter()
    made = program.make()
    if mode == "register":
        jit.register(made)
        try:
            with jit.enabled(backend=counter, dynamic=None):
                outcomes = _outcomes(made, program, made, items)
        finally:
            jit.unregister(made)
    else:
        compiled = jit.compile(made, backend=counter, dynamic=_DYNAMIC[mode])
        outcomes = _outcomes(compiled, program, made, items)
    jit.reset()
    return outcomes, counter.graphs


def torch_compile_calls(program: Program, items, mode: str) -> tuple[list[Outcome], int]:
    torch._dynamo.reset()
    counter = Counter()
    made = program.make()
    compiled = torch.compile(made, backend=counter, dynamic=_DYNAMIC[mode])
    outcomes = _outcomes(compiled, program, made, items)
    torch._dynamo.reset()
    return outcomes, counter.graphs


@dataclasses.dataclass
class Row:
    program: str
    sweep: str
    mode: str
    status: str  # wrong, error, more, same, fewer
    jit_graphs: int
    tc_graphs: int
    detail: str = ""
    tc_wrong: str = ""


class _Faults:
    """jitcore's contained faults while it is active (a graph raising is the program's error, not a fault)."""

    def __init__(self):
        self.seen: list[str] = []

    def __call__(self, topic, message, key, always, facts):
        if topic == "fallbacks" and not (isinstance(key, tuple) and key and key[0] == "graph raised"):
            self.seen.append(message)


def run_program(program: Program, modes=MODES, sweeps=None) -> list[Row]:
    rows = []
    for sweep, items in program.sweeps.items():
        if sweeps and sweep not in sweeps:
            continue
        eager = eager_calls(program, items)
        tc_cache = {}
        for mode in modes:
            tc_mode = "auto" if mode == "register" else mode
            if tc_mode not in tc_cache:
                tc_cache[tc_mode] = torch_compile_calls(program, items, tc_mode)
            tc_outcomes, tc_graphs = tc_cache[tc_mode]
            faults = _Faults()
            events.subscribe(faults)
            try:
                outcomes, graphs = jit_calls(program, items, mode)
            except Exception as exc:  # a failure of the tool's own or of jitcore outside the user's call
                rows.append(Row(program.name, sweep, mode, "error", -1, tc_graphs,
                                f"{type(exc).__name__}: {exc}"[:160]))
                traceback.print_exc()
                continue
            finally:
                events.unsubscribe(faults)
            problems = [f"call {i} ({item}): {p}" for i, (item, e, a) in enumerate(zip(items, eager, outcomes))
                        if (p := compare_outcome(e, a, messages=True))]
            tc_problems = [f"call {i}: {p}" for i, (e, a) in enumerate(zip(eager, tc_outcomes))
                           if (p := compare_outcome(e, a, messages=False))]
            if problems:
                status, detail = "wrong", problems[0]
            elif faults.seen:
                status, detail = "error", faults.seen[0]
            elif tc_problems and graphs > tc_graphs:
                # torch.compile's count is not a bar where it gave a wrong answer (TORCH_COMPILE_WRONG says why)
                status, detail = "tc-wrong", TORCH_COMPILE_WRONG.get(f"{program.name}/{sweep}", "")
            elif graphs > tc_graphs:
                status, detail = "more", ""
            elif graphs == tc_graphs:
                status, detail = "same", ""
            else:
                status, detail = "fewer", ""
            rows.append(Row(program.name, sweep, mode, status, graphs, tc_graphs, detail[:200],
                            tc_problems[0][:120] if tc_problems else ""))
    return rows


def _table(rows: list[Row], show_all: bool) -> str:
    lines = ["| program | sweep | mode | status | jitcore graphs | torch.compile graphs | detail |",
             "|---|---|---|---|---|---|---|"]
    for row in rows:
        if show_all or row.status in ("wrong", "error", "more"):
            detail = row.detail + (f" [torch.compile wrong: {row.tc_wrong}]" if row.tc_wrong else "")
            lines.append(f"| {row.program} | {row.sweep} | {row.mode} | {row.status} | {row.jit_graphs} | "
                         f"{row.tc_graphs} | {detail.replace('|', '/')} |")
    counts = collections.Counter(row.status for row in rows)
    lines.append("")
    lines.append("rows: " + " / ".join(f"{status} {counts.get(status, 0)}"
                                        for status in ("wrong", "error", "more", "same", "fewer", "tc-wrong"))
                 + f" (of {len(rows)}; {len({r.program for r in rows})} programs)")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated program names")
    parser.add_argument("--kind", default="", help="comma-separated program kinds")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--all", action="store_true", help="print every row, not only the losing ones")
    parser.add_argument("--print-counts", action="store_true",
                        help="print torch.compile's graph counts as the TORCH_COMPILE_GRAPHS literal")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--part", default="1/1", help="i/n: run the i-th of n slices of the corpus (parallel runs)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    jit.config.log = ""
    logging.getLogger("torch").setLevel(logging.CRITICAL)  # torch.compile's logs of the programs' own errors
    only = set(filter(None, args.only.split(",")))
    kinds = set(filter(None, args.kind.split(",")))
    modes = tuple(filter(None, args.modes.split(",")))
    part, parts = (int(n) for n in args.part.split("/"))
    chosen = [p for p in PROGRAMS if (not only or p.name in only) and (not kinds or p.kind in kinds)]
    chosen = chosen[part - 1::parts]
    if args.print_counts:
        print("TORCH_COMPILE_GRAPHS: dict[str, int] = {")
        for program in chosen:
            for sweep, items in program.sweeps.items():
                row = [f"{program.name + '/' + sweep + '/' + mode!r}: {torch_compile_calls(program, items, mode)[1]}"
                       for mode in ("auto", "dynamic", "static")]
                print(f"    {', '.join(row)},")
        print("}")
        return 0
    rows = []
    for program in chosen:
        program_rows = run_program(program, modes)
        rows.extend(program_rows)
        bad = [r for r in program_rows if r.status in ("wrong", "error", "more")]
        print(f"{program.name}: {len(bad)} losing of {len(program_rows)}", file=sys.stderr, flush=True)
    print(_table(rows, args.all))
    return 0


if __name__ == "__main__":
    sys.exit(main())
