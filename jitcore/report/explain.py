"""`jit.explain()`: run a call once through a fresh compiled copy and describe everything jitcore did with it.

The copy compiles with a recording backend (eager underneath), so the report covers the whole function: the graph
before a break, the resume functions after it, callees a break runs natively, every guard and every recompile.
The report holds graphs (op counts, readable FX code), breaks (reason, user location, source, hint), guard trees
and compile time by phase; report.view renders it in a terminal, report.html in a notebook or a file.
Entry points: `explain_call(fn, args, kwargs)` -> `ExplainReport`.
"""
from __future__ import annotations

import dataclasses
import inspect
import time

from jitcore.report.describe import (Frame, break_location, frame_of, graph_code, hint_for, readable, reason_of,
                                     snippet)

__all__ = ["ExplainReport", "GraphInfo", "BreakInfo", "GuardsInfo", "explain_call"]

_PHASES = ("capture", "backend", "codegen")


class _Rendered:
    """Terminal, notebook and plain-text faces shared by the report and its parts (see report.view, report.html)."""

    def __rich_console__(self, console, options):
        from jitcore.report import view
        yield view.render(self)

    def _repr_html_(self) -> str:
        from jitcore.report import html
        return html.fragment(self)

    def __str__(self) -> str:
        from jitcore.report import view
        return view.plain_text(self)


