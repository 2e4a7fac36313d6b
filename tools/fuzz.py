"""Fuzzing campaign: random programs (tools/fuzz_features.py over tools/progen.py) compiled by jitcore vs eager.

Each program is loaded twice (an eager namespace and a compiled one, so globals, classes and modules never mix) and
called several times, with other batch sizes and ints in between (recompiles). Every call must agree with eager on
the result, the exception (type and message), printed output, inputs afterwards (lists, dicts, objects, modules),
the module's globals, and which outputs are which inputs. A failure is reported with its seed and, with
--minimize, a minimised reproducer in fuzz_failures/seed_N.py. The state file makes a campaign resumable.
Entry points: `main` (CLI: --help), `check_seed`, `run_program`, `minimize`, `replay`.
"""
from __future__ import annotations

import argparse
import ast
import dataclasses
import io
import json
import math
import multiprocessing
import os
import re
import signal
import sys
import time
import traceback
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import jitcore as jit  # noqa: E402
from jitcore.report.console import recording  # noqa: E402
from tests.support import assert_same  # noqa: E402
from tools import fuzz_features, progen  # noqa: E402
from tools.fuzz_features import ALL_FEATURES, CallSpec, FuzzProgram, generate_fuzz_program, is_intended  # noqa: E402

__all__ = ["Outcome", "check_seed", "main", "minimize", "replay", "run_program", "valid_calls"]

#: programs tried per seed before the seed counts as a generator failure (each invalid one is regenerated)
MAX_ATTEMPTS = 5
#: recompile variants kept per program (of the candidates `FuzzProgram.calls` offers)
MAX_VARIANTS = 3
#: tolerance for numbers in printed text and Python floats: values computed in float32, like assert_close's
FLOAT_RTOL, FLOAT_ATOL = 1.3e-6, 1e-5
TEXT_RTOL, TEXT_ATOL = 1e-4, 2e-4


class FuzzTimeout(BaseException):
    """A program ran past --timeout; a BaseException, so jitcore's fault containment cannot swallow it."""


# Observing a call


class _Text(str):
    """Printed output: equal when the text is equal except for numbers within printing precision (4 decimals)."""
    _NUMBER = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?")

    def __eq__(self, other):
        if str.__eq__(self, other):
            return True
        if not isinstance(other, str) or self._NUMBER.sub("#", self) != self._NUMBER.sub("#", other):
            return False
        return all(math.isclose(float(a), float(b), rel_tol=TEXT_RTOL, abs_tol=TEXT_ATOL)
                   for a, b in zip(self._NUMBER.findall(self), self._NUMBER.findall(other)))

    __hash__ = str.__hash__


class _Close(float):
    """A Python float read from a float32 tensor: equal within assert_close's float32 tolerance."""

    def __eq__(self, other):
        return isinstance(other, float) and math.isclose(self, other, rel_tol=FLOAT_RTOL, abs_tol=FLOAT_ATOL)

    __hash__ = float.__hash__


def _own_class(value, program: FuzzProgram) -> bool:
    return type(value).__module__ == program.name


def _plain(value, program: FuzzProgram, seen: set | None = None):
    """`value` as assert_same compares it: printed text, floats, modules and the program's objects made plain."""
    seen = set() if seen is None else seen
    if isinstance(value, torch.Tensor):
        return value
    if id(value) in seen:
        return "<cycle>"
    if isinstance(value, (list, tuple, dict, torch.nn.Module)) or _own_class(value, program):
        seen = seen | {id(value)}
    if type(value) in (list, tuple):
        return type(value)(_plain(v, program, seen) for v in value)
    if type(value) is dict:
        return {k: _plain(v, program, seen) for k, v in value.items()}
    if isinstance(value, io.StringIO):
        return _Text(value.getvalue())
    if type(value) is float:
        return _Close(value)
    if isinstance(value, torch.nn.Module):
        attrs = {k: _plain(v, program, seen) for k, v in vars(value).items() if not k.startswith("_")}
        return {"class": type(value).__qualname__, "attributes": attrs,
                "parameters": dict(value.named_parameters()), "buffers": dict(value.named_buffers())}
    if isinstance(value, BaseException):
        return {"exception": f"{type(value).__module__}.{type(value).__qualname__}", "message": str(value)}
    if _own_class(value, program):
        return {"class": type(value).__qualname__, **{k: _plain(v, program, seen) for k, v in vars(value).items()}}
    return value


