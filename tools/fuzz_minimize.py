"""Minimising a fuzz failure (delta debugging over the program's AST) and writing / replaying its reproducer.

`minimize` drops calls, then statements (chunks, then one at a time), then unwraps blocks, keeping each change
only while eager stays valid and the failure keeps its signature. `write_reproducer` writes fuzz_failures/seed_N.py,
a script that reruns the failure through `replay`. Entry points: `minimize`, `write_reproducer`, `replay`.
"""
from __future__ import annotations

import ast
import dataclasses
import os
import subprocess
import sys
import time
from pathlib import Path

from tools import fuzz_features, fuzz_soundness, progen
from tools.fuzz_features import ALL_FEATURES
from tools.fuzz_oracle import Outcome, eager_errors, signature, timed_run
from tools.fuzz_programs import CallSpec, FuzzProgram

__all__ = ["minimize", "replay", "write_reproducer"]

#: the repository root: what a reproducer run in a scratch directory needs on sys.path
ROOT = Path(__file__).resolve().parents[1]


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


def _in_process(program: FuzzProgram, backend, trial_s: int):
    """A trial runner: the candidate's outcome, run here (None where eager shows the candidate invalid)."""
    def run(source: str, calls: list) -> Outcome | None:
        candidate = dataclasses.replace(program, source=source)
        if eager_errors(candidate, calls) is not None:
            return None
        return timed_run(candidate, calls, backend, trial_s)
    return run


def _in_subprocess(program: FuzzProgram, backend: str, trial_s: int, directory: Path):
    """A trial runner that runs each candidate's reproducer in a fresh interpreter: for failures that only show on
    their first occurrence in a process (torch and jitcore keep process-wide state). Slower: seconds per trial."""
    def run(source: str, calls: list) -> Outcome | None:
        candidate = dataclasses.replace(program, source=source)
        path = write_reproducer(directory, program, candidate, calls, Outcome(program.seed), backend, name="trial")
        try:
            done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=trial_s + 60,
                                  env={**os.environ, "PYTHONPATH": str(ROOT)})
        except subprocess.TimeoutExpired:
            return Outcome(program.seed, kind="timeout", message="stopped at a subprocess trial")
        line = next((x for x in done.stdout.splitlines() if x.startswith(f"seed {program.seed}: ")), "")
        kind, _, message = line.partition(": ")[2].partition(": ")
        return Outcome(program.seed, kind=kind, message=message) if done.returncode in (0, 1) and kind else None
    return run


def minimize(program: FuzzProgram, calls: list, outcome: Outcome, backend="eager", budget_s: float = 300.0,
             trial_s: int = 120, scratch: Path | None = None) -> tuple[FuzzProgram, list, Outcome]:
    """Delta debugging: drop calls, then statements (chunks, then one at a time), then unwrap blocks, while eager
    stays valid and the failure keeps its signature; stops after `budget_s` seconds. Returns the smaller program,
    its calls and its outcome. Where the failure does not show again in this process, each trial runs in a fresh
    one (a named backend and a `scratch` directory needed)."""
    deadline = time.monotonic() + budget_s
    target = signature(outcome)
    found = {}
    run = _in_process(program, backend, trial_s)
    if signature(run(program.source, calls) or Outcome(program.seed)) != target and isinstance(backend, str) \
            and scratch is not None:
        run = _in_subprocess(program, backend, trial_s, scratch)

    def still_fails(source: str, trial_calls: list) -> bool:
        result = run(source, trial_calls)
        if result is None or signature(result) != target:
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

{kind}: {message}

Minimised from {before} to {after} lines. Rerun (exits 1 while the failure persists):
    .venv/bin/python {path}
"""
SOURCE = {source}

# f's parameters (types of tools/progen.py, fuzz_features.py, fuzz_soundness.py), and the calls: (inputs seed,
# batch, ints, phase)
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
                     backend, name: str | None = None) -> Path:
    """Write directory/seed_N.py (or name.py): `program` with its calls, runnable on its own through `replay`."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name or f'seed_{program.seed}'}.py"
    backend = backend if isinstance(backend, str) else getattr(backend, "__name__", repr(backend))
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
    namespace = {**vars(progen), **vars(fuzz_features), **vars(fuzz_soundness)}
    return tuple(eval(params, namespace))  # noqa: S307 - a reproducer this tool wrote


def replay(source: str, params, calls: list, state: tuple, *, backend: str = "eager", seed: int = 0) -> int:
    """Run a reproducer's program: print what differs; 1 while the failure persists, else 0."""
    program = FuzzProgram(seed, 0, f"fuzz_{seed}", source, _eval_params(params), ALL_FEATURES, tuple(state))
    calls = [c if isinstance(c, CallSpec) else CallSpec(*c) for c in calls]
    invalid = eager_errors(program, calls)
    if invalid is not None:
        print(f"the program is not valid for eager any more: {invalid}")
        return 2
    outcome = timed_run(program, calls, backend, 60)
    print(f"seed {seed}: {outcome.kind}" + (f": {outcome.message}" if outcome.message else ""))
    return 0 if outcome.kind == "ok" else 1

