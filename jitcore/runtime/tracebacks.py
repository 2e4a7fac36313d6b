"""Tracebacks in the user's terms: an exception that leaves compiled code shows the user's function and failing
line, as eager Python's traceback does, and none of jitcore's own frames.

A dispatch prologue (runtime/prologue.py) sends an exception raised by its DISPATCH call to a handler that calls
`user_traceback(exc)` and re-raises it. Reads codegen only: where a resume code continues (codegen.resume) and
what an entry's namespace says about its breaking instruction (codegen.transform.ENTRY_INFO).
Entry points: `user_traceback(exc)`, `note_prologue(prologue, code)`.
"""
from __future__ import annotations

import os
import types
import weakref

from jitcore.codegen.resume import resume_origin
from jitcore.codegen.transform import ENTRY_INFO

__all__ = ["user_traceback", "note_prologue"]

# Note [Tracebacks through compiled code]
# Eager Python raising at line 6 of f shows `f, line 6` and below it the frames of whatever line 6 called. The
# same call compiled goes f's prologue -> dispatcher -> FrameCache.miss -> the entry function -> the compiled graph
# or the breaking instruction -> a resume function's prologue -> ... The prologue's handler rewrites the traceback
# below its own frame, which Python put first when the exception reached it:
# - jitcore's frames are dropped: the generated dispatchers, entries and guards (`<jitcore ...>` files), the FX
#   graph's generated code (`<eval_with_key>`), and every frame of a jitcore module;
# - the prologue frame's line becomes the user's line it stood for: the graph node's source line when the graph
#   raised (fx's line map of the graph code names the node, whose stack_trace names the user's line), else the
#   breaking instruction's (the entry's namespace holds its positions, ENTRY_INFO);
# - when what follows is a resume (or step) function of the same function, the prologue frame itself goes: the
#   resume function *is* the user's frame continued (Note [Resume codes carry the user's names] in
#   codegen/resume.py), already rewritten by its own prologue; so does it when the function's own code ran
#   natively below it (a native entry, or its copy with the calls hooked: runtime/loop_native.py).
# The prologue re-raises with RERAISE, which adds no entry; the caller's frame adds its own as usual. Frames are
# real frames: a traceback entry gets the user's line by pointing its last instruction at an instruction of the
# prologue code that has that position (the body is the user's code, positions included); a resume stub's prologue
# has no body, so its entry points at an instruction without a position and is given the line. A failure here
# leaves the traceback as it was.

#: prologue code -> the code it runs after dispatching (the user's code, or a resume code)
_PROLOGUES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_JITCORE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def note_prologue(prologue, code) -> None:
    _PROLOGUES[prologue] = code


def user_traceback(exc: BaseException) -> None:
    """Rewrite `exc.__traceback__`, whose first entry is a prologue's frame (Note [Tracebacks through compiled
    code]). Never raises."""
    try:
        tb = exc.__traceback__
        if tb is not None and _function_code(tb.tb_frame.f_code) is not tb.tb_frame.f_code:
            exc.__traceback__ = _rewritten(tb)
    except Exception:
        pass


def _function_code(code):
    """The user's code that `code` runs: through prologues (to what they wrap) and resume or step codes (to what
    they continue; a step code may be made from a prologue code, whose dispatch call it then keeps)."""
    for _ in range(8):
        inner = _PROLOGUES.get(code)
        if inner is None:
            inner, offsets = resume_origin(code)
            if offsets is None:
                return code
        code = inner
    return code


def _rewritten(head):
    prologue = head.tb_frame.f_code
    function = _function_code(prologue)
    chunk, rest = [], head.tb_next
    while rest is not None and _internal(rest.tb_frame.f_code):
        chunk.append(rest)
        rest = rest.tb_next
    kept = []
    tb = rest
    while tb is not None:
        if not _internal(tb.tb_frame.f_code):
            kept.append(tb)
        tb = tb.tb_next
    tail = None
    for tb in reversed(kept):
        tail = _copy(tb, tail)
    if kept and _continues(kept[0].tb_frame.f_code, function, chunk):
        return tail
    where = _where(chunk)
    lasti = _user_instruction(prologue, where)
    if lasti is not None:
        return types.TracebackType(tail, head.tb_frame, lasti, _line_at(prologue, lasti))
    lasti = _unlocated_instruction(prologue) if where is not None else None
    if lasti is None:
        return _copy(head, tail)
    # a resume stub holds none of the user's instructions (Note [Resume functions are stubs]): the entry points at
    # one without a position and carries the line itself, which tracebacks show for such an instruction
    return types.TracebackType(tail, head.tb_frame, lasti, where[0])


