"""The short form of the fuzzing campaign (tools/fuzz.py): random programs with every feature agree with eager.

150 programs (graph breaks, side effects, exceptions, modules, recompiles, ISSUE13's soundness constructs: rebinding
between calls, mutation while iterating, dict views, exception chaining, attribute probes; and everything
tools/progen.py writes) run in two worker processes; each must match eager on every call (results, exceptions, printed output, inputs,
globals and object identity), without internal errors or hangs. Each program is called with one variant of other
shapes and ints (the campaign, tools/fuzz.py, keeps three): every feature, fewer calls. `JITCORE_FUZZ_PROGRAMS` and
`JITCORE_FUZZ_SEED` choose the seeds. A failure names each seed and the command that minimises it into fuzz_failures/seed_N.py.
"""
from __future__ import annotations

import dataclasses
import os
import runpy

import pytest
import torch

from tools.fuzz import Outcome, check_seed, replay, run_campaign
from tools.fuzz_features import ALL_FEATURES, SOUNDNESS_CAMPAIGN_FEATURES, SOUNDNESS_FEATURES
from tools.fuzz_oracle import valid_calls
from tools.fuzz_programs import generate_fuzz_program

#: under pytest-xdist (`make test`) the module's tests share one worker: the campaign (a module fixture) runs once
pytestmark = pytest.mark.xdist_group("fuzz_short")

PROGRAMS = int(os.environ.get("JITCORE_FUZZ_PROGRAMS", "150"))
FIRST_SEED = int(os.environ.get("JITCORE_FUZZ_SEED", "0"))
JOBS = min(2, os.cpu_count() or 1)
#: seconds before a program counts as hung (the slowest programs take a few seconds)
TIMEOUT_S = 20
#: every maker, ISSUE13's soundness constructs (tools/fuzz_soundness.py) included
FEATURES = ALL_FEATURES
#: calls with other shapes and ints per program (besides the base calls)
VARIANTS = 1


@pytest.fixture(scope="module")
def outcomes() -> list[Outcome]:
    seeds = range(FIRST_SEED, FIRST_SEED + PROGRAMS)
    return list(run_campaign(seeds, FEATURES, "eager", jobs=JOBS, timeout_s=TIMEOUT_S, variants=VARIANTS))


def _report(failures: list[Outcome]) -> str:
    lines = [f"seed {o.seed}: {o.kind}: {o.message[:600]}" for o in failures]
    first = failures[0].seed
    lines.append(f"minimise one: .venv/bin/python tools/fuzz.py --seed {first} --count 1 --minimize "
                 f"--state /tmp/fuzz_{first}.json --restart  (reproducer in fuzz_failures/seed_{first}.py)")
    return "\n".join(lines)


def test_fuzz_programs_match_eager(outcomes):
    mismatches = [o for o in outcomes if o.kind == "mismatch"]
    assert not mismatches, f"{len(mismatches)} of {len(outcomes)} programs differ from eager:\n{_report(mismatches)}"


def test_fuzz_programs_raise_no_internal_error_and_never_hang(outcomes):
    failures = [o for o in outcomes if o.kind in ("jitcore-error", "timeout")]
    assert not failures, f"{len(failures)} of {len(outcomes)} programs hit jitcore faults:\n{_report(failures)}"


def test_fuzz_programs_are_valid_and_exercise_every_feature(outcomes):
    """The generator's contract: each seed yields a program eager runs, and the batch covers each new feature."""
    invalid = [o.seed for o in outcomes if o.kind == "invalid"]
    assert not invalid, f"seeds without a valid program (a generator bug in tools/fuzz_features.py): {invalid}"
    broken = [o for o in outcomes if o.kind == "harness-error"]
    assert not broken, "the fuzz tools failed:\n" + "\n".join(f"seed {o.seed}: {o.message}" for o in broken)
    covered = {feature for o in outcomes for feature in o.features}
    missing = ({"print_break", "item_break", "tensor_if", "list_append", "obj_attr", "global_write", "dict_update",
                "exceptions", "module"} | SOUNDNESS_FEATURES) - covered
    assert not missing, f"no program of the batch used {sorted(missing)}"
    assert sum(o.variants > 0 for o in outcomes) >= len(outcomes) // 2, "too few programs were called with other shapes"
    assert sum(o.breaks > 0 for o in outcomes) >= len(outcomes) // 4, "too few programs had a graph break"


def test_soundness_programs_are_valid_and_cover_every_construct():
    """ISSUE13's constructs on their own (`--features soundness`): eager runs every program's calls, and a few
    dozen programs use each construct."""
    features, covered = SOUNDNESS_CAMPAIGN_FEATURES, set()
    for seed in range(FIRST_SEED, FIRST_SEED + 40):
        program = next((p for attempt in range(5)
                        for p in [generate_fuzz_program(seed, features=features, attempt=attempt)]
                        if valid_calls(p, seed) is not None), None)
        assert program is not None, f"seed {seed}: no valid soundness program (a generator bug)"
        covered |= program.used_features()
    assert not SOUNDNESS_FEATURES - covered, f"no program used {sorted(SOUNDNESS_FEATURES - covered)}"


def test_fuzz_generator_is_deterministic():
    first, second = generate_fuzz_program(4242), generate_fuzz_program(4242)
    assert first.source == second.source and first.params == second.params
    assert generate_fuzz_program(4242, attempt=1).source != first.source


def test_fuzz_harness_catches_and_minimises_a_wrong_backend(tmp_path):
    """The oracle itself: a backend that shifts each graph's first output must be caught, and the reproducer's
    program must be smaller than the original and still fail."""

    def shifted(gm, example_inputs):
        def run(*args):
            out = gm.forward(*args)
            first = out[0] if isinstance(out, (tuple, list)) and out else None
            if isinstance(first, torch.Tensor) and first.is_floating_point():
                return (first + 0.5, *out[1:])
            return out
        return run

    outcome = check_seed(5, FEATURES, backend=shifted, minimize_to=tmp_path, timeout_s=TIMEOUT_S,
                         minimize_budget_s=20)
    assert outcome.kind == "mismatch", outcome
    reproducer = runpy.run_path(str(tmp_path / "seed_5.py"))  # defines SOURCE, PARAMS, CALLS, STATE
    program = generate_fuzz_program(5, features=FEATURES, attempt=outcome.attempt)
    assert len(reproducer["SOURCE"].splitlines()) < len(program.source.splitlines())
    assert replay(reproducer["SOURCE"], reproducer["PARAMS"], reproducer["CALLS"], reproducer["STATE"],
                  backend=shifted, seed=5) == 1


def test_fuzz_runs_check_stack_effects(monkeypatch):
    """Every fuzz run checks each step's stack effect, even where config leaves the checks off: a handler that
    pushes more than its signature declares shows as a mismatch naming the StackEffectError."""
    from jitcore.capture.opcodes import HANDLERS
    from jitcore.config import config
    real = HANDLERS["RETURN_VALUE"]

    def return_value(state, inst, retval):
        real.fn(state, inst, retval)
        return retval

    monkeypatch.setattr(config, "debug_checks", False)
    monkeypatch.setitem(HANDLERS, "RETURN_VALUE", dataclasses.replace(real, fn=return_value))
    outcome = check_seed(5, timeout_s=TIMEOUT_S)
    assert outcome.kind == "mismatch", outcome
    assert "StackEffectError" in outcome.message and "RETURN_VALUE" in outcome.message
    assert config.debug_checks is False
