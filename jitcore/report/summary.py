"""What jitcore did in this process, as one table: `python -m jitcore run` prints it at exit, and so does a
JITCORE=1 run whose JITCORE_LOG names graphs.

Reads the caches it is given (jitcore.autoenable passes every live one except explain()'s own) and the console's
log of fallbacks, and groups resume functions under the function they continue.
Entry points: `collect(caches)` -> `Summary`, `render(summary)`, `print_summary(summary, console=None)`.
"""
from __future__ import annotations

import dataclasses

from rich.console import Group
from rich.padding import Padding
from rich.text import Text
from rich.table import Table
from rich import box

from jitcore.report.console import EVENTS, MAX_WIDTH, get_console
from jitcore.report.describe import break_key, break_location, frame_of, reason_of, short_path
from jitcore.report.layout import Rows, header

__all__ = ["Summary", "FunctionRow", "collect", "render", "print_summary"]


@dataclasses.dataclass
class FunctionRow:
    function: str
    where: str
    graphs: int = 0
    ops: int = 0
    native_entries: int = 0
    breaks: int = 0
    recompiles: int = 0
    compile_seconds: float = 0.0


@dataclasses.dataclass
class Summary:
    rows: list
    #: (file:line, function, reason) of each distinct break
    breaks: list
    fallbacks: int

    @property
    def functions_compiled(self) -> int:
        """Rows with at least one graph; every other row ran in Python only (breaks, fallbacks, the limit)."""
        return sum(1 for row in self.rows if row.graphs)

    @property
    def functions_native(self) -> int:
        return len(self.rows) - self.functions_compiled

    @property
    def graphs(self) -> int:
        return sum(row.graphs for row in self.rows)

    @property
    def recompiles(self) -> int:
        return sum(row.recompiles for row in self.rows)

    @property
    def compile_seconds(self) -> float:
        return sum(row.compile_seconds for row in self.rows)

    def headline(self) -> str:
        """Every count is a sum of the table's rows: functions = rows (with graphs + Python only), graphs, breaks
        and recompiles = the columns' totals, seconds = the time column's total."""
        functions = f"{len(self.rows)} function{'s' if len(self.rows) != 1 else ''}"
        if self.functions_native:
            functions += f" ({self.functions_compiled} compiled, {self.functions_native} in Python only)"
        else:
            functions += " compiled"
        return (f"{functions} · "
                f"{self.graphs} graph{'s' if self.graphs != 1 else ''} · {len(self.breaks)} "
                f"break{'s' if len(self.breaks) != 1 else ''} · {self.recompiles} "
                f"recompile{'s' if self.recompiles != 1 else ''} · {self.compile_seconds:.2f} s compiling")


def collect(caches) -> Summary:
    """The summary of these caches (runtime FrameCaches: `.code`, `.entries`) and of the fallbacks logged so far."""
    rows: dict = {}
    breaks: dict = {}
    for cache in sorted(caches, key=lambda c: (c.code.co_filename, c.code.co_firstlineno, c.code.co_name)):
        if not cache.entries:
            continue
        frame = frame_of(cache.code)
        key = (frame.filename, frame.lineno, frame.function)
        row = rows.get(key)
        if row is None:
            row = rows[key] = FunctionRow(f"{frame.function}()", f"{short_path(frame.filename)}:{frame.lineno}")
        row.recompiles += len(cache.entries) - 1
        for entry in cache.entries:
            row.compile_seconds += sum(entry.compile_seconds.values())
            if entry.native:
                row.native_entries += 1
            elif entry.gm is not None:
                row.graphs += 1
                row.ops += entry.op_count
            brk = entry.break_reason
            if brk is not None and break_key(cache.code, brk) not in breaks:
                filename, lineno, _, function = break_location(cache.code, brk)
                breaks[break_key(cache.code, brk)] = (f"{short_path(filename)}:{lineno}", f"{function}()",
                                                      reason_of(brk.info, brk.detail))
                row.breaks += 1
    fallbacks = sum(1 for topic, _ in EVENTS if topic == "fallbacks")
    return Summary(list(rows.values()), list(breaks.values()), fallbacks)


def render(summary: Summary):
    parts = [header("summary", "what jitcore compiled in this process", "cyan"),
             Rows([("", summary.headline())], label_width=0)]
    if not summary.rows:
        parts.append(Rows([("", "nothing was compiled: no function of yours was called with tensors or modules")]))
        return Group(*parts)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, header_style="bold", padding=(0, 1))
    # the name and its file:line on two lines: side by side, a narrow console folded both mid-word
    table.add_column("function", overflow="fold", min_width=20)
    for column in ("graphs", "ops", "native", "breaks", "recompiles", "compile"):
        table.add_column(column, justify="right", no_wrap=True)
    for row in sorted(summary.rows, key=lambda r: -r.compile_seconds):
        name = Text(row.function, style="bold")
        name.append(f"\n{row.where}", style="dim")
        table.add_row(name, str(row.graphs), str(row.ops), str(row.native_entries), str(row.breaks),
                      str(row.recompiles), f"{row.compile_seconds * 1e3:.0f} ms")
    parts.append(Padding(table, (0, 0, 0, 1)))
    if summary.breaks:
        parts.append(Rows([("break" if i == 0 else "", f"{where} in {function}: {reason}")
                           for i, (where, function, reason) in enumerate(summary.breaks)]))
    native = sum(row.native_entries for row in summary.rows)
    if native:
        parts.append(Rows([("note", f"native: variants that run in Python (no graph), after a break that cannot "
                                    f"resume, a fallback or the cache limit ({native} in all); compile: time spent "
                                    f"capturing and compiling, theirs included")]))
    if summary.fallbacks:
        parts.append(Rows([("note", f"{summary.fallbacks} fallback(s) after internal errors were reported above")]))
    return Group(*parts)


_printed = False


def print_summary(summary: Summary, console=None) -> Summary:
    """Print the summary (once per process unless a console is given) and return it."""
    global _printed
    if console is None:
        if _printed:
            return summary
        _printed = True
        console = get_console()
    console.print(render(summary), width=min(console.width, MAX_WIDTH))
    return summary
