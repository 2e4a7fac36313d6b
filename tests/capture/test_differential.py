"""Differential test: random programs from `tools.progen`, compiled by jitcore, must agree with eager Python.

Each program is compiled once with a counting backend and called on two input sets of the same shapes and Python
values; each call must match eager (result, inputs afterwards, which outputs are inputs). The programs are built
to be captured as ONE graph, so a batch also requires that share of one-graph programs (`MIN_ONE_GRAPH`).
`JITCORE_DIFF_PROGRAMS` (default 300) and `JITCORE_DIFF_SEED` (default 0) choose the seeds; a failure names the
seed, the program and the line that reruns it alone.
"""
from __future__ import annotations

import collections
import dataclasses
import linecache
import os
import re

import pytest
import torch

import jitcore as jit
from jitcore.runtime.stats import STATS
from tests.support import CountingBackend, assert_same
from tools.progen import DEFAULT_FEATURES, generate_program

PROGRAMS = int(os.environ.get("JITCORE_DIFF_PROGRAMS", "300"))
FIRST_SEED = int(os.environ.get("JITCORE_DIFF_SEED", "0"))
#: programs per test: small enough that a failing batch names its seed quickly.
BATCH = 50
#: least share of a batch captured as exactly one graph (a correct jitcore captures all; this leaves room for
#: constructs still being built).
MIN_ONE_GRAPH = 0.9
#: the second call's inputs come from this seed offset: new values, the same shapes and Python values.
SECOND_CALL_SEED_OFFSET = 1_000_003


def _batches() -> list[range]:
    end = FIRST_SEED + PROGRAMS
    return [range(start, min(start + BATCH, end)) for start in range(FIRST_SEED, end, BATCH)]


@dataclasses.dataclass
class _Outcome:
    """What one program did: `mismatch` is a failure message (None: agreed), `graphs` the backend's graph count,
    `not_one_graph` why it was not captured whole as one graph (None: it was)."""
    seed: int
    source: str
    graphs: int
    mismatch: str | None = None
    not_one_graph: str | None = None


def _load(program):
    """`f` from a fresh module made of the program's source; its lines are registered for tracebacks and reports."""
    filename = f"<progen seed={program.seed}>"
    linecache.cache[filename] = (len(program.source), None, program.source.splitlines(True), filename)
    namespace = {"__name__": program.name}
    exec(compile(program.source, filename, "exec"), namespace)  # noqa: S102 - the generator's own output
    return namespace["f"]


def _tensor_leaves(value) -> list:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in _tensor_leaves(item)]
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _tensor_leaves(item)]
    return []


def _identity(inputs: tuple, result) -> list:
    """For each output tensor: the index of the input tensor it is, ('out', i) for an earlier output, or None."""
    input_ids = {id(t): i for i, t in enumerate(_tensor_leaves(inputs))}
    seen, pattern = {}, []
    for index, tensor in enumerate(_tensor_leaves(result)):
        pattern.append(input_ids.get(id(tensor), ("out", seen[id(tensor)]) if id(tensor) in seen else None))
        seen.setdefault(id(tensor), index)
    return pattern


def _check_call(f, compiled, program, input_seed: int) -> str | None:
    """Run eager and compiled on separate inputs made from `input_seed`; a description of any difference."""
    eager_args, compiled_args = program.make_inputs(input_seed), program.make_inputs(input_seed)
    try:
        expected = f(*eager_args)
    except Exception as exc:  # noqa: BLE001 - reported as a generator bug, with the program
        pytest.fail(f"generator bug: eager raised {exc!r} for seed {program.seed} (inputs seed {input_seed}); "
                    f"fix tools/progen.py so that it never writes this program:\n{program.source}")
    try:
        actual = compiled(*compiled_args)
    except Exception as exc:  # noqa: BLE001 - eager returned normally, so any exception is a mismatch
        return f"compiled raised {exc!r}; eager returned normally"
    try:
        assert_same(expected, actual)
        assert_same(eager_args, compiled_args, "args after the call")
    except AssertionError as exc:
        return str(exc)
    if _identity(compiled_args, actual) != _identity(eager_args, expected):
        return (f"output identity differs: eager {_identity(eager_args, expected)}, "
                f"compiled {_identity(compiled_args, actual)} (index of the input each output is, None: new)")
    return None


