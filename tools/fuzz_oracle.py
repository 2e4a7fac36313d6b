"""The fuzzing oracle: one program run eagerly and compiled by jitcore, call by call, and every difference named.

Each program is loaded twice (an eager namespace and a compiled one, so globals, classes and modules never mix).
Every call must agree with eager on the result, the exception (type and message), printed output, the inputs
afterwards (lists, dicts, objects, modules), the module's globals, and which results are which inputs. Eager
itself must show no generator bug (an unintended exception, a non-finite value): `valid_calls` checks that first.
Every compiled run checks each interpreted instruction's stack effect (config.debug_checks): a handler that
disagrees with its declared signature, or a signature with CPython's, raises and shows as a mismatch.
Entry points: `run_program`, `timed_run`, `valid_calls`, `Outcome`, `signature`.
"""
from __future__ import annotations

import contextlib
import dataclasses
import io
import logging
import math
import re
import signal
import traceback
import types
import warnings
from pathlib import Path

import torch

import jitcore as jit
from jitcore.report.console import recording
from tests.support import assert_same
from tools.fuzz_features import is_intended
from tools.fuzz_programs import CallSpec, FuzzProgram

__all__ = ["FuzzTimeout", "MAX_VARIANTS", "Outcome", "eager_errors", "run_program", "signature", "time_limit",
           "timed_run", "valid_calls"]

#: recompile variants kept per program (of the candidates `FuzzProgram.calls` offers)
MAX_VARIANTS = 3
#: seconds eager may take for one call before the program counts as invalid (valid ones take milliseconds)
EAGER_TIMEOUT_S = 10
#: tolerance for Python floats: read from float32 tensors, so assert_close's float32 tolerance
FLOAT_RTOL, FLOAT_ATOL = 1.3e-6, 1e-5
#: tolerance for numbers in printed text: printed with 4 decimals, so one unit in the last place may flip
TEXT_RTOL, TEXT_ATOL = 1e-4, 2e-4

# programs read `.item()` of tensors that require grad on purpose (a graph break); the warning would flood the log
warnings.filterwarnings("ignore", message="Converting a tensor with requires_grad=True to a scalar")
# capture runs ops on fake tensors; where one fails (as eager's op fails too) torch logs the traceback at ERROR level.
# What counts is whether compiled and eager then agree, which the comparison checks.
logging.getLogger("torch._subclasses.fake_tensor").setLevel(logging.CRITICAL)


class FuzzTimeout(BaseException):
    """A program ran past its time limit; a BaseException, so jitcore's fault containment cannot swallow it."""


def _alarm(signum, frame):
    raise FuzzTimeout()


