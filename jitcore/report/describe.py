"""Words for users: jitcore's internal objects described in the user's own terms.

Owns the translation of resume functions to "f() from line 12", of carried stack slots to "stack slot 0", short
paths, source snippets and the concrete hint shown for each graph break (whose texts live in the break catalogue,
capture/breaks.py). Reads codegen.resume (where a resume function continues) and nothing from runtime. Entry
points: `frame_of`, `readable`, `short_path`, `snippet`, `reason_of`, `hint_for`, `break_location`, `graph_code`.
"""
from __future__ import annotations

import dataclasses
import linecache
import os
import textwrap

from jitcore.capture.code_cache import CodeCache
from jitcore.capture.interpreter import instructions_of
from jitcore.codegen.resume import resume_origin, resume_target

__all__ = ["Frame", "frame_of", "break_location", "break_key", "readable", "short_path", "snippet", "reason_of",
           "hint_for", "node_location", "graph_code", "in_loop_outcome"]

# Note [Internal names]: codegen.resume names a resume function `jitcore_resume_in_<f>_at_<line>` and its carried
# stack slots `___stack<i>`; guards and recompile reasons repeat those names. Users never see them: `frame_of`
# reads where a resume code continues from its offset map, and `readable` rewrites the names left in free text.
_RESUME_PREFIX = "jitcore_resume_in_"
_STACK_PREFIX = "___stack"


@dataclasses.dataclass(frozen=True)
class Frame:
    """A code object as the user knows it: the function, its file and def line, and for a resume function the
    line where it continues (`mid_line`: it starts after the break on that line, not at the line's start)."""
    function: str
    filename: str
    lineno: int
    resume_line: int | None = None
    mid_line: bool = False
    #: for a resume in the middle of a line, the source of the expression it continues after
    after: str = ""

    @property
    def label(self) -> str:
        if self.resume_line is None:
            return f"{self.function}()"
        if not self.mid_line:
            return f"{self.function}() from line {self.resume_line}"
        if self.after:
            return f"{self.function}() from line {self.resume_line}, after `{self.after}`"
        return f"{self.function}() from within line {self.resume_line}"

    @property
    def where(self) -> str:
        return f"{short_path(self.filename)}:{self.resume_line or self.lineno}"

    @property
    def is_resume(self) -> bool:
        return self.resume_line is not None


def frame_of(code) -> Frame:
    """The user's view of `code`: itself, or for a resume code the original function and where it continues."""
    original, offsets = resume_origin(code)
    if offsets is None:
        return Frame(code.co_qualname, code.co_filename, code.co_firstlineno)
    frame = Frame(original.co_qualname, original.co_filename, original.co_firstlineno)
    offset = resume_target(code)
    insts, index_of = instructions_of(original)
    index = index_of.get(offset)
    if index is None:
        return frame
    line = _lines(original, insts)[index]
    starts = insts[index].starts_line is not None
    previous = insts[index - 1] if index else None
    # only a call reads as "after `opt.zero_grad()`"; the source of any other instruction may be a fragment (the
    # format spec `.3f` of an f-string, a name) that says nothing on its own
    after = ("" if starts or previous is None or previous.opname != "CALL"
             else _source_of(original.co_filename, previous.positions))
    return dataclasses.replace(frame, resume_line=line, mid_line=not starts, after=after)


#: code -> the line each of its instructions (capture.interpreter.instructions_of) is on, so describing one of a
#: function's many resume functions costs no walk over the function
_LINES = CodeCache()


def _lines(code, insts) -> list:
    found = _LINES.get(code)
    if found is None:
        found, line = [], code.co_firstlineno
        for inst in insts:
            if inst.starts_line is not None:
                line = inst.starts_line
            found.append(line)
        _LINES[code] = found
    return found


def _source_of(filename: str, positions, limit: int = 32) -> str:
    """The source text an instruction covers (one line only), shortened to `limit` characters."""
    if positions is None or positions.lineno is None or positions.lineno != positions.end_lineno:
        return ""
    if positions.col_offset is None or positions.end_col_offset is None:
        return ""
    raw = linecache.getline(filename, positions.lineno).encode()  # columns count UTF-8 bytes
    text = raw[positions.col_offset:positions.end_col_offset].decode(errors="replace").strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def break_location(code, brk) -> tuple[str, int, str, str]:
    """(filename, line, source line, function) of a break in `code`, in the user's terms; never empty.

    A resume function that starts in the middle of a line reports the instructions before the next line start
    at its def line (the interpreter's line starts at co_firstlineno); those instructions are on the resume line.
    A break that was not located (raised before the first instruction ran) is where the function starts.
    """
    filename, lineno, line, function = brk.location or ("", 0, "", "")
    if code is None:
        return filename or "<unknown file>", lineno, line or "", function or "<unknown function>"
    frame = frame_of(code)
    if not filename:
        filename, lineno = frame.filename, frame.resume_line or frame.lineno
        return filename, lineno, linecache.getline(filename, lineno), frame.function
    if not function or function in (code.co_name, code.co_qualname):
        function = frame.function
        if frame.is_resume and lineno == frame.lineno and filename == frame.filename:
            lineno = frame.resume_line
            line = linecache.getline(filename, lineno)
    return filename, lineno, line or "", function


def break_key(code, brk) -> tuple:
    """What makes two reports the same break: its place in the user's code and its kind (a break met again from
    another resume function of the same function, or after a recompile, is the same break)."""
    filename, lineno, _, _ = break_location(code, brk)
    return ("break", filename, lineno, brk.kind)


