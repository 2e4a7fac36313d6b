"""Per-code cache entries and the recompile policy.

A `FrameCache` belongs to one code object compiled with one set of options. On a miss it captures the frame from
the live arguments, compiles the graph with the backend, and adds an entry (guards + the code that runs it). A
frame that cannot be captured gets a *native* entry under the guards gathered so far: it runs the original body,
which is always correct, and is not captured again for the same guards. Past `cache_limit` it runs natively.
"""
from __future__ import annotations

import dataclasses
import itertools
import threading
import time
import weakref

import guards
from guards import GlobalStateMatch
from jitcore.capture.breaks import GraphBreak
from jitcore.capture.frame import capture_frame, arg_names
from jitcore.capture.interpreter import CaptureInternalError
from jitcore.codegen.transform import build_entry
from jitcore.errors import GraphBreakError, BackendCompileError, InternalError, JitError
from jitcore import events
from jitcore.runtime.dispatch import Dispatcher
from jitcore.runtime.graph_meta import mark_inputs
from jitcore.runtime.guard_batch import batch_module_guards, source_reader
from jitcore.runtime.prologue import FALLTHROUGH
from jitcore.runtime.break_wiring import break_steps

__all__ = ["FrameCache", "Entry", "Options", "STATS"]


@dataclasses.dataclass(frozen=True)
class Options:
    backend: object          # the backend callable
    backend_name: str
    fullgraph: bool = False
    dynamic: object = None
    cache_limit: int = 8


#: built-in backends that run AOTAutograd, which reads the static-input marks (runtime/graph_meta.py)
_AOT_BACKENDS = frozenset({"inductor", "aot_eager", "cudagraphs"})

#: a number per graph compiled, so that each is reported once (an id() may be reused after a graph dies)
_GRAPH_NUMBERS = itertools.count()


@dataclasses.dataclass
class Entry:
    guard_check: object
    run: object
    guard_function: object
    native: bool
    gm: object = None
    op_count: int = 0
    break_reason: GraphBreak | None = None
    compile_seconds: dict = dataclasses.field(default_factory=dict)


class _Stats:
    """Counters for tests and reports: captures, graphs compiled, fallbacks."""

    def __init__(self):
        self.clear()

    def clear(self):
        self.captures = 0
        self.graphs = 0
        self.native_entries = 0
        self.dispatch_misses = 0


STATS = _Stats()


def _native_run(*args):
    return FALLTHROUGH