@contextlib.contextmanager
def time_limit(seconds: int):
    """Raise FuzzTimeout in the block after `seconds` (SIGALRM; no limit where there is none, or for seconds <= 0)."""
    if not hasattr(signal, "SIGALRM") or seconds <= 0:
        yield
        return
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


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
    if type(value) in (set, frozenset) and all(type(m) in (int, str) for m in value):
        return type(value).__name__, list(value)  # CPython's order too (the history of the set's table)
    if isinstance(value, io.StringIO):
        return _Text(value.getvalue())
    if type(value) is float:
        return _Close(value)
    if isinstance(value, torch.nn.Module):
        attrs = {k: _plain(v, program, seen) for k, v in vars(value).items() if not k.startswith("_")}
        return {"class": type(value).__qualname__, "attributes": attrs,
                "parameters": dict(value.named_parameters()), "buffers": dict(value.named_buffers())}
    if isinstance(value, BaseException):
        return {"exception": f"{type(value).__module__}.{type(value).__qualname__}", "message": str(value),
                "context": _plain(value.__context__, program, seen), "cause": _plain(value.__cause__, program, seen),
                "suppress_context": value.__suppress_context__}
    if isinstance(value, (types.FunctionType, type)):  # each namespace has its own functions and classes
        return f"<{type(value).__name__} {value.__module__}.{value.__qualname__}>"
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
    internal error and fell back to Python: results agreed), 'timeout', 'invalid' (no valid program for the seed)
    or 'harness-error' (the fuzz tools themselves failed: a bug in tools/fuzz*.py)."""
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
    """Counts the graphs it is handed, then hands them to the named (or given) backend."""

    def __init__(self, backend):
        from jitcore.backends import lookup
        self.inner, self.graphs = lookup(backend), 0
        self.__name__ = backend if isinstance(backend, str) else getattr(backend, "__name__", "backend")

    def __call__(self, gm, example_inputs):
        self.graphs += 1
        return self.inner(gm, example_inputs)


def eager_errors(program: FuzzProgram, calls: list, timeout_s: int = EAGER_TIMEOUT_S) -> str | None:
    """Run `calls` eagerly in a fresh namespace: the first generator bug they show, or None. A minimised candidate
    can loop forever (its loop counter's update was dropped), hence the time limit."""
    try:
        namespace = program.load()
    except Exception as exc:  # noqa: BLE001 - a program that does not load is invalid
        return f"loading raised {type(exc).__name__}: {exc}"
    for index, call in enumerate(calls):
        try:
            with time_limit(timeout_s):
                why = _valid(_observe(namespace["f"], program, namespace, call))
        except FuzzTimeout:
            why = f"eager ran past {timeout_s} s"
        except Exception as exc:  # noqa: BLE001 - the inputs could not be made (a minimised program lost a class)
            why = f"making the inputs raised {type(exc).__name__}: {exc}"
        if why is not None:
            return f"call {index + 1} ({call.describe()}): {why}"
    return None


def valid_calls(program: FuzzProgram, seed: int, variants: int = MAX_VARIANTS) -> list | None:
    """The calls to compare: the base calls and the first `variants` candidates under which eager runs without a
    generator bug; None if the base calls themselves show one (the program must be regenerated)."""
    candidates = program.calls(seed)
    if len(candidates) == 2:
        return candidates if eager_errors(program, candidates) is None else None
    base, others, last = candidates[:2], candidates[2:-1], candidates[-1:]
    if eager_errors(program, base + last) is not None:
        return None
    kept: list = []
    for variant in others:
        if len(kept) < variants and eager_errors(program, base + kept + [variant] + last) is None:
            kept.append(variant)
    return base + kept + last


def run_program(program: FuzzProgram, calls: list, backend="eager") -> Outcome:
    """Compile `f` once and compare every call with eager; stops at the first difference."""
    outcome = Outcome(program.seed, attempt=program.attempt, calls=len(calls))
    eager_ns, compiled_ns = program.load(), program.load()
    counting = _CountingBackend(backend)
    try:
        compiled = jit.compile(compiled_ns["f"], backend=counting)
    except Exception as exc:  # noqa: BLE001 - compile() itself failing is a jitcore fault
        outcome.kind, outcome.message = "jitcore-error", f"jit.compile raised {_describe_error(exc)}"
        return outcome
    checks, jit.config.debug_checks = jit.config.debug_checks, True
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
        jit.config.debug_checks = checks
        jit.reset()
    outcome.graphs = counting.graphs
    outcome.breaks = sum(1 for e in events if e.topic == "breaks")
    outcome.recompiles = sum(1 for e in events if e.topic == "recompiles")
    fallbacks = [e for e in events if e.topic == "fallbacks"]
    if fallbacks and outcome.kind == "ok":
        outcome.kind, outcome.message = "jitcore-error", fallbacks[0].message
    return outcome




def timed_run(program: FuzzProgram, calls: list, backend="eager", timeout_s: int = 120) -> Outcome:
    """`run_program`, or an Outcome of kind 'timeout' (naming where it stopped) once it runs past `timeout_s`."""
    try:
        with time_limit(timeout_s):
            return run_program(program, calls, backend)
    except FuzzTimeout as exc:
        jit.reset()
        frames = [fr for fr in traceback.extract_tb(exc.__traceback__) if "/tools/fuzz" not in fr.filename][-2:]
        where = "; ".join(f"{Path(fr.filename).name}:{fr.lineno} in {fr.name}" for fr in reversed(frames))
        return Outcome(program.seed, kind="timeout", attempt=program.attempt, calls=len(calls),
                       message=f"compiled calls ran past {timeout_s} s (eager runs them in under a second); "
                               f"stopped at {where}")


def signature(outcome: Outcome) -> tuple:
    """What makes two failures the same for minimisation: the kind and the part that differs."""
    if outcome.kind == "timeout":
        return (outcome.kind, outcome.message.partition("stopped at ")[2].split(";")[0].split(" in ")[-1])
    if outcome.kind == "jitcore-error":
        stage = re.search(r"(during \w+|while \w+|backend)", outcome.message)
        error = re.search(r": (\w+): ", outcome.message)
        return (outcome.kind, stage.group(1) if stage else "", error.group(1) if error else "")
    if outcome.kind != "mismatch":
        return (outcome.kind,)
    text = outcome.message.split("): ", 1)[-1]
    match = re.match(r"(compiled raised \w+|eager raised \w+|\w+(?: after the call)?|object identity)", text)
    return (outcome.kind, match.group(1) if match else text[:40])

