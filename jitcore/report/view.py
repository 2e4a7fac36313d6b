"""explain() reports in a terminal: the summary, then each graph, break, recompile and fallback, then the guards.

Built from report.layout's blocks, so a report reads like the live console. Each part of a report is drawn by its
own function (report.explain's classes call the one that fits them); `plain_text(renderable)` lays one out without
colour, for str(). Entry points: `report_block`, `graph_block`, `break_block`, `guards_block`, `plain_text`.
"""
from __future__ import annotations

import io

from rich.console import Console, Group
from rich.text import Text

from jitcore.report.describe import readable, short_path
from jitcore.report.layout import CodeBlock, Rows, guard_tree, header, source_row

__all__ = ["report_block", "graph_block", "break_block", "guards_block", "plain_text", "summary_line"]

#: the width str(report) is laid out at
TEXT_WIDTH = 100


def plain_text(renderable, width: int = TEXT_WIDTH) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, color_system=None, force_terminal=False, highlight=False,
                      legacy_windows=False)
    console.print(renderable)
    return buffer.getvalue().rstrip("\n")


def summary_line(report) -> str:
    return (f"graphs: {report.graph_count}   graph breaks: {report.graph_break_count}   ops: {report.op_count}   "
            f"guards: {len(report.guards)}   recompiles: {len(report.recompiles)}")


def report_block(report) -> Group:
    where = f"{short_path(report.filename)}:{report.lineno}" if report.filename else ""
    items = [("", Text(summary_line(report), style="bold")),
             ("at", f"{report.function}() in {where}" if where else f"{report.function}()"),
             ("compile", report.compile_line),
             ("ran", f"once, {report.run_seconds * 1e3:.1f} ms with compiling (explain runs the call through a "
                     f"fresh compiled copy, eager backend)")]
    if report.error is not None:
        items.append(("error", f"the call raised {type(report.error).__name__}: {report.error}; the report covers "
                               f"what ran before it"))
    parts = [header("explain", f"{report.function}()", "cyan"), Rows(items, label_width=7)]
    parts += [graph_block(graph) for graph in report.graphs]
    parts += [break_block(brk, index) for index, brk in enumerate(report.breaks)]
    if report.splits:
        parts.append(header("split for DDP", str(len(report.splits)), "green"))
        parts.append(Rows([("", text) for text in report.splits]))
    if report.recompiles:
        parts.append(header("recompiles", str(len(report.recompiles)), "magenta"))
        parts.append(Rows([("", text) for text in report.recompiles]))
    if report.fallbacks:
        parts.append(header("fallbacks", str(len(report.fallbacks)), "red"))
        parts.append(Rows([("", text) for text in report.fallbacks]))
    parts.append(guards_block(report.guards))
    return Group(*parts)


def graph_block(graph) -> Group:
    ops = f"{graph.op_count} op{'s' if graph.op_count != 1 else ''}"
    rows = [("at", graph.frame.where)] + [("dynamic", line) for line in graph.dynamic_dims]
    return Group(header(f"graph {graph.index}", f"{graph.frame.label} · {ops}", "green"),
                 Rows(rows),
                 CodeBlock(graph.readable_code))


def break_block(brk, index: int) -> Group:
    items = [("at", f"{brk.where} in {brk.function}()" if brk.function else brk.where)]
    for lineno, text, marked in brk.lines:
        row = source_row(lineno, text, marked)
        items.append((">" if marked else "", row))
    if not brk.lines and brk.source_line:
        items.append((">", source_row(brk.lineno, brk.source_line)))
    items += [("why", brk.reason), ("hint", brk.hint), ("then", brk.outcome)]
    return Group(header(f"break {index}", f"in {brk.function}()" if brk.function else "", "yellow"), Rows(items))


def guards_block(guards) -> Group:
    parts = [header("guards", f"{len(guards)} checks in {len(guards.trees)} "
                              f"entr{'y' if len(guards.trees) == 1 else 'ies'}", "blue")]
    for label, tree in guards.trees:
        parts.append(guard_tree(tree, label, readable))
    return Group(*parts)