def _identities(value, program: FuzzProgram, out: list, seen: set) -> list:
    """Objects whose identity a caller can observe (tensors, lists, dicts, objects, modules), in a fixed order."""
    if id(value) in seen:
        out.append(value)
        return out
    if isinstance(value, (torch.Tensor, list, dict, io.StringIO, torch.nn.Module)) or _own_class(value, program):
        seen.add(id(value))
        out.append(value)
    if isinstance(value, (list, tuple)) and not isinstance(value, torch.Size):
        for item in value:
            _identities(item, program, out, seen)
    elif isinstance(value, dict):
        for item in value.values():
            _identities(item, program, out, seen)
    elif isinstance(value, torch.nn.Module):
        for item in [*value.parameters(), *value.buffers()]:
            _identities(item, program, out, seen)
    elif _own_class(value, program):
        for item in vars(value).values():
            _identities(item, program, out, seen)
    return out


def _pattern(before: list, after: list) -> list:
    """For each object of `after`: ('in', i) if it is before[i], ('out', j) if after[j] for an earlier j, or 'new'."""
    known = {id(v): i for i, v in enumerate(before)}
    seen: dict = {}
    pattern = []
    for index, v in enumerate(after):
        pattern.append(("in", known[id(v)]) if id(v) in known else ("out", seen[id(v)]) if id(v) in seen else "new")
        seen.setdefault(id(v), index)
    return pattern


@dataclasses.dataclass
class _Observation:
    result: object
    error: BaseException | None
    args: dict
    state: dict
    before: list    # identity objects reachable from the inputs and state before the call (kept alive)
    after: list


def _state(program: FuzzProgram, namespace: dict) -> dict:
    """The module-level values calls change (a minimised program may have lost some)."""
    return {name: namespace.get(name, "<undefined>") for name in program.state}


def _observe(fn, program: FuzzProgram, namespace: dict, call: CallSpec) -> _Observation:
    args = program.make_inputs(namespace, call)
    names = [p.name for p in program.params if p.passed]
    state = _state(program, namespace)
    before = _identities((args, list(state.values())), program, [], set())
    result, error = None, None
    try:
        result = fn(*args)
    except Exception as exc:  # noqa: BLE001 - compared with the other side
        error = exc
    state = _state(program, namespace)
    after = _identities((result, args, list(state.values())), program, [], set())
    return _Observation(result, error, dict(zip(names, args)), state, before, after)