def _why_not_one_graph(f, program, backend: CountingBackend, graphs_after_first: int,
                       frames_after_first: tuple[int, int]) -> str | None:
    """None when f was captured whole as one graph; else a short reason: a break, or what the counts show.

    One graph in the backend is not enough: a break before the first tensor op leaves one graph (the resumed
    part's). But a break always costs another frame capture (the resume function's, or a callee's own) or a
    native entry, so one capture, no native entry and one graph over both calls is one graph with no break;
    anything else asks `jit.explain` (a second compile, a quarter of the program's time) for the reason.
    """
    if graphs_after_first == 1 and backend.graph_count > 1:
        return f"recompiled on the second call ({backend.graph_count} graphs)"
    if backend.graph_count == 1 and frames_after_first == (1, 0):
        return None
    try:
        report = jit.explain(f, *program.make_inputs(program.seed))
    except Exception as exc:  # noqa: BLE001 - the reason is what we want
        return f"explain raised {type(exc).__name__}: {exc}"
    if report.break_reasons:
        return report.break_reasons[0]
    if backend.graph_count != 1:
        return f"{graphs_after_first} graphs on the first call, {report.graph_count} in explain, no break reported"
    return None


def _run_program(seed: int) -> _Outcome:
    program = generate_program(seed)
    f = _load(program)
    backend = CountingBackend()
    compiled = jit.compile(f, backend=backend)
    outcome = _Outcome(seed, program.source, 0)
    try:
        for call, input_seed in enumerate((seed, seed + SECOND_CALL_SEED_OFFSET)):
            difference = _check_call(f, compiled, program, input_seed)
            if call == 0:
                graphs_after_first = backend.graph_count
                frames_after_first = (STATS.captures, STATS.native_entries)
            if difference is not None:
                outcome.mismatch = f"call {call + 1} (inputs seed {input_seed}): {difference}"
                break
        outcome.graphs = backend.graph_count
        if outcome.mismatch is None:
            outcome.not_one_graph = _why_not_one_graph(f, program, backend, graphs_after_first,
                                                       frames_after_first)
    finally:
        jit.reset()
    return outcome


def _reason_kind(reason: str) -> str:
    """A break reason without its file:line and program-specific names, for counting alike reasons together."""
    return re.sub(r"\b(t|k|ls|tp|d|acc|outs|cnt|i|j|item|c|p|fn|inner|helper|alpha|out)\d+\b", "<name>",
                  re.sub(r" at <progen.*", "", reason))[:160]


def _report(seeds: range, outcomes: list[_Outcome]) -> tuple[str, int]:
    one_graph = sum(1 for o in outcomes if o.mismatch is None and o.not_one_graph is None)
    lines = [f"{one_graph}/{len(outcomes)} programs of seeds {seeds.start}..{seeds.stop - 1} captured as one graph"]
    reasons = collections.Counter(_reason_kind(o.not_one_graph) for o in outcomes if o.not_one_graph)
    for reason, count in reasons.most_common():
        example = next(o.seed for o in outcomes if o.not_one_graph and _reason_kind(o.not_one_graph) == reason)
        lines.append(f"  {count:3d} x {reason} (e.g. seed {example})")
    return "\n".join(lines), one_graph


@pytest.mark.parametrize("seeds", _batches(), ids=lambda seeds: f"seeds{seeds.start}-{seeds.stop - 1}")
def test_random_programs_match_eager(seeds, capsys):
    outcomes = [_run_program(seed) for seed in seeds]
    summary, one_graph = _report(seeds, outcomes)
    with capsys.disabled():
        print(f"\n[differential] {summary}")
    mismatches = [o for o in outcomes if o.mismatch is not None]
    if mismatches:
        first = mismatches[0]
        others = "".join(f"\n  seed {o.seed}: {o.mismatch.splitlines()[0][:200]}" for o in mismatches[1:])
        pytest.fail(f"{len(mismatches)} program(s) differ from eager.\nseed {first.seed}: {first.mismatch}\n"
                    f"rerun alone: JITCORE_DIFF_SEED={first.seed} JITCORE_DIFF_PROGRAMS=1 "
                    f".venv/bin/python -m pytest tests/capture/test_differential.py -q\n\n{first.source}"
                    + (f"\nother mismatches:{others}" if others else ""))
    assert one_graph >= MIN_ONE_GRAPH * len(outcomes), summary


def test_generated_programs_run_eagerly():
    """The generator's own contract: 500 programs (and a few per single feature) run eagerly without raising."""
    cases = [(seed, DEFAULT_FEATURES) for seed in range(500)]
    cases += [(seed, frozenset({feature})) for feature in sorted(DEFAULT_FEATURES) for seed in range(5)]
    for seed, features in cases:
        program = generate_program(seed, features=features)
        f = _load(program)
        try:
            f(*program.make_inputs(seed))
        except Exception as exc:  # noqa: BLE001 - any exception is a generator bug
            pytest.fail(f"seed {seed}, features {sorted(features)}: eager raised {exc!r}\n{program.source}")


def test_generator_is_deterministic():
    first, second = generate_program(12345), generate_program(12345)
    assert first.source == second.source
    for a, b in zip(first.make_inputs(7), second.make_inputs(7)):
        assert_same(a, b)