def readable(text: str) -> str:
    """`text` with jitcore's internal names (Note [Internal names]) replaced by what they stand for."""
    text = _rewrite(text, _STACK_PREFIX, str.isdigit, lambda digits: f"stack slot {digits}")
    return _rewrite(text, _RESUME_PREFIX, lambda ch: ch.isalnum() or ch == "_", _resume_words)


def _resume_words(label: str) -> str | None:
    name, sep, line = label.rpartition("_at_")
    return f"{name}() at line {line}" if sep and name and line.isdigit() else None


def _rewrite(text: str, prefix: str, accepts, replace) -> str:
    """Replace each `prefix` + token (the longest run of characters `accepts` takes) by `replace(token)`."""
    out, position = [], 0
    while (found := text.find(prefix, position)) >= 0:
        end = found + len(prefix)
        while end < len(text) and accepts(text[end]):
            end += 1
        token = text[found + len(prefix):end]
        words = replace(token) if token else None
        if words is not None and text.startswith("()", end):
            end += 2  # "jitcore_resume_in_f_at_3()" reads "f() at line 3", not "f() at line 3()"
        out.append(text[position:found] + (words if words is not None else text[found:end]))
        position = end
    out.append(text[position:])
    return "".join(out)


def short_path(filename: str) -> str:
    """A path as short as it can be while staying unambiguous: relative to the working directory when inside it."""
    if not filename or filename.startswith("<"):
        return filename or "?"
    for marker in ("site-packages" + os.sep, "dist-packages" + os.sep):
        if marker in filename:
            return filename.rsplit(marker, 1)[1]  # torch/nn/modules/linear.py: the import path says it all
    try:
        relative = os.path.relpath(filename)
    except ValueError:
        return filename
    return relative if not relative.startswith("..") else filename


def snippet(filename: str, lineno: int, context: int = 2) -> list[tuple[int, str, bool]]:
    """(line number, text, is the given line) for the lines around `lineno`, common indentation removed."""
    if not filename or lineno <= 0:
        return []
    rows = []
    for number in range(max(1, lineno - context), lineno + context + 1):
        text = linecache.getline(filename, number)
        if not text and number > lineno:
            break
        rows.append((number, text.rstrip("\n").rstrip(), number == lineno))
    indents = [len(t) - len(t.lstrip()) for _, t, _ in rows if t.strip()]
    cut = min(indents) if indents else 0
    return [(n, t[cut:], mark) for n, t, mark in rows]


def in_loop_outcome(owner: str, where: str) -> str:
    """What became of a frame whose break lies inside a loop (Note [Breaks inside loops], capture/loop_breaks.py)."""
    return (f"graph break inside a loop at {where}: {owner} runs natively, the functions it calls are compiled "
            "(as torch.compile does)")


def reason_of(kind_info, detail: str) -> str:
    """The one-line reason of a break: the catalogue's explanation, with the instance's detail."""
    return kind_info.explanation + (f" ({readable(detail)})" if detail else "")


def node_location(node) -> tuple[str, int] | None:
    """(filename, line) of the user code an FX node came from (graph.py stores `file:line in function`)."""
    text = node.meta.get("stack_trace") if hasattr(node, "meta") else None
    if not isinstance(text, str):
        return None
    where, _, _ = text.rpartition(" in ")
    filename, _, line = (where or text).rpartition(":")
    return (filename, int(line)) if line.isdigit() else None


def _condition(source_line: str) -> str:
    """The condition of an `if`/`elif`/`while` line, for hints; '' when the line is something else."""
    text = source_line.strip()
    for keyword in ("if ", "elif ", "while "):
        if text.startswith(keyword) and text.endswith(":"):
            return text[len(keyword):-1].strip()
    return ""


def hint_for(brk, source_line: str, function: str) -> str:
    """A concrete hint for one break: its kind's hint from the catalogue (capture/breaks.py), in the variant the
    break chose where it was raised, else in the one its source line calls for, naming the user's function."""
    fields = {"where": f"{function}()" if function else "the compiled function"}
    variant = brk.hint
    fields.update(brk.hint_fields)
    line = source_line.strip()
    if not variant and brk.kind == "tensor_branch" and _condition(line):
        variant, fields["condition"] = "condition", _condition(line)
    if not variant and brk.kind == "data_dependent":
        call = next((call for call in (".item()", ".tolist()", ".numpy()") if call in line), None)
        if call is not None:
            variant, fields["call"] = "call", call
    return brk.info.hint_text(variant, **fields)


def graph_code(gm, filename: str = "", frame: Frame | None = None) -> str:
    """A graph's Python code for reading: shapes annotated (fx's print_readable), fx's `x = None` bookkeeping and
    class line dropped, and each run of ops headed by the user's source line it came from (for a resume
    function's frame, ops placed at its def line are on its resume line, as in `break_location`)."""
    try:
        text = gm.print_readable(print_output=False)
    except Exception:
        text = gm.code
    nodes = {node.name: node for node in gm.graph.nodes}
    lines, last = [], None
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith(("class ", "# No stacktrace", "# File:")):
            continue
        code, separator, rest = raw.partition(";  ")
        if separator and rest.strip().endswith("= None"):
            raw = code
        indent = raw[: len(raw) - len(raw.lstrip())]
        name = stripped.split(":", 1)[0].split("=", 1)[0].strip()
        where = node_location(nodes[name]) if name in nodes else None
        if where is not None and frame is not None and frame.is_resume and where == (frame.filename, frame.lineno):
            where = (frame.filename, frame.resume_line)
        if where is not None and where != last:
            file, line = where
            source = linecache.getline(file, line).strip()
            place = f"line {line}" if file == filename else f"{short_path(file)}:{line}"
            lines.append(f"{indent}# {place}: {source}" if source else f"{indent}# {place}")
            last = where
        lines.append(raw.rstrip())
    return textwrap.dedent("\n".join(lines))