def _copy(tb, tail):
    # tb_lineno is None at an instruction without a line (a prologue's); -1 has it computed again when read
    return types.TracebackType(tail, tb.tb_frame, tb.tb_lasti, tb.tb_lineno if tb.tb_lineno is not None else -1)


def _internal(code) -> bool:
    filename = code.co_filename
    return filename.startswith(("<jitcore ", "<eval_with_key>")) or filename.startswith(_JITCORE_DIR)


def _continues(code, function, chunk) -> bool:
    """The frame running `code` is the user's frame that the prologue's frame stands for: a resume or step code of
    the same function that the entry called to continue, or the same function's own code run natively (no entry
    ran). A call the breaking instruction made is another frame, even of the same function (recursion)."""
    if _function_code(code) is not function:
        return False
    entries = [tb for tb in chunk if tb.tb_frame.f_code.co_filename.startswith("<jitcore entry")]
    if not entries:
        return True
    return _entry_line(entries[-1]).lstrip().startswith(_CONTINUING)


#: how an entry's source calls what continues its frame (codegen/steps.py names them ___resume<k>, ___step<k>,
#: and hands them to a chain's driver, ___handover<k>: Note [Resume chains run in a loop])
_CONTINUING = ("return ___resume", "return ___step", "return ___handover")


def _entry_line(tb) -> str:
    info = tb.tb_frame.f_globals.get(ENTRY_INFO)
    if info is None:
        return ""
    lines = info[0]
    return lines[tb.tb_lineno - 1] if 0 < tb.tb_lineno <= len(lines) else ""


def _where(chunk) -> tuple | None:
    """The positions (line, end line, column, end column), or (line,) alone, of the user's code the dropped frames
    were running: the graph node that raised, else the breaking instruction of the entry."""
    where = None
    for tb in chunk:
        frame = tb.tb_frame
        if frame.f_code.co_filename.startswith("<eval_with_key>"):
            line = _graph_line(frame.f_locals.get("self"), tb.tb_lineno)
            if line is not None:
                return (line,)
        info = frame.f_globals.get(ENTRY_INFO) if frame.f_code.co_filename.startswith("<jitcore entry") else None
        if info is not None and info[1] is not None and "___graph(" not in _entry_line(tb):
            where = info[1]
    return where


def _graph_line(gm, lineno: int) -> int | None:
    """The user's line of the node the graph module's generated code was running at `lineno`."""
    line_map = getattr(gm, "_lineno_map", None)
    if not line_map:
        return None
    index = line_map.get(lineno - getattr(gm, "_prologue_start", 0))
    if index is None:
        return None
    node = list(gm.graph.nodes)[index]
    text = node.meta.get("stack_trace")
    if not isinstance(text, str):
        return None
    where = text.rpartition(" in ")[0] or text
    line = where.rpartition(":")[2]
    return int(line) if line.isdigit() else None


def _user_instruction(code, where) -> int | None:
    """The offset of an instruction of `code` at `where` (exact positions first, else the line's first)."""
    if where is None:
        return None
    first = None
    for index, positions in enumerate(code.co_positions()):
        if positions[0] is None:
            continue
        if len(where) > 1 and positions == where:
            return index * 2
        if first is None and positions[0] == where[0]:
            first = index * 2
    return first


def _unlocated_instruction(code) -> int | None:
    """The offset of an instruction of `code` that has no position, or None."""
    for index, positions in enumerate(code.co_positions()):
        if positions[0] is None:
            return index * 2
    return None


def _line_at(code, lasti: int) -> int:
    for index, positions in enumerate(code.co_positions()):
        if index * 2 == lasti:
            return positions[0] if positions[0] is not None else code.co_firstlineno
    return code.co_firstlineno
