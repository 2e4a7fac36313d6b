"""Differential check of the constructs issue 15 names: each small program of `tools/constructs.py` runs eagerly,
through `jit.compile`, through `jit.register` + `with jit.enabled():`, and through `torch.compile(backend=...)`,
all in one process, three calls each.

Every door gets a fresh copy of the program (its source executed into a new module), so that globals, classes and
objects a program changes start equal. After each call the runner compares with eager: the result or the exception
(type and message), what was printed, the program's `observe()` (globals, objects, parameters) and the gradients
that `result.sum().backward()` leaves on the inputs and on what `observe()` returns. Graphs are counted with a
counting backend for jitcore and torch.compile alike: graphs after the first call, and graphs added by calls 2-3
(recompiles; a program whose inputs change a guarded value on purpose, such as an environment variable, has them
on both sides).

Prints the programs where jitcore is wrong, errors, has more graphs than torch.compile or recompiles more, then the
counts. `--all` prints every program; `--record` prints the torch.compile counts in the corpus's notation (None
where torch.compile itself differs from eager), for pasting into `tools/constructs.py` when torch or the corpus
changes.

Run:
  .venv/bin/python tools/construct_diff.py                 # the table of losers and the totals
  .venv/bin/python tools/construct_diff.py --only 'env*,moe*' --all
  .venv/bin/python tools/construct_diff.py --record        # re-measure torch.compile's counts
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import fnmatch
import io
import linecache
import logging
import os
import sys
import traceback
import types
import warnings
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

from tools.constructs import PROGRAMS, Program  # noqa: E402

__all__ = ["Outcome", "Report", "check_program", "load", "main", "run_door"]

CALLS = 3


class _Counting:
    """A backend that counts the graphs it is handed and runs each as FX wrote it."""

    def __init__(self) -> None:
        self.graphs = 0

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
        self.graphs += 1
        return gm.forward


def load(program: Program, door: str) -> types.ModuleType:
    """A fresh module holding the program: its own globals, classes and objects."""
    name = f"construct_{program.name.replace('-', '_')}_{door}"
    filename = f"<construct {program.name} {door}>"
    source = program.source
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    module = types.ModuleType(name)
    module.__file__ = filename
    sys.modules[name] = module  # dataclasses and pickling look classes up by module name
    exec(compile(source, filename, "exec"), module.__dict__)
    return module


@dataclasses.dataclass
class Outcome:
    """What one call did, in values comparable across doors."""
    result: Any = None
    error: tuple[str, str] | None = None
    printed: str = ""
    state: Any = None
    grads: list[Any] = dataclasses.field(default_factory=list)


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for item in value for t in _tensors(item)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in _tensors(item)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [t for f in dataclasses.fields(value) for t in _tensors(getattr(value, f.name))]
    return []


def _snapshot(value: Any) -> Any:
    """A detached copy of plain data: tensors cloned, containers rebuilt, anything else left as it is."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, (tuple, list)) and not isinstance(value, torch.Size):
        return type(value)(_snapshot(v) for v in value) if type(value) in (tuple, list) else [
            _snapshot(v) for v in value]
    if isinstance(value, dict):
        return {k: _snapshot(v) for k, v in value.items()}
    return value


def _called(module: types.ModuleType, value: Any) -> Any:
    """`value` with each closure or lambda it holds replaced by what it returns for `probe_args()`: what a returned
    function computes is compared, not its identity."""
    if isinstance(value, tuple):
        return tuple(_called(module, item) for item in value)
    if isinstance(value, types.FunctionType):
        return ("function", value(*module.probe_args()))
    return value


def _call(module: types.ModuleType, door: Callable[..., Any], index: int) -> Outcome:
    args = module.inputs(index)
    out = Outcome()
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        try:
            result = door(*args)
        except Exception as exc:  # noqa: BLE001 - compared with eager's
            out.error = (type(exc).__name__, str(exc))
            result = None
    out.printed = buffer.getvalue()
    with contextlib.redirect_stdout(io.StringIO()):
        result = _called(module, result)
    differentiable = [t for t in _tensors(result) if t.requires_grad and t.grad_fn is not None]
    if differentiable:
        sum(t.float().sum() for t in differentiable).backward()
    out.grads = [None if t.grad is None else t.grad.clone() for t in _tensors(args) if t.requires_grad]
    out.result = _snapshot(result)
    observe = getattr(module, "observe", None)
    if observe is not None:
        state = observe()
        out.state = _snapshot(state)
    return out


