"""Fuzz programs: a module built around progen's `f` with the inputs, globals and classes the fuzz makers write to.

`generate_fuzz_program(seed)` chooses progen's parameters plus the inputs of Note [Fuzz inputs] (in
tools/fuzz_features.py), fills `f` with statements of progen's and fuzz_features' makers, and returns a
`FuzzProgram`: `make_inputs` runs the program's `rebind(phase)` (soundness features, tools/fuzz_soundness.py) and
builds each call's arguments, `calls` offers other batch sizes and ints (the `recompiles` feature) and phases.
Imports torch, progen, fuzz_features and fuzz_soundness, never jitcore.
Entry points: `generate_fuzz_program`, `FuzzProgram`, `CallSpec`.
"""
from __future__ import annotations

import dataclasses
import io
import linecache
import random
import re

import torch

from tools import progen
from tools.fuzz_features import (ALL_FEATURES, BOX_SOURCE, FEATURE_MARKERS, FUZZ_ERROR_SOURCE, GLOBALS,
                                 SOUNDNESS_FEATURES, BoxType, BufferType, FuzzContext, LogType, NetType, StatsType,
                                 net_source)
from tools.fuzz_soundness import SOUND_INPUT_TYPES, SoundContext, sound_input, sound_params
from tools.progen import FloatType, GenState, IntType, Param, TensorType

__all__ = ["CallSpec", "FuzzProgram", "generate_fuzz_program"]


@dataclasses.dataclass(frozen=True)
class CallSpec:
    """One call of `f`: tensor values from `seed`; `batch` replaces dim 0 of the 2-d inputs (None: unchanged);
    `ints` replaces Python values of parameters (name, value); `phase` chooses what the program's `rebind` sets
    and the phase's arguments (Note [Rebinding between calls] in tools/fuzz_soundness.py)."""
    seed: int
    batch: int | None = None
    ints: tuple = ()
    phase: int = 0

    def describe(self) -> str:
        parts = [f"inputs seed {self.seed}"] + ([f"batch {self.batch}"] if self.batch is not None else [])
        parts += [f"phase {self.phase}"] if self.phase else []
        return ", ".join(parts + [f"{name}={value!r}" for name, value in self.ints])


@dataclasses.dataclass(frozen=True)
class FuzzProgram:
    """A generated module: `source` defines `f`; `params` its parameters (progen's, then Note [Fuzz inputs]);
    `state` the module-level names whose values calls change (compared after each call)."""
    seed: int
    attempt: int
    name: str
    source: str
    params: tuple
    features: frozenset
    state: tuple

    def load(self) -> dict:
        """A fresh namespace made by running the source (under a fixed torch seed); its lines are registered for
        tracebacks."""
        filename = f"<fuzz seed={self.seed}>"
        linecache.cache[filename] = (len(self.source), None, self.source.splitlines(True), filename)
        namespace = {"__name__": self.name}
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)  # modules made at import get the same weights in every namespace
            exec(compile(self.source, filename, "exec"), namespace)  # noqa: S102 - the generator's own output
        return namespace

    def used_features(self) -> frozenset:
        return frozenset(f for f, pattern in FEATURE_MARKERS.items() if re.search(pattern, self.source, re.M))

    def batch(self) -> int:
        return self.params[0].type.shape[0]

    def make_inputs(self, namespace: dict, call: CallSpec) -> tuple:
        """Fresh arguments for one call; classes come from `namespace` (Note [Fuzz inputs]). First runs the
        program's `rebind(call.phase)`, where it has one (Note [Rebinding between calls])."""
        if "rebind" in namespace:
            namespace["rebind"](call.phase)
        generator = torch.Generator().manual_seed(call.seed)
        ints, shared = dict(call.ints), {}
        return tuple(_make_value(p, namespace, call, ints, generator, shared) for p in self.params if p.passed)

    def calls(self, seed: int) -> list[CallSpec]:
        """The calls to try: two input sets of the first shapes, then (with `recompiles`) six candidates with other
        batch sizes and ints, then the first shapes again. The harness keeps the first few valid candidates.
        Phases count the candidates; without recompiles, soundness features add two calls of phases 2 and 3."""
        calls = [CallSpec(seed), CallSpec(seed + 1_000_003, phase=1)]
        if self.features & SOUNDNESS_FEATURES and "recompiles" not in self.features:
            calls += [CallSpec(seed + 3_000_009, phase=2), CallSpec(seed + 4_000_012, phase=3)]
        if "recompiles" in self.features:
            rng = random.Random(f"calls/{seed}")
            ints = [p for p in self.params if p.passed and type(p.value) is int and isinstance(p.type, IntType)]
            batches = [b for b in (1, 2, 3, 4, 5, 6) if b != self.batch()]
            for index, form in enumerate(("batch", "ints", "both", "batch", "ints", "both")):
                batch = rng.choice(batches) if form != "ints" or not ints else None
                changed = tuple((p.name, rng.choice([v for v in range(0, 6) if v != p.value]))
                                for p in ints if form != "batch" and rng.random() < 0.7)
                calls.append(CallSpec(seed + 17 * (index + 1), batch, changed, phase=index + 2))
            calls.append(CallSpec(seed + 2_000_006, phase=8))
        return calls