@dataclasses.dataclass(eq=False)
class GraphInfo(_Rendered):
    """One graph the call compiled. Attribute access falls through to the GraphModule (`.code`, `.graph`, calls)."""
    index: int
    gm: object
    frame: Frame
    op_count: int
    compile_time: dict

    @property
    def readable_code(self) -> str:
        return graph_code(self.gm, self.frame.filename, self.frame)

    def __getattr__(self, name):
        if name.startswith("__") or name == "gm":
            raise AttributeError(name)
        return getattr(self.gm, name)

    def __call__(self, *args, **kwargs):
        return self.gm(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<graph {self.index}: {self.frame.label}, {self.op_count} ops>"


@dataclasses.dataclass(eq=False)
class BreakInfo(_Rendered):
    """One place where capture stopped: why, where in the user's code, and what to change."""
    kind: str
    reason: str
    filename: str
    lineno: int
    source_line: str
    hint: str
    #: the function the breaking line belongs to (an inlined callee's own name)
    function: str = ""
    #: the compiled frame that broke, as the user knows it ("f()", "f() after line 12")
    frame: str = ""
    #: True: the graph before it runs and the rest continues in Python; False: the frame runs natively
    resumed: bool = True
    #: (line number, text, is the breaking line) around it
    lines: list = dataclasses.field(default_factory=list)

    @property
    def where(self) -> str:
        from jitcore.report.describe import short_path
        return f"{short_path(self.filename)}:{self.lineno}" if self.filename else "unknown location"

    def __repr__(self) -> str:
        return f"<break at {self.where} in {self.function}(): {self.reason}>"

    @property
    def outcome(self) -> str:
        owner = self.frame or f"{self.function}()"
        return (f"{owner} runs as a graph up to here, then continues in Python" if self.resumed
                else f"{owner} runs in Python (no graph) for calls like this one")


class GuardsInfo(_Rendered):
    """The guard trees of every compiled frame: `trees` holds (label, guards.GuardTree); len() counts checks."""

    def __init__(self, trees: list):
        self.trees = trees

    def __len__(self) -> int:
        return sum(len(tree) for _, tree in self.trees)

    def __iter__(self):
        return iter(self.trees)

    def __getitem__(self, index):
        return self.trees[index]

    def __repr__(self) -> str:
        return f"<guards: {len(self)} checks in {len(self.trees)} entries>"

    def pretty(self) -> str:
        """Every tree as indented text, in the user's names."""
        blocks = []
        for label, tree in self.trees:
            blocks.append(label + "\n" + "\n".join("  " + line for line in readable(tree.pretty()).splitlines()))
        return "\n".join(blocks)


@dataclasses.dataclass(eq=False)
class ExplainReport(_Rendered):
    """What one call did under jitcore. Counts agree everywhere: graph_count == len(graphs), and so on."""
    function: str
    graphs: list
    breaks: list
    guards: GuardsInfo
    compile_time: dict
    filename: str = ""
    lineno: int = 0
    #: "f() after line 12: x: shape[0] changed 3 -> 4" for each recompile during the call
    recompiles: list = dataclasses.field(default_factory=list)
    #: messages of fallbacks after internal errors or backend failures during the call
    fallbacks: list = dataclasses.field(default_factory=list)
    #: the exception the call raised, if it did (the report covers what ran before it)
    error: BaseException | None = None
    #: wall time of the call, compiling included
    run_seconds: float = 0.0

    @property
    def graph_count(self) -> int:
        return len(self.graphs)

    @property
    def graph_break_count(self) -> int:
        return len(self.breaks)

    @property
    def break_reasons(self) -> list:
        return [b.reason for b in self.breaks]

    @property
    def ops_per_graph(self) -> list:
        return [g.op_count for g in self.graphs]

    @property
    def op_count(self) -> int:
        return sum(self.ops_per_graph)

    @property
    def compile_seconds(self) -> float:
        return sum(self.compile_time.values())

    def __repr__(self) -> str:
        return (f"<ExplainReport {self.function}(): {self.graph_count} graphs, {self.graph_break_count} breaks, "
                f"{self.op_count} ops, {len(self.guards)} guards>")

    def save_html(self, path) -> str:
        """Write the report as one self-contained HTML page (no external files or scripts); returns the path."""
        from jitcore.report import html
        text = html.page(self)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        return str(path)


# -- collecting -----------------------------------------------------------------------------------------------
class _RecordingBackend:
    """Compiles with the eager backend and remembers every graph in the order it was handed over."""

    def __init__(self):
        import backends
        self.inner = backends.lookup("eager")
        self.graphs: list = []
        self.__name__ = "eager"

    def __call__(self, gm, example_inputs):
        self.graphs.append(gm)
        return self.inner(gm, example_inputs)


def _original(fn):
    """The user's function behind a compiled copy or a function whose code jitcore swapped."""
    if hasattr(fn, "_jitcore_cache") and hasattr(fn, "__wrapped__"):
        return fn.__wrapped__
    from jitcore.runtime.prologue import FALLTHROUGH
    if any(const is FALLTHROUGH for const in fn.__code__.co_consts):
        from jitcore.runtime.autoenable import original_code
        code = original_code(fn)
        if code is not None:
            import types
            copy = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
            copy.__kwdefaults__, copy.__qualname__ = fn.__kwdefaults__, fn.__qualname__
            return copy
    return fn


def explain_call(fn, args: tuple, kwargs: dict) -> ExplainReport:
    """Run fn(*args, **kwargs) once through a fresh compiled copy (eager backend) and report what happened."""
    from jitcore.config import config
    from jitcore.report.console import recording
    from jitcore.runtime.cache import Options
    from jitcore.runtime.install import ALL_CACHES, compiled_function
    fn = _original(fn)
    try:
        inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as exc:
        from jitcore.errors import InvalidArgumentError
        raise InvalidArgumentError(f"explain(): these arguments do not fit {fn.__qualname__}: {exc}") from None
    recorder = _RecordingBackend()
    options = Options(recorder, "eager", cache_limit=config.cache_limit)
    compiled = compiled_function(fn, options)
    error = None
    with recording() as events:
        started = time.perf_counter()
        try:
            compiled(*args, **kwargs)
        except Exception as exc:  # the report says so; what ran before it is still explained
            error = exc
        run_seconds = time.perf_counter() - started
    caches = [cache for cache in list(ALL_CACHES) if cache.options is options]
    return _build(fn, recorder, caches, events, error, run_seconds)


def _build(fn, recorder, caches, events, error, run_seconds) -> ExplainReport:
    order = _first_seen(events, recorder, caches)
    caches.sort(key=lambda cache: order.get(cache.code, len(order)))
    owner = {id(entry.gm): (cache, entry) for cache in caches for entry in cache.entries if entry.gm is not None}
    graphs = []
    for gm in recorder.graphs:
        cache, entry = owner.get(id(gm), (None, None))
        if cache is None:  # a graph whose entry was not kept (the frame fell back): still shown
            frame = Frame(fn.__qualname__, fn.__code__.co_filename, fn.__code__.co_firstlineno)
            graphs.append(GraphInfo(len(graphs), gm, frame, _ops(gm), {}))
            continue
        graphs.append(GraphInfo(len(graphs), gm, frame_of(cache.code), _ops(gm), dict(entry.compile_seconds)))
    timings = {phase: 0.0 for phase in _PHASES}
    trees = []
    for cache in caches:
        frame = frame_of(cache.code)
        for number, entry in enumerate(cache.entries):
            for phase, seconds in entry.compile_seconds.items():
                timings[phase] = timings.get(phase, 0.0) + seconds
            label = frame.label + (f" · entry {number + 1}" if len(cache.entries) > 1 else "")
            trees.append((label, entry.guard_function.tree))
    breaks = _breaks(events, caches)
    recompiles = [f"{frame_of(e.facts['code']).label}: " + "; ".join(readable(r) for r in e.facts["reasons"])
                  for e in events if e.topic == "recompiles" and "entries" in e.facts]
    fallbacks = [readable(e.message) for e in events if e.topic == "fallbacks"]
    return ExplainReport(fn.__qualname__, graphs, breaks, GuardsInfo(trees), timings, fn.__code__.co_filename,
                         fn.__code__.co_firstlineno, recompiles, fallbacks, error, run_seconds)


def _first_seen(events, recorder, caches) -> dict:
    """code -> rank of its first event or graph during the call, so frames are listed in the order they ran."""
    order: dict = {}
    by_graph = {id(entry.gm): cache.code for cache in caches for entry in cache.entries if entry.gm is not None}
    for event in events:
        code = event.facts.get("code")
        if code is None and event.facts.get("gm") is not None:
            code = by_graph.get(id(event.facts["gm"]))
        if code is not None and code not in order:
            order[code] = len(order)
    for gm in recorder.graphs:
        code = by_graph.get(id(gm))
        if code is not None and code not in order:
            order[code] = len(order)
    return order


def _breaks(events, caches) -> list:
    """Each break site once, in the order the call met them; entries that broke without an event come last."""
    found, seen = [], set()

    def add(brk, code, resumed):
        key = (brk.location, brk.kind)
        if key not in seen:
            seen.add(key)
            found.append(_break_info(brk, code, resumed))

    for event in events:
        if event.topic == "breaks" and "brk" in event.facts:
            add(event.facts["brk"], event.facts.get("code"), event.facts.get("resumed", True))
    for cache in caches:
        for entry in cache.entries:
            if entry.break_reason is not None:
                add(entry.break_reason, cache.code, not entry.native)
    return found


def _break_info(brk, code, resumed: bool) -> BreakInfo:
    filename, lineno, line, function = break_location(code, brk)
    frame = frame_of(code) if code is not None else None
    return BreakInfo(brk.kind, reason_of(brk.info, brk.detail), filename, lineno, line.strip(),
                     hint_for(brk.kind, brk.detail, line, function, brk.info.hint), function,
                     frame.label if frame is not None else "", resumed, snippet(filename, lineno))


def _ops(gm) -> int:
    return sum(1 for node in gm.graph.nodes if node.op.startswith("call_"))