def run_door(program: Program, door: str, backend: _Counting | None) -> tuple[list[Outcome], list[int]]:
    """Three calls of the program through one door; returns the outcomes and the graph count after each call."""
    import jitcore as jit

    module = load(program, door)
    fn = module.f
    if door == "eager":
        call = fn
    elif door == "compile":
        call = jit.compile(fn, backend=backend)
    elif door == "register":
        # one block around the three calls: a registered function's first call in a block runs natively while
        # it is captured (sys.monitoring cannot redirect a frame that has started), later calls run compiled
        jit.register(fn)
        call = fn
    elif door == "torch":
        torch._dynamo.reset()
        call = torch.compile(fn, backend=backend)
    else:
        raise ValueError(door)
    torch.manual_seed(0)
    outcomes, graphs = [], []
    block = jit.enabled(backend=backend) if door == "register" else contextlib.nullcontext()
    try:
        with block:
            for index in range(CALLS):
                outcomes.append(_call(module, call, index))
                graphs.append(backend.graphs if backend is not None else 0)
    finally:
        if door == "register":
            jit.unregister(fn)
        if door == "torch":
            torch._dynamo.reset()
    return outcomes, graphs


def _kind(value: Any) -> str:
    """A type's name that is the same for the program's own classes across doors (each door has its own module)."""
    kind = type(value)
    return kind.__qualname__ if kind.__module__.startswith("construct_") else f"{kind.__module__}.{kind.__qualname__}"


def _differ(expected: Any, actual: Any, path: str) -> str | None:
    """Where `actual` differs from `expected`, or None."""
    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, torch.Tensor):
            return f"{path}: tensor vs {type(actual).__name__}"
        if expected.shape != actual.shape or expected.dtype != actual.dtype:
            return f"{path}: {expected.dtype}{tuple(expected.shape)} vs {actual.dtype}{tuple(actual.shape)}"
        if not torch.allclose(expected.float(), actual.float(), rtol=1e-4, atol=1e-5, equal_nan=True):
            return f"{path}: values differ"
        return None
    if type(expected) is not type(actual) and _kind(expected) != _kind(actual):
        return f"{path}: {_kind(expected)} vs {_kind(actual)}"
    if isinstance(expected, (tuple, list)) and not isinstance(expected, torch.Size):
        if len(expected) != len(actual):
            return f"{path}: length {len(expected)} vs {len(actual)}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            if (found := _differ(e, a, f"{path}[{i}]")) is not None:
                return found
        return None
    if isinstance(expected, dict):
        if list(expected) != list(actual):
            return f"{path}: keys {list(expected)} vs {list(actual)}"
        for k in expected:
            if (found := _differ(expected[k], actual[k], f"{path}[{k!r}]")) is not None:
                return found
        return None
    if dataclasses.is_dataclass(expected) and not isinstance(expected, type):
        # field by field: asdict deep-copies, which a tensor with a grad_fn refuses
        for f in dataclasses.fields(expected):
            found = _differ(getattr(expected, f.name), getattr(actual, f.name), f"{path}.{f.name}")
            if found is not None:
                return found
        return None
    try:
        same = expected == actual
        same = bool(same)
    except Exception:  # noqa: BLE001 - an object without a usable ==: compare what it prints as
        same = repr(expected) == repr(actual)
    if not same and type(expected).__eq__ is object.__eq__:
        same = True  # identity-compared objects from two separate worlds: nothing to compare
    return None if same else f"{path}: {expected!r} vs {actual!r}"


def compare(expected: list[Outcome], actual: list[Outcome]) -> str | None:
    for index, (e, a) in enumerate(zip(expected, actual)):
        where = f"call {index + 1}"
        if e.error != a.error:
            return f"{where}: raised {e.error} vs {a.error}"
        if e.printed != a.printed:
            return f"{where}: printed {e.printed!r} vs {a.printed!r}"
        for name in ("result", "state", "grads"):
            found = _differ(getattr(e, name), getattr(a, name), name)
            if found is not None:
                return f"{where}: {found}"
    return None


