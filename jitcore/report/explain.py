"""`jit.explain()`: capture a call without running it and describe what jitcore would do.

The report holds the graphs (with op counts and FX code), the graph breaks (reason, user location, hint), the
guards as a tree, and the time spent per phase. It renders as text (`str(report)`) and through rich.
"""
from __future__ import annotations

import dataclasses
import inspect
import time

import guards
from guards.checks import GlobalStateMatch
from jitcore.capture.breaks import GraphBreak
from jitcore.capture.frame import capture_frame, arg_names

__all__ = ["ExplainReport", "BreakInfo", "explain_call"]


@dataclasses.dataclass
class BreakInfo:
    kind: str
    reason: str
    filename: str
    lineno: int
    source_line: str
    hint: str

    def __str__(self):
        where = f"{self.filename}:{self.lineno}" if self.filename else "?"
        line = f"\n      {self.source_line.strip()}" if self.source_line else ""
        return f"{self.reason} at {where}{line}\n      hint: {self.hint}"


@dataclasses.dataclass
class ExplainReport:
    function: str
    graphs: list
    breaks: list
    guards: object
    compile_time: dict

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
        return [sum(1 for n in gm.graph.nodes if n.op.startswith("call_")) for gm in self.graphs]

    def __str__(self):
        lines = [f"jitcore explain: {self.function}",
                 f"  graphs: {self.graph_count}   graph breaks: {self.graph_break_count}   "
                 f"ops: {sum(self.ops_per_graph)}   guards: {len(self.guards) if self.guards is not None else 0}",
                 "  compile time: " + ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in self.compile_time.items())]
        for i, (gm, ops) in enumerate(zip(self.graphs, self.ops_per_graph)):
            lines.append(f"  graph {i}: {ops} ops")
            lines.extend("    " + line for line in gm.code.strip().splitlines())
        for i, brk in enumerate(self.breaks):
            lines.append(f"  break {i}: {brk}")
        if self.guards is not None:
            lines.append("  guards:")
            lines.extend("    " + line for line in self.guards.pretty().splitlines())
        return "\n".join(lines)

    def __rich__(self):
        return str(self)


def _break_info(brk) -> BreakInfo:
    filename, lineno, line, _ = brk.location or ("", 0, "", "")
    return BreakInfo(brk.kind, brk.info.explanation + (f" ({brk.detail})" if brk.detail else ""),
                     filename, lineno, line or "", brk.info.hint)


def explain_call(fn, args: tuple, kwargs: dict) -> ExplainReport:
    code = fn.__code__
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as exc:
        from jitcore.errors import InvalidArgumentError
        raise InvalidArgumentError(f"explain(): these arguments do not fit {fn.__qualname__}: {exc}") from None
    bound.apply_defaults()
    values = {name: bound.arguments[name] for name in arg_names(code)}
    start = time.perf_counter()
    graphs, breaks, collected = [], [], []
    timings = {}
    try:
        captured = capture_frame(code, fn.__globals__, fn.__closure__, values, fn.__qualname__)
        timings["capture"] = captured.capture_seconds
        if captured.gm is not None:
            graphs.append(captured.gm)
        collected = captured.guards
        if captured.break_point is not None:
            breaks.append(_break_info(captured.break_point.reason))
    except GraphBreak as brk:
        timings["capture"] = time.perf_counter() - start
        breaks.append(_break_info(brk))
        collected = getattr(brk, "guards", [])
    tree = guards.GuardTree()
    tree.add_root(GlobalStateMatch())
    for source, check in collected:
        tree.add(source.path, check, source.user_name)
    return ExplainReport(fn.__qualname__, graphs, breaks, tree, timings)
