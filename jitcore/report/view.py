"""explain() reports in a terminal: the summary, then each graph, break, recompile and fallback, then the guards.

Built from report.layout's blocks, so a report reads like the live console. `render(obj)` takes a report or one of
its parts (report.graphs[i], report.breaks[i], report.guards); `plain_text(obj)` is the same without colour, for
str(). Entry points: `render`, `plain_text`.
"""
from __future__ import annotations

import io

from rich.console import Group
from rich.text import Text

from jitcore.report.describe import readable, short_path
from jitcore.report.layout import CodeBlock, Rows, guard_tree, header, source_row

__all__ = ["render", "plain_text", "summary_line", "phase_line"]

#: the width str(report) is laid out at
TEXT_WIDTH = 100


def render(obj):
    from jitcore.report.explain import BreakInfo, ExplainReport, GraphInfo, GuardsInfo
    if isinstance(obj, ExplainReport):
        return _report(obj)
    if isinstance(obj, GraphInfo):
        return _graph(obj)
    if isinstance(obj, BreakInfo):
        return _break(obj, 0)
    if isinstance(obj, GuardsInfo):
        return _guards(obj)
    raise TypeError(f"no terminal view for {type(obj).__name__}")


def plain_text(obj, width: int = TEXT_WIDTH) -> str:
    from rich.console import Console
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, color_system=None, force_terminal=False, highlight=False,
                      legacy_windows=False)
    console.print(render(obj))
    return buffer.getvalue().rstrip("\n")


def summary_line(report) -> str:
    return (f"graphs: {report.graph_count}   graph breaks: {report.graph_break_count}   ops: {report.op_count}   "
            f"guards: {len(report.guards)}   recompiles: {len(report.recompiles)}")


def phase_line(report) -> str:
    phases = " · ".join(f"{phase} {seconds * 1e3:.1f} ms" for phase, seconds in report.compile_time.items())
    return f"{report.compile_seconds * 1e3:.1f} ms ({phases})"


def _report(report) -> Group:
    where = f"{short_path(report.filename)}:{report.lineno}" if report.filename else ""
    items = [("", Text(summary_line(report), style="bold")),
             ("at", f"{report.function}() in {where}" if where else f"{report.function}()"),
             ("compile", phase_line(report)),
             ("ran", f"once, {report.run_seconds * 1e3:.1f} ms with compiling (explain runs the call through a "
                     f"fresh compiled copy, eager backend)")]
    if report.error is not None:
        items.append(("error", f"the call raised {type(report.error).__name__}: {report.error}; the report covers "
                               f"what ran before it"))
    parts = [header("explain", f"{report.function}()", "cyan"), Rows(items, label_width=7)]
    parts += [_graph(graph) for graph in report.graphs]
    parts += [_break(brk, index) for index, brk in enumerate(report.breaks)]
    if report.recompiles:
        parts.append(header("recompiles", str(len(report.recompiles)), "magenta"))
        parts.append(Rows([("", text) for text in report.recompiles]))
    if report.fallbacks:
        parts.append(header("fallbacks", str(len(report.fallbacks)), "red"))
        parts.append(Rows([("", text) for text in report.fallbacks]))
    parts.append(_guards(report.guards))
    return Group(*parts)


def _graph(graph) -> Group:
    ops = f"{graph.op_count} op{'s' if graph.op_count != 1 else ''}"
    return Group(header(f"graph {graph.index}", f"{graph.frame.label} · {ops}", "green"),
                 Rows([("at", graph.frame.where)]),
                 CodeBlock(graph.readable_code))


def _break(brk, index: int) -> Group:
    items = [("at", f"{brk.where} in {brk.function}()" if brk.function else brk.where)]
    for lineno, text, marked in brk.lines:
        row = source_row(lineno, text, marked)
        items.append((">" if marked else "", row))
    if not brk.lines and brk.source_line:
        items.append((">", source_row(brk.lineno, brk.source_line)))
    items += [("why", brk.reason), ("hint", brk.hint), ("then", brk.outcome)]
    return Group(header(f"break {index}", f"in {brk.function}()" if brk.function else "", "yellow"), Rows(items))


def _guards(guards) -> Group:
    parts = [header("guards", f"{len(guards)} checks in {len(guards.trees)} "
                              f"entr{'y' if len(guards.trees) == 1 else 'ies'}", "blue")]
    for label, tree in guards.trees:
        parts.append(guard_tree(tree, label, readable))
    return Group(*parts)
