"""Builds a function's dispatch prologue with `bytecode`: the original body with a call in front.

The new code starts `r = DISPATCH(<params>, <closure cells or None>); if r is not FALLTHROUGH: return r`, then
runs the original body unchanged, so tracebacks, line numbers and inspect keep working. DISPATCH is a constant of
the code object (no globals lookup); falling through costs one call and one identity test. An exception leaving
the DISPATCH call goes through a handler at the end of the code that puts its traceback in the user's terms
(runtime/tracebacks.py) and re-raises it (Note [Tracebacks through compiled code]).
"""
from __future__ import annotations

import dis

import torch
from bytecode import Bytecode, Instr, Label, CellVar, FreeVar, TryBegin, TryEnd

from jitcore.capture.frame import arg_names
from jitcore.codegen.resume import restore_try_depths
from jitcore.runtime.tracebacks import note_prologue, user_traceback

__all__ = ["FALLTHROUGH", "build_prologue_code"]


class _Fallthrough:
    __slots__ = ()

    def __repr__(self):
        return "FALLTHROUGH"


#: what a dispatcher returns to make the prologue run the original body
FALLTHROUGH = _Fallthrough()


def build_prologue_code(code, dispatch):
    """`code` with the dispatch prologue placed after its RESUME (MAKE_CELL/COPY_FREE_VARS already ran there)."""
    new = _spliced(code, dispatch) if not code.co_cellvars and not code.co_freevars else None
    if new is None:
        new = _assembled(code, dispatch)
    _opaque_to_dynamo(new)
    note_prologue(new, code)
    return new


def _assembled(code, dispatch):
    bc = Bytecode.from_code(code)
    # Note [Resume pitfalls] (codegen/resume.py): `bytecode` cannot always recompute exception depths (it writes
    # 32768 where a code jumps into a try region); keep the depths the code already has
    restore_try_depths(bc, code)
    params = arg_names(code)
    cellvars = set(code.co_cellvars)
    out = []
    inserted = False
    for instr in bc:
        out.append(instr)
        if inserted or not isinstance(instr, Instr) or instr.name != "RESUME":
            continue
        line = code.co_firstlineno
        run_original = Label()
        handler = Label()
        guarded = TryBegin(handler, False, 0)
        prologue = [guarded, Instr("PUSH_NULL", lineno=line), Instr("LOAD_CONST", dispatch, lineno=line)]
        for name in params:
            # an argument captured by an inner function is already a cell here (MAKE_CELL precedes RESUME)
            prologue.append(Instr("LOAD_DEREF", CellVar(name), lineno=line) if name in cellvars
                            else Instr("LOAD_FAST", name, lineno=line))
        if code.co_freevars:
            prologue += [Instr("LOAD_CLOSURE", FreeVar(v), lineno=line) for v in code.co_freevars]
            prologue.append(Instr("BUILD_TUPLE", len(code.co_freevars), lineno=line))
        else:
            prologue.append(Instr("LOAD_CONST", None, lineno=line))
        prologue += [
            Instr("CALL", len(params) + 1, lineno=line),
            TryEnd(guarded),
            Instr("COPY", 1, lineno=line),
            Instr("LOAD_CONST", FALLTHROUGH, lineno=line),
            Instr("IS_OP", 0, lineno=line),
            Instr("POP_JUMP_IF_TRUE", run_original, lineno=line),
            Instr("RETURN_VALUE", lineno=line),
            run_original,
            Instr("POP_TOP", lineno=line),
        ]
        out.extend(prologue)
        inserted = True
    if not inserted:
        raise ValueError(f"{code.co_qualname} has no RESUME instruction")
    # the handler: user_traceback(exc), then RERAISE (which adds no traceback entry of its own)
    out += [handler, Instr("PUSH_NULL"), Instr("LOAD_CONST", user_traceback), Instr("COPY", 3), Instr("CALL", 1),
            Instr("POP_TOP"), Instr("RERAISE", 0)]
    bc.clear()
    bc.extend(out)
    return bc.to_code(stacksize=max(code.co_stacksize, len(params) + 3, 4), compute_exception_stack_depths=False)


def _opaque_to_dynamo(code) -> None:
    """Dynamo's frame hook never compiles a prologue's frame nor what it calls (a compiled copy called natively
    under torch.compile, after a graph break there, runs jitcore's own entries; Note [Nesting with
    torch.compile] in install.py). The switch lives in torch's C extension: torch._dynamo is not imported."""
    eval_frame = getattr(torch._C, "_dynamo", None)
    eval_frame = getattr(eval_frame, "eval_frame", None)
    try:
        action = eval_frame._FrameAction
        eval_frame.set_code_exec_strategy(code, eval_frame._FrameExecStrategy(action.SKIP, action.RUN_ONLY))
    except AttributeError:  # a torch without per-code strategies: nesting then works only through the marks
        pass


# Note [Spliced prologues]: a function with many graph breaks gets a resume function per break, each holding the
# rest of the function, so assembling each prologue with `bytecode` cost the rest's length again per break. A code
# without cells inserts the prologue's bytes after RESUME directly: 3.12's jumps are relative and the prologue
# jumps only over itself, so the body's bytes stay as they are; exception-table entries move by the prologue's
# length and the location table gets "no location" units for it.
_OP = dis.opmap
_CALL_CACHES = dis._inline_cache_entries[_OP["CALL"]]


