"""Which locals a frame may still read: backward liveness over a code object's instructions.

`live_locals(code, offset)` -> the local names that some path from the instruction at `offset` reads before it
writes them. Paths follow fall-through, jumps and the 3.12 exception table (a handler reached from an instruction
is a path from it). A resume function receives only these names. Where unsure the analysis says live: any read of
a name counts (LOAD_FAST_AND_CLEAR saves a local that a later STORE_FAST puts back; DELETE_FAST fails on an unbound
one; cell and free variable loads), and a code that names a frame reader (`locals()`, `vars()`, `eval`, frame
objects) keeps every local live everywhere.
Also the control-flow facts the continuation needs: `falls_through(inst)`, `JUMPS`.
"""
from __future__ import annotations

import dis

from jitcore.capture.code_cache import CodeCache

__all__ = ["live_locals", "falls_through", "JUMPS"]

#: opcodes whose argval is a jump target (relative in 3.12; the absolute list is empty there)
JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)

_READS = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "DELETE_FAST", "LOAD_CLOSURE",
                    "LOAD_DEREF", "MAKE_CELL", "DELETE_DEREF", "LOAD_FROM_DICT_OR_DEREF"})
_WRITES = frozenset({"STORE_FAST", "DELETE_FAST"})
_NO_FALL_THROUGH = frozenset({"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "RETURN_VALUE",
                              "RETURN_CONST", "RAISE_VARARGS", "RERAISE"})
#: names through which code can read its own frame's locals without a LOAD_FAST
_FRAME_READERS = frozenset({"locals", "vars", "dir", "eval", "exec", "_getframe", "currentframe", "f_locals"})

#: code -> {offset: frozenset of live names}
_LIVE = CodeCache()


def falls_through(inst) -> bool:
    """Whether control can continue at the next instruction after `inst` runs without raising."""
    return inst.opname not in _NO_FALL_THROUGH


def live_locals(code, offset: int) -> frozenset:
    """The locals some path from `offset` reads before writing them (every local, for an offset dis does not
    list as an instruction start)."""
    table = _LIVE.get(code)
    if table is None:
        table = _LIVE[code] = _analyse(code)
    found = table.get(offset)
    return found if found is not None else frozenset(code.co_varnames)


def _analyse(code) -> dict:
    insts = list(dis.get_instructions(code))
    if _FRAME_READERS & set(code.co_names):
        every = frozenset(code.co_varnames)
        return {inst.offset: every for inst in insts}
    index_of = {inst.offset: index for index, inst in enumerate(insts)}
    handlers = dis._parse_exception_table(code)
    successors = []
    for index, inst in enumerate(insts):
        found = []
        if falls_through(inst) and index + 1 < len(insts):
            found.append(index + 1)
        if inst.opcode in JUMPS and inst.argval in index_of:
            found.append(index_of[inst.argval])
        found += [index_of[e.target] for e in handlers if e.start <= inst.offset < e.end and e.target in index_of]
        successors.append(found)
    reads = [frozenset({inst.argval}) if inst.opname in _READS else frozenset() for inst in insts]
    writes = [frozenset({inst.argval}) if inst.opname in _WRITES else frozenset() for inst in insts]
    live = [frozenset()] * len(insts)
    changed = True
    while changed:
        changed = False
        for index in reversed(range(len(insts))):
            after = frozenset().union(*(live[s] for s in successors[index]))
            now = reads[index] | (after - writes[index])
            if now != live[index]:
                live[index] = now
                changed = True
    return {inst.offset: live[index] for index, inst in enumerate(insts)}
