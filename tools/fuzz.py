"""Fuzzing campaign: `python tools/fuzz.py --count 10000 --seed 0 --state fuzz_state.json [--minimize] [--jobs N]`.

Runs the programs of seeds seed..seed+count-1 (tools/fuzz_programs.py) through jitcore and eager and compares every
call (tools/fuzz_oracle.py); a program that shows a generator bug in eager is regenerated. The state file records
the next seed and the failures so far, after every program, so an interrupted campaign resumes where it stopped.
With --minimize each kind of failure gets minimised reproducers in fuzz_failures/seed_N.py (tools/fuzz_minimize.py).
Entry points: `main` (CLI: --help), `check_seed`, `run_campaign`, `replay` (what reproducers call).
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import jitcore as jit  # noqa: E402
from tools import fuzz_features  # noqa: E402
from tools.fuzz_features import ALL_FEATURES  # noqa: E402
from tools.fuzz_minimize import minimize, replay, write_reproducer  # noqa: E402
from tools.fuzz_oracle import MAX_VARIANTS, Outcome, signature, timed_run, valid_calls  # noqa: E402
from tools.fuzz_programs import FuzzProgram, generate_fuzz_program  # noqa: E402

__all__ = ["MAX_ATTEMPTS", "Outcome", "check_seed", "main", "minimize_failure", "replay", "run_campaign"]

#: programs tried per seed before the seed counts as a generator failure (each invalid one is regenerated)
MAX_ATTEMPTS = 5


# One seed


def _program_of(outcome: Outcome, features: frozenset, variants: int = MAX_VARIANTS) -> tuple[FuzzProgram, list]:
    program = generate_fuzz_program(outcome.seed, features=features, attempt=outcome.attempt)
    return program, valid_calls(program, outcome.seed, variants)


def check_seed(seed: int, features: frozenset = ALL_FEATURES, backend="eager", *, minimize_to: Path | None = None,
               timeout_s: int = 60, minimize_budget_s: float = 300.0, variants: int = MAX_VARIANTS) -> Outcome:
    """Generate the program of `seed` (regenerating while eager shows a generator bug) and compare it; with
    `minimize_to`, also minimise a failure into `minimize_to/seed_N.py`. `variants`: calls with other shapes and
    ints kept per program (besides the base calls). Never raises (a campaign goes on)."""
    started = time.perf_counter()
    outcome = Outcome(seed, kind="invalid", message=f"no valid program in {MAX_ATTEMPTS} attempts")
    try:
        for attempt in range(MAX_ATTEMPTS):
            program = generate_fuzz_program(seed, features=features, attempt=attempt)
            calls = valid_calls(program, seed, variants)
            if calls is not None:
                outcome = timed_run(program, calls, backend, timeout_s)
                outcome.variants = max(len(calls) - 3, 0)
                outcome.features = tuple(sorted(program.used_features()))
                break
        if minimize_to is not None:
            minimize_failure(outcome, features, backend, minimize_to, timeout_s, minimize_budget_s, variants)
    except Exception:  # noqa: BLE001 - reported with its traceback; the campaign goes on
        outcome = Outcome(seed, kind="harness-error", message=traceback.format_exc(limit=-4))
    outcome.seconds = time.perf_counter() - started
    return outcome


def minimize_failure(outcome: Outcome, features: frozenset, backend: str, directory: Path, timeout_s: int = 60,
                     budget_s: float = 300.0, variants: int = MAX_VARIANTS) -> None:
    """Minimise a failed outcome's program (made again from its seed) into directory/seed_N.py; sets
    `outcome.reproducer`. Hangs are minimised with short trials: a trial that still hangs costs its timeout."""
    if outcome.kind not in ("mismatch", "jitcore-error", "timeout"):
        return
    program, calls = _program_of(outcome, features, variants)
    trial_s = min(timeout_s, 8) if outcome.kind == "timeout" else timeout_s
    with tempfile.TemporaryDirectory(prefix="fuzz_trials_") as scratch:
        small, small_calls, small_outcome = minimize(program, calls, outcome, backend, budget_s, trial_s, Path(scratch))
    outcome.reproducer = str(write_reproducer(directory, program, small, small_calls, small_outcome, backend))


# The campaign


def _state_config(args) -> dict:
    return {"seed": args.seed, "count": args.count, "features": sorted(args.feature_set), "backend": args.backend}


def _new_state(config: dict) -> dict:
    return {"version": 1, "config": config, "next_seed": config["seed"], "programs": 0, "elapsed_s": 0.0,
            "counts": {"mismatch": 0, "jitcore-error": 0, "timeout": 0, "invalid": 0, "harness-error": 0},
            "regenerated": 0, "calls": 0, "variant_calls": 0, "exceptions_compared": 0, "graphs": 0,
            "with_breaks": 0, "with_recompiles": 0, "features": {}, "failures": []}


def _load_state(path: Path, config: dict, restart: bool) -> dict:
    """The campaign saved in `path`, or a new one. --count may change between runs (to extend a campaign); the first
    seed, the features and the backend may not."""
    if path.exists() and not restart:
        state = json.loads(path.read_text())
        saved = state.get("config", {})
        differ = [key for key in ("seed", "features", "backend") if saved.get(key) != config[key]]
        if differ:
            raise SystemExit(f"fuzz: {path} holds a campaign with another {', '.join(differ)} "
                             f"({', '.join(f'{k}={saved.get(k)!r}' for k in differ if k != 'features')}); "
                             f"use another --state file, or --restart to start this one over")
        state["config"] = config
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
    if outcome.kind != "ok":
        state["counts"][outcome.kind] = state["counts"].get(outcome.kind, 0) + 1
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
             f"timeouts, {counts['invalid']} seeds without a valid program"
             + (f", {counts['harness-error']} errors of the fuzz tools" if counts.get("harness-error") else "")
             + f"; {elapsed:.0f} s ({n / max(elapsed, 1e-9):.1f} programs/s)",
             f"  {state['calls']} calls ({state['variant_calls']} with other shapes or ints, "
             f"{state['exceptions_compared']} raising), {state['graphs']} graphs; {state['with_breaks']} programs "
             f"with graph breaks, {state['with_recompiles']} with recompiles; {state['regenerated']} regenerated",
             "  programs per feature: " + ", ".join(f"{k} {v}" for k, v in sorted(state["features"].items()))]
    for failure in state["failures"]:
        where = f" -> {failure['reproducer']}" if failure.get("reproducer") else ""
        lines.append(f"  seed {failure['seed']}: {failure['kind']}: {failure['message'].splitlines()[0][:300]}{where}")
    return "\n".join(lines)


def _warm_up() -> None:
    """Compile and run one small function on each backend before any program: torch imports much of itself
    lazily (torch._dynamo, aot_autograd) on first use, and a program's time limit striking inside such an import
    would leave the module half made for every later program of the process (and count the import as a hang)."""
    def warm(x, log):
        log.append(1)
        print(end="")
        return x[torch.tensor([0])].sin() + len(log)

    for backend in ("eager", "aot_eager"):
        jit.compile(warm, backend=backend)(torch.ones(2), [])
    jit.reset()


def _worker_init() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent saves the state and stops the pool
    torch.set_num_threads(1)
    _warm_up()


def _work(job: tuple) -> Outcome:
    seed, features, backend, timeout_s, variants = job
    return check_seed(seed, features, backend, timeout_s=timeout_s, variants=variants)


def run_campaign(seeds: range, features: frozenset = ALL_FEATURES, backend: str = "eager", *, jobs: int = 1,
                 timeout_s: int = 60, variants: int = MAX_VARIANTS):
    """Yield the Outcome of each seed, in seed order; `jobs` > 1 runs them in worker processes. `variants`: calls
    with other shapes and ints per program (the short test keeps one)."""
    work = [(seed, features, backend, timeout_s, variants) for seed in seeds]
    if jobs <= 1:
        _warm_up()
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
    if text == "soundness":
        return fuzz_features.SOUNDNESS_CAMPAIGN_FEATURES
    features = frozenset(name.strip() for name in text.split(",") if name.strip())
    unknown = sorted(features - ALL_FEATURES)
    if unknown:
        raise SystemExit(f"fuzz: unknown feature(s) {unknown}; known: all, fuzz, soundness, "
                         f"{', '.join(sorted(ALL_FEATURES))}")
    return features


def _progress(state: dict, count: int) -> str:
    counts = state["counts"]
    return (f"fuzz: {state['programs']}/{count} programs, {counts['mismatch']} mismatches, {counts['jitcore-error']} "
            f"jitcore errors, {counts['timeout']} timeouts, {state['elapsed_s']:.0f} s")


def _terminate(signum, frame):
    raise KeyboardInterrupt  # `kill` stops a campaign as Ctrl-C does: state saved, workers stopped


def _report_failure(outcome: Outcome, state: dict, path: Path, args) -> None:
    """Print a failure; with --minimize, write its reproducer unless its kind has --minimize-limit of them."""
    print(f"seed {outcome.seed}: {outcome.kind.upper()}: {outcome.message}", flush=True)
    kind = " / ".join(map(str, signature(outcome)))
    done = state.setdefault("minimized", {}).get(kind, 0)
    if args.minimize and done < args.minimize_limit and outcome.kind != "invalid":
        minimize_failure(outcome, args.feature_set, args.backend, Path(args.failures_dir), args.timeout)
        state["minimized"][kind] = done + 1
        state["failures"][-1]["reproducer"] = outcome.reproducer
        _save_state(path, state)
        print(f"seed {outcome.seed}: reproducer {outcome.reproducer}", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1000, help="programs in the campaign (seeds seed..seed+count-1)")
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--features", default="all",
                        help="'all', 'fuzz' (the fuzz makers only), 'soundness' (ISSUE13's constructs) or a comma list")
    parser.add_argument("--backend", default="eager", help="jitcore backend: eager (default) or aot_eager")
    parser.add_argument("--state", default="fuzz_state.json", help="state file: progress and failures (resumable)")
    parser.add_argument("--restart", action="store_true", help="ignore an existing state file")
    parser.add_argument("--minimize", action="store_true", help="write minimised reproducers of failures")
    parser.add_argument("--minimize-limit", type=int, default=3,
                        help="reproducers per kind of failure (the part that differs, or where a hang stopped)")
    parser.add_argument("--failures-dir", default="fuzz_failures", help="where reproducers go")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--timeout", type=int, default=60, help="seconds per program before it counts as a timeout")
    args = parser.parse_args(argv)
    args.feature_set = _parse_features(args.features)
    path = Path(args.state)
    state = _load_state(path, _state_config(args), args.restart)
    seeds = range(state["next_seed"], args.seed + args.count)
    started, before = time.monotonic(), state["elapsed_s"]
    last_report = started
    print(f"fuzz: seeds {seeds.start}..{seeds.stop - 1} ({len(seeds)} to go), backend {args.backend}, "
          f"{args.jobs} job(s), state {path}", flush=True)
    interrupted = False
    # a shell starts background jobs with SIGINT ignored: restore Ctrl-C / kill -INT, and treat kill (TERM) alike
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _terminate)
    try:
        for outcome in run_campaign(seeds, args.feature_set, args.backend, jobs=args.jobs, timeout_s=args.timeout):
            _add(state, outcome)
            state["elapsed_s"] = before + time.monotonic() - started
            _save_state(path, state)
            if outcome.kind != "ok":
                _report_failure(outcome, state, path, args)
            if time.monotonic() - last_report > 60:
                last_report = time.monotonic()
                print(_progress(state, args.count), flush=True)
    except KeyboardInterrupt:
        interrupted = True
        print(f"\nfuzz: interrupted; state saved in {path}, rerun the same command to resume", flush=True)
    state["elapsed_s"] = before + time.monotonic() - started
    _save_state(path, state)
    print(_summary(state, state["elapsed_s"]), flush=True)
    if interrupted:
        return 130
    failed = ("mismatch", "jitcore-error", "timeout", "harness-error")
    return 1 if any(state["counts"].get(kind) for kind in failed) else 0


if __name__ == "__main__":
    sys.exit(main())