def _finite(value) -> bool:
    if isinstance(value, torch.Tensor):
        return not value.is_floating_point() or bool(torch.isfinite(value.detach()).all())
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, (list, tuple)):
        return all(_finite(v) for v in value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    return True


def _valid(obs: _Observation) -> str | None:
    """Why an eager call shows a generator bug (an unintended exception, a non-finite value); None if valid."""
    if obs.error is not None:
        return None if is_intended(obs.error) else f"eager raised {type(obs.error).__name__}: {obs.error}"
    if not _finite((obs.result, list(obs.args.values()), list(obs.state.values()))):
        return "eager produced a non-finite value"
    return None


def _describe_error(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)[-3:]
    where = "; ".join(f"{Path(fr.filename).name}:{fr.lineno} in {fr.name}" for fr in frames)
    return f"{type(exc).__name__}: {exc}" + (f" (at {where})" if where else "")


def _compare(program: FuzzProgram, eager: _Observation, compiled: _Observation) -> str | None:
    """How the compiled call differs from the eager one, or None."""
    if eager.error is None and compiled.error is not None:
        return f"compiled raised {_describe_error(compiled.error)}; eager returned normally"
    if eager.error is not None and compiled.error is None:
        return f"eager raised {type(eager.error).__name__}: {eager.error}; compiled returned normally"
    try:
        if eager.error is not None:
            assert_same(_plain(eager.error, program), _plain(compiled.error, program), "exception")
        else:
            assert_same(_plain(eager.result, program), _plain(compiled.result, program), "result")
        assert_same(_plain(eager.args, program), _plain(compiled.args, program), "inputs after the call")
        assert_same(_plain(eager.state, program), _plain(compiled.state, program), "globals after the call")
    except AssertionError as exc:
        return str(exc)
    expected, actual = _pattern(eager.before, eager.after), _pattern(compiled.before, compiled.after)
    if expected != actual:
        return (f"object identity differs (which results and stored values are which inputs): eager {expected}, "
                f"compiled {actual}")
    return None


# Running a program


@dataclasses.dataclass
class Outcome:
    """What one program did. kind: 'ok', 'mismatch' (compiled differs from eager), 'jitcore-error' (jitcore hit an
    internal error and fell back to Python: results agreed), 'timeout' or 'invalid' (no valid program for the seed)."""
    seed: int
    kind: str = "ok"
    call: int | None = None
    message: str = ""
    attempt: int = 0
    calls: int = 0
    variants: int = 0
    exceptions: int = 0
    graphs: int = 0
    breaks: int = 0
    recompiles: int = 0
    features: tuple = ()
    reproducer: str | None = None
    seconds: float = 0.0


class _CountingBackend:
    def __init__(self, name: str):
        from backends import lookup
        self.inner, self.graphs = lookup(name), 0

    def __call__(self, gm, example_inputs):
        self.graphs += 1
        return self.inner(gm, example_inputs)


def _eager_errors(program: FuzzProgram, calls: list) -> str | None:
    """Run `calls` eagerly in a fresh namespace: the first generator bug they show, or None."""
    try:
        namespace = program.load()
    except Exception as exc:  # noqa: BLE001 - a program that does not load is invalid
        return f"loading raised {type(exc).__name__}: {exc}"
    for index, call in enumerate(calls):
        try:
            why = _valid(_observe(namespace["f"], program, namespace, call))
        except Exception as exc:  # noqa: BLE001 - the inputs could not be made (a minimised program lost a class)
            why = f"making the inputs raised {type(exc).__name__}: {exc}"
        if why is not None:
            return f"call {index + 1} ({call.describe()}): {why}"
    return None


def valid_calls(program: FuzzProgram, seed: int) -> list | None:
    """The calls to compare: the base calls and the first MAX_VARIANTS candidates under which eager runs without a
    generator bug; None if the base calls themselves show one (the program must be regenerated)."""
    candidates = program.calls(seed)
    if len(candidates) == 2:
        return candidates if _eager_errors(program, candidates) is None else None
    base, variants, last = candidates[:2], candidates[2:-1], candidates[-1:]
    if _eager_errors(program, base + last) is not None:
        return None
    kept: list = []
    for variant in variants:
        if len(kept) < MAX_VARIANTS and _eager_errors(program, base + kept + [variant] + last) is None:
            kept.append(variant)
    return base + kept + last


def run_program(program: FuzzProgram, calls: list, backend: str = "eager") -> Outcome:
    """Compile `f` once and compare every call with eager; stops at the first difference."""
    outcome = Outcome(program.seed, attempt=program.attempt, calls=len(calls))
    eager_ns, compiled_ns = program.load(), program.load()
    counting = _CountingBackend(backend)
    compiled = jit.compile(compiled_ns["f"], backend=counting)
    try:
        with recording() as events:
            for index, call in enumerate(calls):
                eager = _observe(eager_ns["f"], program, eager_ns, call)
                actual = _observe(compiled, program, compiled_ns, call)
                outcome.exceptions += eager.error is not None
                difference = _compare(program, eager, actual)
                if difference is not None:
                    outcome.kind, outcome.call = "mismatch", index
                    outcome.message = f"call {index + 1} of {len(calls)} ({call.describe()}): {difference}"
                    break
    finally:
        jit.reset()
    outcome.graphs = counting.graphs
    outcome.breaks = sum(1 for e in events if e.topic == "breaks")
    outcome.recompiles = sum(1 for e in events if e.topic == "recompiles")
    fallbacks = [e for e in events if e.topic == "fallbacks"]
    if fallbacks and outcome.kind == "ok":
        outcome.kind, outcome.message = "jitcore-error", fallbacks[0].message
    return outcome


def _signature(outcome: Outcome) -> tuple:
    """What makes two failures the same for minimisation: the kind and the part that differs."""
    if outcome.kind != "mismatch":
        return (outcome.kind,)
    text = outcome.message.split("): ", 1)[-1]
    match = re.match(r"(compiled raised \w+|eager raised \w+|\w+(?: after the call)?|object identity)", text)
    return (outcome.kind, match.group(1) if match else text[:40])


# Minimising


def _statement_lists(tree: ast.AST) -> list:
    """Every list of statements in the tree (bodies, else and finally blocks), outer ones first."""
    lists = []
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            items = getattr(node, field, None)
            if isinstance(items, list) and items and isinstance(items[0], ast.stmt):
                lists.append(items)
    return lists


class _Shrinker:
    """Delta debugging over a module's AST, in place: `test(source)` says whether a candidate keeps the failure."""

    def __init__(self, tree: ast.Module, header: str, test, deadline: float):
        self.tree, self.header, self.test, self.deadline = tree, header, test, deadline
        self.source = self.render()

    def render(self) -> str:
        return f"{self.header}\n{ast.unparse(ast.fix_missing_locations(self.tree))}\n"

    def attempt(self, items: list, replacement: list, start: int, stop: int) -> bool:
        """Replace items[start:stop] by `replacement`; keep it if the failure stays, else undo."""
        saved = list(items)
        items[start:stop] = replacement
        if not items:
            items.append(ast.Pass())
        source = self.render()
        if source != self.source and time.monotonic() < self.deadline and self.test(source):
            self.source = source
            return True
        items[:] = saved
        return False

    def drop_pass(self) -> bool:
        """Drop chunks of each statement list: halves, then quarters, ... then statements one at a time."""
        progress = False
        for items in _statement_lists(self.tree):
            chunk = max(len(items) // 2, 1)
            while chunk >= 1 and time.monotonic() < self.deadline:
                start = 0
                while start < len(items) and time.monotonic() < self.deadline:
                    if self.attempt(items, [], start, start + chunk):
                        progress = True
                    else:
                        start += chunk
                chunk //= 2
        return progress

    def unwrap_pass(self) -> bool:
        """Replace each if / with / try statement by one of its blocks."""
        progress = False
        for items in _statement_lists(self.tree):
            index = 0
            while index < len(items) and time.monotonic() < self.deadline:
                node = items[index]
                parts = [getattr(node, part) for part in ("body", "orelse", "finalbody")
                         if isinstance(node, (ast.If, ast.With, ast.Try)) and getattr(node, part, None)]
                if not any(self.attempt(items, part, index, index + 1) for part in parts):
                    index += 1
                else:
                    progress = True
        return progress


def minimize(program: FuzzProgram, calls: list, outcome: Outcome, backend: str = "eager",
             budget_s: float = 300.0) -> tuple[FuzzProgram, list, Outcome]:
    """Delta debugging: drop calls, then statements (chunks, then one at a time), then unwrap blocks, while eager
    stays valid and the failure keeps its signature; stops after `budget_s` seconds. Returns the smaller program,
    its calls and its outcome."""
    deadline = time.monotonic() + budget_s
    target = _signature(outcome)
    found = {}

    def still_fails(source: str, trial_calls: list) -> bool:
        candidate = dataclasses.replace(program, source=source)
        if _eager_errors(candidate, trial_calls) is not None:
            return False
        result = run_program(candidate, trial_calls, backend)
        if _signature(result) != target:
            return False
        found["outcome"] = result
        return True

    if outcome.call is not None:
        calls = calls[:outcome.call + 1]
    index = 0
    while index < len(calls) - 1 and time.monotonic() < deadline:
        if still_fails(program.source, calls[:index] + calls[index + 1:]):
            calls = calls[:index] + calls[index + 1:]
        else:
            index += 1
    shrinker = _Shrinker(ast.parse(program.source), program.source.splitlines()[0],
                         lambda source: still_fails(source, calls), deadline)
    while time.monotonic() < deadline and (shrinker.drop_pass() | shrinker.unwrap_pass()):
        pass
    return dataclasses.replace(program, source=shrinker.source), calls, found.get("outcome", outcome)


_REPRODUCER = '''"""jitcore fuzz reproducer: seed {seed} (attempt {attempt}), backend {backend!r}; features: {features}.

{kind} at {message}

Minimised from {before} to {after} lines. Rerun (exits 1 while the failure persists):
    .venv/bin/python {path}
"""
SOURCE = {source}

# f's parameters (tools/progen.py and tools/fuzz_features.py types), and the calls: (inputs seed, batch, ints)
PARAMS = """{params}"""

CALLS = {calls!r}

STATE = {state!r}

if __name__ == "__main__":
    import pathlib
    import sys
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
    from tools.fuzz import replay
    sys.exit(replay(SOURCE, PARAMS, CALLS, STATE, backend={backend!r}, seed={seed}))
'''


def _quote(source: str) -> str:
    return f"r'''\n{source}'''" if "'''" not in source and not source.endswith("\\") else repr(source)


def write_reproducer(directory: Path, original: FuzzProgram, program: FuzzProgram, calls: list, outcome: Outcome,
                     backend: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"seed_{program.seed}.py"
    params = "[\n" + "".join(f"    {p!r},\n" for p in program.params) + "]"
    path.write_text(_REPRODUCER.format(
        seed=program.seed, attempt=program.attempt, backend=backend, features=", ".join(sorted(program.features)),
        kind=outcome.kind, message=outcome.message, before=len(original.source.splitlines()),
        after=len(program.source.splitlines()), path=path, source=_quote(program.source), params=params,
        calls=[dataclasses.astuple(c) for c in calls], state=program.state))
    return path


def _eval_params(params):
    if not isinstance(params, str):
        return tuple(params)
    namespace = {**vars(progen), **vars(fuzz_features)}
    return tuple(eval(params, namespace))  # noqa: S307 - a reproducer this tool wrote


def replay(source: str, params, calls: list, state: tuple, *, backend: str = "eager", seed: int = 0) -> int:
    """Run a reproducer's program: print what differs; 1 while the failure persists, else 0."""
    program = FuzzProgram(seed, 0, f"fuzz_{seed}", source, _eval_params(params), ALL_FEATURES, tuple(state))
    calls = [c if isinstance(c, CallSpec) else CallSpec(*c) for c in calls]
    invalid = _eager_errors(program, calls)
    if invalid is not None:
        print(f"the program is not valid for eager any more: {invalid}")
        return 2
    outcome = run_program(program, calls, backend)
    print(f"seed {seed}: {outcome.kind}" + (f": {outcome.message}" if outcome.message else ""))
    return 0 if outcome.kind == "ok" else 1


# One seed


def _alarm(signum, frame):
    raise FuzzTimeout()


def check_seed(seed: int, features: frozenset = ALL_FEATURES, backend: str = "eager", *, minimize_to: Path | None
               = None, timeout_s: int = 120, minimize_budget_s: float = 300.0) -> Outcome:
    """Generate the program of `seed` (regenerating while eager shows a generator bug), compare it, and minimise a
    failure into `minimize_to/seed_N.py` when that is given."""
    started = time.perf_counter()
    timer = hasattr(signal, "SIGALRM") and timeout_s > 0
    if timer:
        signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(timeout_s)
    outcome = Outcome(seed, kind="invalid", message=f"no valid program in {MAX_ATTEMPTS} attempts")
    try:
        for attempt in range(MAX_ATTEMPTS):
            program = generate_fuzz_program(seed, features=features, attempt=attempt)
            calls = valid_calls(program, seed)
            if calls is not None:
                outcome = run_program(program, calls, backend)
                outcome.variants = max(len(calls) - 3, 0)
                outcome.features = tuple(sorted(program.used_features()))
                break
        if minimize_to is not None and outcome.kind in ("mismatch", "jitcore-error"):
            if timer:
                signal.alarm(int(minimize_budget_s) + timeout_s)
            small, small_calls, small_outcome = minimize(program, calls, outcome, backend, minimize_budget_s)
            path = write_reproducer(minimize_to, program, small, small_calls, small_outcome, backend)
            outcome.reproducer = str(path)
    except FuzzTimeout:
        jit.reset()
        outcome = Outcome(seed, kind="timeout", message=f"ran past {timeout_s} s")
    finally:
        if timer:
            signal.alarm(0)
    outcome.seconds = time.perf_counter() - started
    return outcome


# The campaign


def _state_config(args) -> dict:
    return {"seed": args.seed, "count": args.count, "features": sorted(args.feature_set), "backend": args.backend}


def _new_state(config: dict) -> dict:
    return {"version": 1, "config": config, "next_seed": config["seed"], "programs": 0, "elapsed_s": 0.0,
            "counts": {"mismatch": 0, "jitcore-error": 0, "timeout": 0, "invalid": 0}, "regenerated": 0,
            "calls": 0, "variant_calls": 0, "exceptions_compared": 0, "graphs": 0, "with_breaks": 0,
            "with_recompiles": 0, "features": {}, "failures": []}


def _load_state(path: Path, config: dict, restart: bool) -> dict:
    if path.exists() and not restart:
        state = json.loads(path.read_text())
        if state.get("config") != config:
            raise SystemExit(f"fuzz: {path} holds a campaign with other settings ({state.get('config')}); "
                             f"use another --state file, or --restart to start this one over")
        return state
    return _new_state(config)


def _save_state(path: Path, state: dict) -> None:
    """Written to a temporary file, then renamed: an interrupted write never leaves half a state file."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(state, indent=1) + "\n")
    os.replace(temporary, path)


def _add(state: dict, outcome: Outcome) -> None:
    state["programs"] += 1
    state["next_seed"] = outcome.seed + 1
    if outcome.kind in state["counts"]:
        state["counts"][outcome.kind] += 1
    state["regenerated"] += outcome.attempt
    state["calls"] += outcome.calls
    state["variant_calls"] += outcome.variants
    state["exceptions_compared"] += outcome.exceptions
    state["graphs"] += outcome.graphs
    state["with_breaks"] += outcome.breaks > 0
    state["with_recompiles"] += outcome.recompiles > 0
    for feature in outcome.features:
        state["features"][feature] = state["features"].get(feature, 0) + 1
    if outcome.kind != "ok":
        state["failures"].append({"seed": outcome.seed, "kind": outcome.kind, "message": outcome.message[:2000],
                                  "reproducer": outcome.reproducer})


def _summary(state: dict, elapsed: float) -> str:
    n, counts = state["programs"], state["counts"]
    lines = [f"fuzz: {n} programs (seeds {state['config']['seed']}..{state['next_seed'] - 1}), "
             f"{counts['mismatch']} mismatches, {counts['jitcore-error']} jitcore errors, {counts['timeout']} "
             f"timeouts, {counts['invalid']} seeds without a valid program; {elapsed:.0f} s "
             f"({n / max(elapsed, 1e-9):.1f} programs/s)",
             f"  {state['calls']} calls ({state['variant_calls']} with other shapes or ints, "
             f"{state['exceptions_compared']} raising), {state['graphs']} graphs; {state['with_breaks']} programs "
             f"with graph breaks, {state['with_recompiles']} with recompiles; {state['regenerated']} regenerated",
             "  programs per feature: " + ", ".join(f"{k} {v}" for k, v in sorted(state["features"].items()))]
    for failure in state["failures"]:
        where = f" -> {failure['reproducer']}" if failure.get("reproducer") else ""
        lines.append(f"  seed {failure['seed']}: {failure['kind']}: {failure['message'].splitlines()[0][:300]}{where}")
    return "\n".join(lines)


def _worker_init() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent saves the state and stops the pool
    torch.set_num_threads(1)


def _work(job: tuple) -> Outcome:
    seed, features, backend, directory, timeout_s = job
    return check_seed(seed, features, backend, minimize_to=directory, timeout_s=timeout_s)


def run_campaign(seeds: range, features: frozenset = ALL_FEATURES, backend: str = "eager", *, jobs: int = 1,
                 minimize_to: Path | None = None, timeout_s: int = 120, on_outcome=None):
    """Yield the Outcome of each seed, in seed order; `jobs` > 1 runs them in worker processes."""
    work = [(seed, features, backend, minimize_to, timeout_s) for seed in seeds]
    if jobs <= 1:
        for job in work:
            yield _work(job)
        return
    context = multiprocessing.get_context("spawn")
    with context.Pool(jobs, initializer=_worker_init, maxtasksperchild=400) as pool:
        try:
            yield from pool.imap(_work, work, chunksize=1)
        finally:
            pool.terminate()


def _parse_features(text: str) -> frozenset:
    if text == "all":
        return ALL_FEATURES
    if text == "fuzz":
        return fuzz_features.FUZZ_FEATURES | {"tensor_ops", "python_arith"}
    features = frozenset(name.strip() for name in text.split(",") if name.strip())
    unknown = sorted(features - ALL_FEATURES)
    if unknown:
        raise SystemExit(f"fuzz: unknown feature(s) {unknown}; known: all, fuzz, {', '.join(sorted(ALL_FEATURES))}")
    return features


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1000, help="programs in the campaign (seeds seed..seed+count-1)")
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--features", default="all", help="'all', 'fuzz' (the new features only) or a comma list")
    parser.add_argument("--backend", default="eager", help="jitcore backend: eager (default) or aot_eager")
    parser.add_argument("--state", default="fuzz_state.json", help="state file: progress and failures (resumable)")
    parser.add_argument("--restart", action="store_true", help="ignore an existing state file")
    parser.add_argument("--minimize", action="store_true", help="write a minimised reproducer per failure")
    parser.add_argument("--failures-dir", default="fuzz_failures", help="where reproducers go")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--timeout", type=int, default=120, help="seconds per program before it counts as a timeout")
    args = parser.parse_args(argv)
    args.feature_set = _parse_features(args.features)
    path = Path(args.state)
    state = _load_state(path, _state_config(args), args.restart)
    seeds = range(state["next_seed"], args.seed + args.count)
    directory = Path(args.failures_dir) if args.minimize else None
    started, before = time.monotonic(), state["elapsed_s"]
    last_report = started
    print(f"fuzz: seeds {seeds.start}..{seeds.stop - 1} ({len(seeds)} to go), backend {args.backend}, "
          f"{args.jobs} job(s), state {path}", flush=True)
    interrupted = False
    try:
        for outcome in run_campaign(seeds, args.feature_set, args.backend, jobs=args.jobs, minimize_to=directory,
                                    timeout_s=args.timeout):
            _add(state, outcome)
            state["elapsed_s"] = before + time.monotonic() - started
            _save_state(path, state)
            if outcome.kind != "ok":
                where = f"; reproducer {outcome.reproducer}" if outcome.reproducer else ""
                print(f"seed {outcome.seed}: {outcome.kind.upper()}: {outcome.message}{where}", flush=True)
            if time.monotonic() - last_report > 30:
                last_report = time.monotonic()
                done = state["programs"]
                print(f"fuzz: {done}/{args.count} programs, {state['counts']['mismatch']} mismatches, "
                      f"{state['counts']['jitcore-error']} jitcore errors, {state['elapsed_s']:.0f} s", flush=True)
    except KeyboardInterrupt:
        interrupted = True
        print(f"\nfuzz: interrupted; state saved in {path}, rerun the same command to resume", flush=True)
    _save_state(path, state)
    print(_summary(state, state["elapsed_s"]), flush=True)
    if interrupted:
        return 130
    return 1 if state["counts"]["mismatch"] or state["counts"]["jitcore-error"] else 0


if __name__ == "__main__":
    sys.exit(main())
