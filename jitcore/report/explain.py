"""The report `jit.explain()` returns: what one call did under jitcore, and its terminal, notebook and text faces.

The report holds graphs (op counts, readable FX code), breaks (reason, user location, source, hint), guard trees
and compile time by phase; report.view renders it in a terminal, report.html in a notebook or a file. Running the
call is not done here (jitcore.explaining drives the runtime): `build_report` turns what was gathered into the
report. Entry points: `build_report(fn, graphs, caches, events, error, run_seconds)` -> `ExplainReport`.
"""
from __future__ import annotations

import dataclasses

from jitcore.capture.shapes import DYNAMIC_DIMS
from jitcore.report import html
from jitcore.report.describe import (Frame, break_location, frame_of, graph_code, hint_for, in_loop_outcome, readable,
                                     reason_of, short_path, snippet)

__all__ = ["ExplainReport", "GraphInfo", "BreakInfo", "GuardsInfo", "build_report"]

_PHASES = ("capture", "backend", "codegen")


def _view():
    from jitcore.report import view  # lazy: the terminal view imports rich, which `import jitcore` does not load
    return view


class _Rendered:
    """Terminal, notebook and plain-text faces shared by the report and its parts (see report.view, report.html).

    Each part says how it is drawn: `_terminal()` (a rich renderable) and `_html()` (markup).
    """

    def __rich_console__(self, console, options):
        yield self._terminal()

    def _repr_html_(self) -> str:
        return html.fragment(self._html())

    def __str__(self) -> str:
        return _view().plain_text(self._terminal())


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

    @property
    def dynamic_dims(self) -> list:
        """`x.shape[0] = s50: automatic dynamic: changed 4 -> 7 at a recompile` for each dynamic input dim: its
        symbol in the code and why it is dynamic (dynamic=True, jit.mark_dynamic, jit.maybe_mark_dynamic, ...)."""
        return list(getattr(self.gm, "meta", {}).get(DYNAMIC_DIMS, ()))

    def __getattr__(self, name):
        if name.startswith("__") or name == "gm":
            raise AttributeError(name)
        return getattr(self.gm, name)

    def __call__(self, *args, **kwargs):
        return self.gm(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<graph {self.index}: {self.frame.label}, {self.op_count} ops>"

    def _terminal(self):
        return _view().graph_block(self)

    def _html(self) -> str:
        return html.graph_section(self, open_=True)


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
    #: the compiled frame that broke, as the user knows it ("f()", "f() from line 12")
    frame: str = ""
    #: True: the graph before it runs and the rest continues in Python; False: the frame runs natively
    resumed: bool = True
    #: the break lies inside a loop: the frame runs natively, the functions it calls compiled
    in_loop: bool = False
    #: (line number, text, is the breaking line) around it
    lines: list = dataclasses.field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{short_path(self.filename)}:{self.lineno}" if self.filename else "unknown location"

    def __repr__(self) -> str:
        return f"<break at {self.where} in {self.function}(): {self.reason}>"

    @property
    def outcome(self) -> str:
        owner = self.frame or f"{self.function}()"
        if self.in_loop:
            return in_loop_outcome(owner, self.where)
        return (f"{owner} runs as a graph up to here, then continues in Python" if self.resumed
                else f"{owner} runs in Python (no graph) for calls like this one")

    def _terminal(self):
        return _view().break_block(self, 0)

    def _html(self) -> str:
        return html.break_section(self, 0, open_=True)


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

    def _terminal(self):
        return _view().guards_block(self)

    def _html(self) -> str:
        return html.guards_section(self, open_=True)


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
    #: "f() from line 12: x: shape[0] changed 3 -> 4" for each recompile during the call
    recompiles: list = dataclasses.field(default_factory=list)
    #: messages of fallbacks after internal errors or backend failures during the call
    fallbacks: list = dataclasses.field(default_factory=list)
    #: the exception the call raised, if it did (the report covers what ran before it)
    error: BaseException | None = None
    #: wall time of the call, compiling included
    run_seconds: float = 0.0
    #: "graph of M.forward split for DDP into 3 graphs, one per gradient bucket: why" for each split graph
    splits: list = dataclasses.field(default_factory=list)

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

    @property
    def compile_line(self) -> str:
        """'12.3 ms (capture 8.0 ms · backend 4.0 ms · codegen 0.3 ms)'"""
        phases = " · ".join(f"{phase} {seconds * 1e3:.1f} ms" for phase, seconds in self.compile_time.items())
        return f"{self.compile_seconds * 1e3:.1f} ms ({phases})"

    def __repr__(self) -> str:
        return (f"<ExplainReport {self.function}(): {self.graph_count} graphs, {self.graph_break_count} breaks, "
                f"{self.op_count} ops, {len(self.guards)} guards>")

    def _terminal(self):
        return _view().report_block(self)

    def _html(self) -> str:
        return html.report_section(self)

    def save_html(self, path) -> str:
        """Write the report as one self-contained HTML page (no external files or scripts); returns the path."""
        text = html.page(self)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        return str(path)


# -- building -----------------------------------------------------------------------------------------------
def build_report(fn, graphs_compiled, caches, events, error, run_seconds: float) -> ExplainReport:
    """The report of one call of `fn`: the graphs the backend received, in order; the caches of the compiled copy
    and of every frame it reached (runtime FrameCaches: `.code`, `.entries`); the events said during the call."""
    order = _first_seen(events, graphs_compiled, caches)
    caches.sort(key=lambda cache: order.get(cache.code, len(order)))
    owner = {id(entry.gm): (cache, entry) for cache in caches for entry in cache.entries if entry.gm is not None}
    graphs = []
    for gm in graphs_compiled:
        # a bucket's graph of a graph split for DDP (runtime/ddp_split.py) belongs to the graph it was cut from
        whole = getattr(gm, "meta", {}).get("jitcore_split", (gm,))[0]
        cache, entry = owner.get(id(whole), (None, None))
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
    splits = [readable(e.message) for e in events if e.topic == "distributed"]
    return ExplainReport(fn.__qualname__, graphs, breaks, GuardsInfo(trees), timings, fn.__code__.co_filename,
                         fn.__code__.co_firstlineno, recompiles, fallbacks, error, run_seconds, splits)


def _first_seen(events, graphs_compiled, caches) -> dict:
    """code -> rank of its first event or graph during the call, so frames are listed in the order they ran."""
    order: dict = {}
    by_graph = {id(entry.gm): cache.code for cache in caches for entry in cache.entries if entry.gm is not None}
    for event in events:
        code = event.facts.get("code")
        if code is None and event.facts.get("gm") is not None:
            code = by_graph.get(id(event.facts["gm"]))
        if code is not None and code not in order:
            order[code] = len(order)
    for gm in graphs_compiled:
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
                     hint_for(brk, line, function), function,
                     frame.label if frame is not None else "", resumed, brk.in_loop, snippet(filename, lineno))


def _ops(gm) -> int:
    return sum(1 for node in gm.graph.nodes if node.op.startswith("call_"))
