"""The building blocks every jitcore block is laid out with: a titled rule, label/value rows, code, guard trees.

Rows and code wrap long values under themselves (a hanging indent) and never pad lines with trailing blanks, so the
output reads the same in an 80-column terminal, a 200-column one and a log file. Imports rich only.
Entry points: `header`, `Rows`, `CodeBlock`, `source_row`, `guard_tree`.
"""
from __future__ import annotations

from rich.cells import cell_len
from rich.rule import Rule
from rich.syntax import Syntax
from rich.text import Text

__all__ = ["header", "Rows", "CodeBlock", "source_row", "guard_tree", "GuardLines"]


def header(kind: str, subject: str = "", style: str = "yellow") -> Rule:
    """`jitcore · <kind>  <subject> ─────`: the rule that opens every block."""
    title = Text.assemble(("jitcore", "bold cyan"), " · ", (kind, f"bold {style}"))
    if subject:
        title.append(f"  {subject}", style="bold")
    return Rule(title, align="left", style="dim")


class Rows:
    """Label/value rows: labels right-aligned in one narrow dim column, values wrapped beneath themselves."""

    def __init__(self, items, indent: int = 1, label_width: int = 5):
        self.items = [(label, value if isinstance(value, Text) else Text(str(value))) for label, value in items]
        self.indent = indent
        self.label_width = label_width

    def __rich_console__(self, console, options):
        label_width = max([self.label_width if self.label_width else 0]
                          + [cell_len(label) for label, _ in self.items])
        lead = self.indent + label_width + (1 if label_width else 0)
        room = max(16, options.max_width - lead)
        for label, value in self.items:
            for index, line in enumerate(value.wrap(console, room, overflow="fold")):
                line.rstrip()
                prefix = label.rjust(label_width) if index == 0 else " " * label_width
                yield Text(" " * self.indent + prefix + (" " if label_width else ""), style="dim") + line

    def __rich_measure__(self, console, options):
        from rich.measure import Measurement
        return Measurement(1, options.max_width)


class CodeBlock:
    """Python source, highlighted, indented by `indent`; a long line continues four columns further in."""

    def __init__(self, code: str, indent: int = 2):
        self.code = code
        self.indent = indent

    def __rich_console__(self, console, options):
        highlighted = Syntax(self.code, "python", theme="ansi_dark").highlight(self.code)
        room = max(16, options.max_width - self.indent)
        for line in highlighted.split("\n"):
            line.rstrip()
            wrapped = line.wrap(console, room, overflow="fold") if line.plain else [Text("")]
            for index, part in enumerate(wrapped):
                if index:
                    part = Text(" " * 4) + part
                yield Text(" " * self.indent) + part


def source_row(lineno: int, line: str, marked: bool = True) -> Text:
    """`  12 │ text`, bold when it is the line in question."""
    text = Text()
    text.append(f"{lineno:>4} ", style="bold" if marked else "dim")
    text.append("│ ", style="dim")
    text.append(line, style="bold" if marked else "")
    return text


def guard_tree(tree, label: str = "", rename=lambda name: name) -> "GuardLines":
    """A guards.GuardTree in the user's names: one branch per access path that holds checks."""
    return GuardLines(tree, label, rename)


class GuardLines:
    """A guard tree drawn with ├── guides; a long line continues under its own text, past the guides."""

    def __init__(self, tree, label: str, rename, indent: int = 1):
        self.tree, self.label, self.rename, self.indent = tree, label, rename, indent

    def lines(self) -> list[tuple[str, Text]]:
        """(guide prefix, text) per node, depth first, in the order tree.pretty() prints them."""
        out: list = []
        top = ([self.tree.root] if self.tree.root.checks else []) + _visible(self.tree.root)
        self._entries(top, "", out)
        for check, _, user_name in self.tree.relations:
            # checks over several inputs (shape relations), after the per-input checks they rely on
            text = Text()
            text.append(self.rename(user_name), style="bold")
            text.append(": " + check.describe())
            out.append(("└── ", "    ", text))
        return out

    def _entries(self, nodes, guide: str, out) -> None:
        for position, node in enumerate(nodes):
            last = position == len(nodes) - 1
            text = Text()
            text.append(self.rename(node.user_name or "?"), style="bold")
            text.append(": " + ", ".join(check.describe() for check, _, _ in node.checks))
            out.append((guide + ("└── " if last else "├── "), guide + ("    " if last else "│   "), text))
            if node is not self.tree.root:
                self._entries(_visible(node), guide + ("    " if last else "│   "), out)

    def __rich_console__(self, console, options):
        pad = " " * self.indent
        if self.label:
            yield Text(pad + self.label, style="bold")
        for first, rest, text in self.lines():
            room = max(16, options.max_width - self.indent - cell_len(first))
            for index, part in enumerate(text.wrap(console, room, overflow="fold")):
                part.rstrip()
                yield Text(pad + (first if index == 0 else rest), style="dim") + part


def _visible(node) -> list:
    """The nearest descendants of `node` that hold checks (nodes without checks are folded, as tree.pretty())."""
    found = []
    for child in node.children.values():
        found += [child] if child.checks else _visible(child)
    return found