def _with_batch(shape: tuple, batch: int | None) -> tuple:
    return (batch,) + shape[1:] if batch is not None and len(shape) == 2 else shape


def _make_value(p: Param, namespace: dict, call: CallSpec, ints: dict, generator, shared: dict):
    kind, value, batch = p.type, ints.get(p.name, p.value), call.batch
    if p.name == "w":  # (width, hidden): its dim 0 is not the batch
        batch = None
    if isinstance(kind, SOUND_INPUT_TYPES):
        return sound_input(kind, namespace, call.phase, generator, shared)
    if isinstance(kind, TensorType):
        return torch.randn(_with_batch(kind.shape, batch), generator=generator)
    if isinstance(kind, progen.SeqType):
        items = [torch.randn(_with_batch(kind.item.shape, batch), generator=generator) for _ in range(kind.max_len)]
        return tuple(items) if kind.kind == "tuple" else items
    if isinstance(kind, progen.OptionalType):
        return None if value is None else torch.randn(_with_batch(kind.item.shape, batch), generator=generator)
    if isinstance(kind, BufferType):
        return io.StringIO()
    if isinstance(kind, LogType):
        return [0]
    if isinstance(kind, BoxType):
        return namespace["Box"](kind.scale, kind.row)
    if isinstance(kind, StatsType):
        return {"calls": 0}
    if isinstance(kind, NetType):
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(7)
            return namespace[kind.cls]()
    return value


def _extra_params(rng: random.Random, features: frozenset, row: tuple, ctx: FuzzContext) -> list[Param]:
    """Parameters that side effects and prints write to (Note [Fuzz inputs])."""
    extra = []
    if "print_break" in features and rng.random() < 0.85:
        extra.append(Param("out", BufferType()))
    if "list_append" in features and rng.random() < 0.6:
        extra.append(Param("log", LogType()))
    if "obj_attr" in features and rng.random() < 0.6:
        extra.append(Param("box", BoxType(rng.choice([0.5, 2.0, -1.5]), row)))
        ctx.fixed_sources.append(BOX_SOURCE)
    if "dict_update" in features and rng.random() < 0.5:
        extra.append(Param("stats", StatsType()))
    if "module" in features and rng.random() < 0.25:
        kind = NetType("NetArg", row[-1], rng.choice([2, 3]))
        extra.append(Param("net", kind))
        ctx.fixed_sources.append(net_source(rng, kind.cls, kind.in_features, kind.out_features))
    return extra