class FrameCache:
    def __init__(self, code, fn_globals, options: Options, original=None, gate=None):
        self.code = code
        self.globals = fn_globals
        self.options = options
        self.params = arg_names(code)
        self.name = code.co_qualname
        self.entries: list = []
        self.limit_reported = False
        #: guard paths of ints that changed between calls: captured as graph inputs from now on
        self.dynamic_paths: frozenset = frozenset()
        #: the dynamic paths that hold floats; `static_floats` once a backend refused a float graph input
        self.float_paths: frozenset = frozenset()
        self.static_floats = False
        #: graphs go to the backend without static-input marks (set after a backend failed on a marked graph)
        self.plain_graphs = False
        self._lock = threading.RLock()
        self.dispatcher = Dispatcher(code, self.params, self.miss, original, gate)

    @property
    def dispatch(self):
        return self.dispatcher.fn

    def where(self) -> str:
        return f"{self.name}() at {self.code.co_filename}:{self.code.co_firstlineno}"

    # -- the miss path ----------------------------------------------------------------------------------------
    def miss(self, args: tuple, cells):
        """Capture for these arguments (or decline), then run this call."""
        with self._lock:
            STATS.dispatch_misses += 1
            for entry in self.entries:  # another thread may have added a matching entry meanwhile
                if entry.guard_check(*args, cells):
                    return entry.run(*args, cells)
            if len(self.entries) >= self.options.cache_limit:
                self._report_limit(args, cells)
                return FALLTHROUGH
            if self.entries:
                self._report_recompile(args, cells)
                self._learn_dynamic_ints(args, cells)
            entry = self.capture(args, cells)
            self.entries.append(entry)
            self.dispatcher.update(self.entries)
        return entry.run(*args, cells)

    def _learn_dynamic_ints(self, args, cells) -> None:
        """An int whose change made an entry miss is captured as a graph input from now on (automatic dynamic),
        unless the options ask for static shapes (dynamic=False)."""
        if self.options.dynamic is False:
            return
        from guards import EqualsMatch
        changed = set()
        kinds = (int,) if self.static_floats else (int, float)
        for entry in self.entries:
            for path, _, check, value, _ in entry.guard_function.failed_checks(args, cells):
                if isinstance(check, EqualsMatch) and type(check.value) in kinds \
                        and type(value) is type(check.value):
                    changed.add(path)
                    if type(value) is float:
                        self.float_paths = self.float_paths | {path}
        if changed:
            self.dynamic_paths = self.dynamic_paths | changed

    def prepare(self, args: tuple, cells) -> None:
        """Make sure an entry exists for these arguments without running anything (first calls in enabled())."""
        with self._lock:
            if any(entry.guard_check(*args, cells) for entry in self.entries):
                return
            if len(self.entries) >= self.options.cache_limit:
                return
            self.entries.append(self.capture(args, cells))
            self.dispatcher.update(self.entries)

    def clear(self) -> None:
        with self._lock:
            self.entries.clear()
            self.limit_reported = False
            self.dispatcher.update(self.entries)

    def capture(self, args: tuple, cells) -> Entry:
        """A new entry for these live arguments: compiled, or native when the frame cannot be captured."""
        STATS.captures += 1
        arg_values = dict(zip(self.params, args))
        started = time.perf_counter()
        try:
            captured = capture_frame(self.code, self.globals, cells, arg_values, self.name, self.dynamic_paths)
        except GraphBreak as brk:
            return self._native_entry(brk, started)
        except CaptureInternalError as exc:
            return self._internal_failure("capture", exc)
        try:
            return self._compile(captured, started, (args, cells))
        except JitError:
            raise
        except Exception as exc:
            return self._internal_failure("codegen", exc)

    def _compile(self, captured, started, live) -> Entry:
        timings = {"capture": captured.capture_seconds}
        compiled = None
        if captured.gm is not None:
            t0 = time.perf_counter()
            marked = False
            try:
                marked = (not self.plain_graphs and self.options.backend_name in _AOT_BACKENDS
                          and mark_inputs(captured.gm, captured.input_sources))
                with events.compiling(self.code, self.options.backend_name):
                    compiled = self.options.backend(captured.gm, list(captured.example_inputs))
            except Exception as exc:
                if marked:
                    # the static-input marks follow Dynamo's metadata, which another torch may read otherwise:
                    # try once more with a graph that carries none before calling the backend broken
                    self.plain_graphs = True
                    return self.capture(*live)
                if self.dynamic_paths & self.float_paths and not self.static_floats:
                    # AOTAutograd cannot always turn a Python float input into a tensor (torch's
                    # TensorifyScalarRestartAnalysis, which Dynamo answers by specialising the float):
                    # capture again with floats as constants
                    self.static_floats = True
                    self.dynamic_paths = self.dynamic_paths - self.float_paths
                    return self.capture(*live)
                message = (f"backend {self.options.backend_name!r} failed to compile a graph of {self.where()}: "
                           f"{type(exc).__name__}: {exc}")
                if self.options.fullgraph or _strict():
                    raise BackendCompileError(message + " (run with backend='eager' to check the graph itself)") \
                        from exc
                events.emit("fallbacks", message + "; running it natively", key=("backend", self.code), always=True,
                    code=self.code, error=exc, backend=self.options.backend_name)
                return self._native(self._guards(captured.guards))
            timings["backend"] = time.perf_counter() - t0
            STATS.graphs += 1
        t0 = time.perf_counter()
        read = source_reader(self.params, live[0], live[1], self.globals, _builtins(self.globals))
        pinned: dict = {}
        batched = batch_module_guards(captured.guards, read, pinned)
        owners = pinned.pop(None, [])
        steps = None
        if captured.break_point is not None:
            if self.options.fullgraph:
                self._native_entry(captured.break_point.reason, started)
            steps = break_steps(self.code, self.globals, captured, self.options)
            self._report_break(captured.break_point.reason, resumed=True)
        try:
            holder = []
            run = build_entry(captured, compiled, self.params, self.globals, captured.ctx.builtins, self.name, steps,
                              pinned, on_fault=lambda exc: self._rebuild_failed(holder[0], exc))
        except GraphBreak as brk:
            # the stack or a local at the break cannot be rebuilt as Python objects: run the frame natively
            self._report_break(brk, resumed=False)
            return self._native(self._guards(captured.guards), brk)
        timings["codegen"] = time.perf_counter() - t0
        if captured.gm is not None:
            events.emit("graphs", f"graph of {self.where()} with {captured.op_count} ops:\n{captured.gm.code}",
                key=("graph", next(_GRAPH_NUMBERS)), code=self.code, gm=captured.gm, op_count=captured.op_count,
                guards=captured.guards)
        guard_fn = self._guards(batched, live[0])
        _release_with(owners, run)
        entry = Entry(guard_fn.check, run, guard_fn, native=False, gm=captured.gm, op_count=captured.op_count,
                      break_reason=captured.break_point.reason if captured.break_point else None,
                      compile_seconds=timings)
        holder.append(entry)
        return entry

    def _rebuild_failed(self, entry, exc):
        """An entry's result could not be rebuilt (a fault in jitcore): it runs natively from now on."""
        if _strict() or self.options.fullgraph:
            raise InternalError(f"jitcore failed while rebuilding the result of {self.where()}: {exc}") from exc
        events.emit("fallbacks", f"internal error while rebuilding the result of {self.where()}: {type(exc).__name__}: "
                         f"{exc}; running it natively from now on", key=("rebuild", self.code), always=True)
        with self._lock:
            entry.run = _native_run
            entry.native = True
            self.dispatcher.update(self.entries)
        return FALLTHROUGH

    def _guards(self, collected, examples=None):
        """The compiled guard function for (source, check) pairs; a None source marks a root check. `examples`:
        the live arguments of the capture, which lets tensor checks on arguments merge into one."""
        tree = guards.GuardTree()
        tree.add_root(GlobalStateMatch())
        for source, check in collected:
            if source is None:
                tree.add_root(check, "module state")
            else:
                tree.add(source.path, check, source.user_name)
        return guards.compile_tree(tree, list(self.params), self.globals, _builtins(self.globals), examples)

    def _native(self, guard_fn, reason=None) -> Entry:
        STATS.native_entries += 1
        return Entry(guard_fn.check, _native_run, guard_fn, native=True, break_reason=reason)

    def _native_entry(self, brk: GraphBreak, started) -> Entry:
        if self.options.fullgraph:
            filename, lineno, line, func = brk.location or (self.code.co_filename, 0, "", self.name)
            raise GraphBreakError(
                f"graph break in {func}() at {filename}:{lineno}: {brk.info.explanation}"
                + (f" ({brk.detail})" if brk.detail else "")
                + (f"\n    {line.strip()}" if line else "") + f"\n  hint: {brk.info.hint}",
                kind=brk.kind, filename=filename, lineno=lineno, source_line=line.strip() if line else "")
        self._report_break(brk, resumed=False)
        guard_fn = self._guards(_collected_from(brk))
        return self._native(guard_fn, brk)

    def _report_break(self, brk: GraphBreak, resumed: bool) -> None:
        outcome = "compiled up to here, continuing in Python" if resumed else "the frame runs natively"
        events.emit("breaks", f"{self.name}: {brk.describe()}; {outcome}", key=("break", brk.location, brk.kind),
            code=self.code, brk=brk, resumed=resumed)

    def _internal_failure(self, stage: str, exc: Exception) -> Entry:
        if _strict() or self.options.fullgraph:
            raise InternalError(f"jitcore failed during {stage} of {self.where()}: {exc}") from exc
        events.emit("fallbacks", f"internal error during {stage} of {self.where()}: {type(exc).__name__}: {exc}; "
                         f"running it natively from now on", key=("internal", self.code, stage), always=True,
            code=self.code, stage=stage, error=exc)
        # no guards (building them may be what failed): the code runs natively for every later call
        return self._native(_ALWAYS)

    # -- reports ----------------------------------------------------------------------------------------------
    def _failure_reasons(self, args, cells) -> list:
        """Why the newest entry does not fit these arguments: comparing with every stale entry would repeat the
        same change once per entry (`x.shape[0] changed 4 -> 7`, then `5 -> 7`, ...)."""
        for entry in reversed(self.entries):
            reasons = entry.guard_function.failures(args, cells)
            if reasons:
                return reasons
        return []

    def _report_recompile(self, args, cells) -> None:
        reasons = self._failure_reasons(args, cells)
        events.emit("recompiles", f"recompiling {self.where()} (entry {len(self.entries) + 1}): "
                          + ("; ".join(reasons[:3]) or "no entry matched"), key=("recompile", self.code, tuple(reasons)),
            code=self.code, reasons=reasons, entries=len(self.entries) + 1, cache_limit=self.options.cache_limit)

    def _report_limit(self, args, cells) -> None:
        if self.limit_reported:
            return
        self.limit_reported = True
        reasons = self._failure_reasons(args, cells)
        events.emit("recompiles", f"{self.where()} hit cache_limit={self.options.cache_limit}; new variants run natively. "
                          f"Changing: {'; '.join(reasons[:3]) or 'unknown'}. Consider dynamic shapes, jit.disable, "
                          f"or a larger cache_limit.", key=("limit", self.code), always=True,
            code=self.code, reasons=reasons, limit=self.options.cache_limit)


def _collected_from(brk):
    return getattr(brk, "guards", None) or []


def _release_with(owners, run) -> None:
    """When a module whose parameters an entry passes directly dies, drop them from the entry (its batched guard
    fails from then on, so the entry never runs again): a cache never keeps a dropped model's tensors alive."""
    if not owners:
        return
    ref = weakref.ref(run)
    for owner in {id(o): o for o in owners}.values():
        weakref.finalize(owner, _drop_pinned, ref)


def _drop_pinned(ref) -> None:
    run = ref()
    if run is not None:
        namespace = run.__globals__
        for name in [n for n in namespace if n.startswith("___param")]:
            namespace[name] = None


class _AlwaysGuard:
    """The guard of a native entry made after an internal fault: it matches everything, built without guards/."""

    tree = guards.GuardTree()

    @staticmethod
    def check(*args):
        return True

    @staticmethod
    def failures(args, cells):
        return []

    @staticmethod
    def failed_checks(args, cells):
        return []


_ALWAYS = _AlwaysGuard()


def _strict() -> bool:
    from jitcore.config import config
    return config.strict


def _builtins(fn_globals):
    b = fn_globals.get("__builtins__", __builtins__)
    return b if isinstance(b, dict) else vars(b)