def _spliced(code, dispatch):
    raw = code.co_code
    resume = next((i for i in range(0, len(raw), 2) if raw[i] == _OP["RESUME"]), None)
    if resume is None:
        return None
    consts = list(code.co_consts)
    d, none, fall, rewrite = len(consts), len(consts) + 1, len(consts) + 2, len(consts) + 3
    consts += [dispatch, None, FALLTHROUGH, user_traceback]
    params = arg_names(code)
    index = {name: i for i, name in enumerate(code.co_varnames)}
    units = [(_OP["PUSH_NULL"], 0), (_OP["LOAD_CONST"], d)]
    units += [(_OP["LOAD_FAST"], index[name]) for name in params]
    units += [(_OP["LOAD_CONST"], none), (_OP["CALL"], len(params) + 1)] + [(0, 0)] * _CALL_CACHES
    called = _assemble(units)  # the bytes an exception can leave from: they go to the handler
    units = [(_OP["COPY"], 1), (_OP["LOAD_CONST"], fall), (_OP["IS_OP"], 0), (_OP["POP_JUMP_IF_TRUE"], 1),
             (_OP["RETURN_VALUE"], 0), (_OP["POP_TOP"], 0)]
    prologue = called + _assemble(units)
    handler = _assemble([(_OP["PUSH_NULL"], 0), (_OP["LOAD_CONST"], rewrite), (_OP["COPY"], 3),
                         (_OP["CALL"], 1)] + [(0, 0)] * _CALL_CACHES + [(_OP["POP_TOP"], 0), (_OP["RERAISE"], 0)])
    at = resume + 2
    shift = len(prologue) // 2
    body = raw[:at] + bytes(prologue) + raw[at:]
    table = [(at, at + len(called), len(body), 0, False)]
    for entry in dis._parse_exception_table(code):
        moved = 0 if entry.start < at else shift * 2
        table.append((entry.start + moved, entry.end + moved, entry.target + moved, entry.depth, entry.lasti))
    table.sort()
    positions = list(code.co_positions())
    positions[at // 2:at // 2] = [(None, None, None, None)] * shift
    positions += [(None, None, None, None)] * (len(handler) // 2)
    return code.replace(co_code=body + bytes(handler), co_consts=tuple(consts),
                        co_stacksize=max(code.co_stacksize, len(params) + 3, 4),
                        co_exceptiontable=_exception_table(table),
                        co_linetable=_location_table(positions, code.co_firstlineno))


def _assemble(units) -> bytearray:
    """Code units (opcode, argument) as bytes, with EXTENDED_ARG prefixes where an argument needs them."""
    out = bytearray()
    for op, arg in units:
        for shift in (24, 16, 8):
            if arg >> shift:
                out += bytes((_OP["EXTENDED_ARG"], (arg >> shift) & 0xFF))
        out += bytes((op, arg & 0xFF))
    return out


def _varint(value: int, out: bytearray, first: int = 0) -> None:
    """The exception table's 6-bit big-endian varint (0x40: more follows); `first` marks an entry's start."""
    chunks = [value & 63]
    value >>= 6
    while value:
        chunks.append(value & 63)
        value >>= 6
    chunks.reverse()
    for i, chunk in enumerate(chunks):
        out.append(chunk | (64 if i < len(chunks) - 1 else 0) | (first if i == 0 else 0))


def _exception_table(entries) -> bytes:
    out = bytearray()
    for start, end, target, depth, lasti in entries:
        _varint(start // 2, out, 128)
        _varint((end - start) // 2, out)
        _varint(target // 2, out)
        _varint((depth << 1) | int(lasti), out)
    return bytes(out)


def _write_varint(value: int, out: bytearray) -> None:
    """The location table's little-endian varint (6 bits a byte, 0x40: more follows)."""
    while value >= 64:
        out.append((value & 63) | 64)
        value >>= 6
    out.append(value)


def _write_svarint(value: int, out: bytearray) -> None:
    _write_varint((-value << 1) | 1 if value < 0 else value << 1, out)


def _location_table(positions, first_line: int) -> bytes:
    """co_linetable (3.12) for one (line, end line, column, end column) per code unit, in long or no-location
    entries of at most 8 units."""
    out = bytearray()
    line = first_line
    i = 0
    while i < len(positions):
        pos = positions[i]
        n = 1
        while n < 8 and i + n < len(positions) and positions[i + n] == pos:
            n += 1
        start, end, col, end_col = pos
        if start is None:
            out.append(0x80 | (15 << 3) | (n - 1))
        elif col is None or end_col is None or end is None:
            out.append(0x80 | (13 << 3) | (n - 1))
            _write_svarint(start - line, out)
            line = start
        else:
            out.append(0x80 | (14 << 3) | (n - 1))
            _write_svarint(start - line, out)
            _write_varint(end - start, out)
            _write_varint(col + 1, out)
            _write_varint(end_col + 1, out)
            line = start
        i += n
    return bytes(out)
