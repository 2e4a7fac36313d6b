"""explain() reports as HTML: `fragment(markup)` for a notebook's `_repr_html_`, `page(report)` for `save_html`.

The markup is self-contained (one inline stylesheet scoped to `.jitcore-report`, no scripts, no external files)
and shows the same facts as the terminal view, with graphs, breaks and guards in collapsible sections. Each part
of a report has its own section function (report.explain's classes call the one that fits them).
Entry points: `fragment`, `page`, `report_section`, `graph_section`, `break_section`, `guards_section`.
"""
from __future__ import annotations

from html import escape

from jitcore.report.describe import readable, short_path

__all__ = ["fragment", "page", "report_section", "graph_section", "break_section", "guards_section"]

_STYLE = """
.jitcore-report { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; font-size: 14px; color: #1f2328;
  max-width: 1100px; line-height: 1.45; }
.jitcore-report h2 { font-size: 18px; margin: 0.4em 0; }
.jitcore-report h3 { font-size: 15px; margin: 0; display: inline; }
.jitcore-report table.summary { border-collapse: collapse; margin: 0.5em 0 1em; }
.jitcore-report table.summary td { padding: 2px 14px 2px 0; vertical-align: top; }
.jitcore-report table.summary td:first-child { color: #57606a; }
.jitcore-report details { border: 1px solid #d0d7de; border-radius: 6px; padding: 6px 10px; margin: 6px 0; }
.jitcore-report summary { cursor: pointer; }
.jitcore-report pre { background: #f6f8fa; padding: 8px 10px; border-radius: 4px; overflow-x: auto;
  font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; margin: 6px 0; }
.jitcore-report .mark { background: #fff3b0; font-weight: bold; display: inline-block; width: 100%; }
.jitcore-report .dim { color: #57606a; }
.jitcore-report .kind { font-family: ui-monospace, monospace; font-size: 12px; color: #57606a; }
.jitcore-report .graph summary h3 { color: #1a7f37; }
.jitcore-report .break summary h3 { color: #9a6700; }
.jitcore-report .error { color: #cf222e; }
.jitcore-report dl { display: grid; grid-template-columns: max-content auto; gap: 2px 12px; margin: 6px 0; }
.jitcore-report dt { color: #57606a; }
.jitcore-report dd { margin: 0; }
"""


def page(report) -> str:
    """A whole HTML document for one report."""
    title = escape(f"jitcore explain: {report.function}()")
    return (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n"
            f"</head>\n<body>\n{fragment(report_section(report))}\n</body>\n</html>\n")


def fragment(markup: str) -> str:
    """A report's (or one part's) markup as a <div> carrying its own stylesheet."""
    return f'<div class="jitcore-report">\n<style>{_STYLE}</style>\n{markup}\n</div>'


def report_section(report) -> str:
    where = f"{short_path(report.filename)}:{report.lineno}" if report.filename else ""
    rows = [("graphs", report.graph_count), ("graph breaks", report.graph_break_count), ("ops", report.op_count),
            ("guards", len(report.guards)), ("recompiles", len(report.recompiles)),
            ("compile time", report.compile_line),
            ("ran", f"once, {report.run_seconds * 1e3:.1f} ms with compiling (fresh compiled copy, eager backend)")]
    parts = [f"<h2>jitcore explain: <code>{escape(report.function)}()</code>"
             + (f' <span class="dim">{escape(where)}</span>' if where else "") + "</h2>"]
    if report.error is not None:
        parts.append(f'<p class="error">The call raised {escape(type(report.error).__name__)}: '
                     f"{escape(str(report.error))}; the report covers what ran before it.</p>")
    parts.append('<table class="summary">' + "".join(
        f"<tr><td>{escape(label)}</td><td>{escape(str(value))}</td></tr>" for label, value in rows) + "</table>")
    parts += [graph_section(graph) for graph in report.graphs]
    parts += [break_section(brk, index) for index, brk in enumerate(report.breaks)]
    if report.splits:
        parts.append(_list_section("split for DDP", report.splits))
    if report.recompiles:
        parts.append(_list_section("recompiles", report.recompiles))
    if report.fallbacks:
        parts.append(_list_section("fallbacks", report.fallbacks))
    parts.append(guards_section(report.guards))
    return "\n".join(parts)


def graph_section(graph, open_: bool = False) -> str:
    ops = f"{graph.op_count} op{'s' if graph.op_count != 1 else ''}"
    return (f'<details class="graph"{" open" if open_ else ""}><summary><h3>graph {graph.index}</h3> '
            f"{escape(graph.frame.label)} · {ops} "
            f'<span class="dim">{escape(graph.frame.where)}</span></summary>\n'
            + ("<dl>" + "".join(f"<dt>dynamic</dt><dd>{escape(line)}</dd>" for line in graph.dynamic_dims)
               + "</dl>\n" if graph.dynamic_dims else "")
            + f"<pre>{escape(graph.readable_code)}</pre></details>")


def break_section(brk, index: int, open_: bool = True) -> str:
    lines = []
    for lineno, text, marked in brk.lines or ([(brk.lineno, brk.source_line, True)] if brk.source_line else []):
        row = f"{'&gt;' if marked else ' '} {lineno:>4} │ {escape(text)}"
        lines.append(f'<span class="mark">{row}</span>' if marked else row)
    where = f"{brk.where} in {brk.function}()" if brk.function else brk.where
    facts = [("at", where), ("why", brk.reason), ("hint", brk.hint), ("then", brk.outcome)]
    return (f'<details class="break"{" open" if open_ else ""}><summary><h3>break {index}</h3> '
            f"{escape(brk.reason)} <span class=\"kind\">[{escape(brk.kind)}]</span></summary>\n"
            + (f"<pre>{chr(10).join(lines)}</pre>\n" if lines else "")
            + "<dl>" + "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in facts) + "</dl></details>")


def guards_section(guards, open_: bool = False) -> str:
    blocks = []
    for label, tree in guards.trees:
        blocks.append(f"<b>{escape(label)}</b>\n<pre>{escape(readable(tree.pretty()))}</pre>")
    count = len(guards.trees)
    return (f'<details class="guards"{" open" if open_ else ""}><summary><h3>guards</h3> {len(guards)} checks in '
            f"{count} entr{'y' if count == 1 else 'ies'}</summary>\n" + "\n".join(blocks) + "</details>")


def _list_section(title: str, items) -> str:
    return (f"<details open><summary><h3>{escape(title)}</h3> {len(items)}</summary><ul>"
            + "".join(f"<li>{escape(item)}</li>" for item in items) + "</ul></details>")