@dataclasses.dataclass
class Report:
    """One program's verdict: what jitcore got wrong; per door (compile, register, torch) the graphs after the first
    call and the graphs calls 2-3 added."""
    name: str
    problem: str = ""
    graphs: dict[str, int] = dataclasses.field(default_factory=dict)
    recompiles: dict[str, int] = dataclasses.field(default_factory=dict)
    #: how torch.compile differed from eager ("" when it did not): its counts are then no bar to measure against.
    torch_wrong: str = ""

    def losses(self) -> list[str]:
        """Wrong or failing doors; more graphs on the first call than torch.compile (jit.compile's door: the
        register door's first call runs natively); more graphs over the three calls (recompiles) than it; no
        graph at all where it has some."""
        out = [self.problem] if self.problem else []
        if self.torch_wrong or not self.graphs.get("torch"):
            return out  # torch.compile is wrong, or captured nothing: no bar for the counts
        if self.graphs.get("compile", 0) > self.graphs["torch"]:
            out.append(f"compile: {self.graphs['compile']} graphs > torch.compile's {self.graphs['torch']}")
        tc_total = self.graphs["torch"] + self.recompiles["torch"]
        for door in ("compile", "register"):
            if door in self.graphs and self.graphs[door] + self.recompiles[door] == 0:
                out.append(f"{door}: no graph over {CALLS} calls where torch.compile has {tc_total}")
            if door in self.graphs and self.graphs[door] + self.recompiles[door] > tc_total:
                out.append(f"{door}: {self.graphs[door] + self.recompiles[door]} graphs over {CALLS} calls > "
                           f"torch.compile's {tc_total}")
        return out


def check_program(program: Program, doors: tuple[str, ...] = ("compile", "register", "torch")) -> Report:
    """Run the program eagerly and through each door; the verdict."""
    report = Report(program.name)
    expected, _ = run_door(program, "eager", None)
    problems = []
    for door in doors:
        backend = _Counting()
        try:
            outcomes, graphs = run_door(program, door, backend)
        except Exception as exc:  # noqa: BLE001 - a failure of the door itself
            problems.append(f"{door}: {type(exc).__name__}: {exc}".splitlines()[0])
            if os.environ.get("CONSTRUCT_DIFF_TRACEBACK"):
                traceback.print_exc()
            continue
        report.graphs[door] = graphs[0]
        report.recompiles[door] = graphs[-1] - graphs[0]
        found = compare(expected, outcomes)
        if door == "torch":
            report.torch_wrong = found or ""
        elif found is not None:
            problems.append(f"{door}: {found}")
    report.problem = "; ".join(problems)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="*", help="comma-separated fnmatch patterns of program names")
    parser.add_argument("--all", action="store_true", help="print every program, not only the losers")
    parser.add_argument("--record", action="store_true", help="print torch.compile's counts as the corpus writes them")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    logging.getLogger("torch").setLevel(logging.ERROR)  # torch.compile's break advice would drown the table
    warnings.filterwarnings("ignore", module="torch")
    patterns = args.only.split(",")
    chosen = [p for p in PROGRAMS if any(fnmatch.fnmatch(p.name, pattern) for pattern in patterns)]
    counts = {"programs": 0, "wrong or error": 0, "more graphs": 0, "more recompiles": 0,
              "differs from recorded torch.compile": 0}
    print(f"{'program':<34} {'graphs j/r/tc':<14} {'recomp j/r/tc':<14} problem")
    for program in chosen:
        report = check_program(program)
        counts["programs"] += 1
        losses = report.losses()
        if report.problem:
            counts["wrong or error"] += 1
        if any(" graphs >" in loss or "no graph" in loss for loss in losses):
            counts["more graphs"] += 1
        if any("calls >" in loss for loss in losses):
            counts["more recompiles"] += 1
        measured = None if report.torch_wrong else (report.graphs.get("torch"), report.recompiles.get("torch"))
        if measured != program.torch_counts:
            counts["differs from recorded torch.compile"] += 1
        if args.record:
            wrong = f"  # differs from eager: {report.torch_wrong}" if report.torch_wrong else ""
            print(f"    {program.name}: torch={measured}{wrong}")
            continue
        if losses or args.all:
            g = "/".join(str(report.graphs.get(d, "-")) for d in ("compile", "register", "torch"))
            r = "/".join(str(report.recompiles.get(d, "-")) for d in ("compile", "register", "torch"))
            note = f" (torch.compile differs from eager: {report.torch_wrong})" if report.torch_wrong else ""
            print(f"{program.name:<34} {g:<14} {r:<14} {'; '.join(losses) or 'ok'}{note}"[:400])
    print()
    print(", ".join(f"{key}: {value}" for key, value in counts.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