def _declare_globals(source: str) -> str:
    """`global ...` as the first line of each module-level function that uses GLOBALS.

    Python rejects a `global X` placed after any use of X in the same function, so one declaration at the top
    is the only safe place; the makers never declare.
    """
    chunks = re.split(r"(?m)^(?=def )", source)
    for index, chunk in enumerate(chunks):
        header, _, body = chunk.partition("\n")
        used = [name for name in GLOBALS if re.search(rf"\b{name}\b", body)]
        if chunk.startswith("def ") and used:
            chunks[index] = f"{header}\n    global {', '.join(used)}\n{body}"
    return "".join(chunks)


def _describe(p: Param) -> str:
    if isinstance(p.type, (BufferType, LogType, StatsType, BoxType, NetType, *SOUND_INPUT_TYPES)):
        return f"{p.name}: {type(p.type).__name__[:-4]}"
    return progen._describe(p)


def generate_fuzz_program(seed: int, *, features: frozenset | None = None, attempt: int = 0) -> FuzzProgram:
    """A random fuzz program: the same seed, features and attempt always give the same program.

    Args:
        seed: any int. features: names from `ALL_FEATURES` (default: all). attempt: 1, 2, ... give other programs
            for the same seed, for when a program turns out invalid (the harness regenerates).
    """
    features = ALL_FEATURES if features is None else frozenset(features)
    unknown = sorted(features - ALL_FEATURES)
    if unknown:
        raise ValueError(f"generate_fuzz_program: unknown feature(s) {unknown}; known: {sorted(ALL_FEATURES)}")
    rng = random.Random(seed if attempt == 0 else f"{seed}/{attempt}")
    params = progen._choose_params(rng, features)
    row = params[0].type.shape[1:]
    ctx = FuzzContext(row, "global_write" in features)
    if "exceptions" in features:
        ctx.fixed_sources.append(FUZZ_ERROR_SOURCE)
    extra = _extra_params(rng, features, row, ctx)
    sound = SoundContext(row) if features & SOUNDNESS_FEATURES else None
    if sound is not None:
        extra += sound_params(rng, features, row, sound)
    required = [p for p in params if p.default is None]
    params = required + extra + [p for p in params if p.default is not None]
    g = GenState(rng, features)
    g.shared.fuzz = ctx
    g.shared.sound = sound
    for p in params:
        g.define(p.name, p.type)
        g.params.add(p.name)
    module = ["import torch"]
    if "python_arith" in features and rng.random() < 0.4:
        scale, steps = rng.choice([0.5, 1.5, -0.75]), rng.randint(1, 3)
        module += [f"SCALE = {scale}", f"STEPS = {steps}"]
        for name, kind in (("SCALE", FloatType(abs(scale))), ("STEPS", IntType(steps, steps))):
            g.define(name, kind)
            g.params.add(name)
    if ctx.has_globals:
        module += ["COUNTER = 0", "TRACE = []", f"LAST = torch.zeros({progen._dims(row)})"]
    target = rng.randint(3, progen.MAX_BODY_LINES - 4)
    for _ in range(60):
        if len(g.lines) >= target:
            break
        progen.one_statement(g)
    progen._return_statement(g)
    sound_source = sound.render() if sound is not None else None
    if sound_source:
        ctx.fixed_sources.append(sound_source)
    signature = ", ".join(p.name if p.default is None else f"{p.name}={p.default}" for p in params)
    header = f"# fuzz seed={seed}" + (f" attempt={attempt}" if attempt else "") + \
        f": f({', '.join(_describe(p) for p in params)})"
    parts = ["\n".join(module[:1] + ([""] if len(module) > 1 else []) + module[1:]), *ctx.fixed_sources,
             *g.shared.helper_sources, "\n".join([f"def f({signature}):", *g.lines])]
    source = _declare_globals(f"{header}\n" + "\n\n\n".join(parts) + "\n")
    nets = tuple(m.group(1) for src in g.shared.helper_sources for m in [re.search(r"^(net\d+) = ", src, re.M)] if m)
    state = (GLOBALS if ctx.has_globals else ()) + nets + (sound.state() if sound is not None else ())
    return FuzzProgram(seed, attempt, f"fuzz_{seed}", source, tuple(params), features, state)

