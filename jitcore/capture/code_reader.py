"""Reads a code object's instructions from its bytes, as `dis.get_instructions(code)` gives them, at a fraction of
its cost: capture reads every code object it enters once per `jit.reset()`, and `dis` spends most of its time per
instruction on generator steps, table searches in lists and `_deoptop` name lookups. Here every opcode's facts
come from one table made at import (from dis's own tables), and the bytes are walked in two plain loops.
Reads `co_code` only; writes nothing (codegen assembles with the `bytecode` library). Imports nothing of jitcore.
Entry point: `read_instructions(code)` -> a list of `dis.Instruction`, equal to dis's (tests/capture/test_code_reader.py).
"""
from __future__ import annotations

import dis

__all__ = ["read_instructions"]

# how an opcode's argument becomes argval/argrepr: the branches of dis._get_instructions_bytes, in its order
(_PLAIN, _CONST, _NAME, _GLOBAL, _ATTR, _SUPER_ATTR, _JABS, _JREL, _JREL_BACK, _LOCAL, _COMPARE, _FORMAT,
 _MAKE_FUNCTION, _BINARY_OP, _INTRINSIC_1, _INTRINSIC_2) = range(16)


def _kind(deop: int) -> int:
    if deop in dis.hasconst:
        return _CONST
    if deop in dis.hasname:
        return {dis.opmap["LOAD_GLOBAL"]: _GLOBAL, dis.opmap["LOAD_ATTR"]: _ATTR,
                dis.opmap["LOAD_SUPER_ATTR"]: _SUPER_ATTR}.get(deop, _NAME)
    if deop in dis.hasjabs:
        return _JABS
    if deop in dis.hasjrel:
        return _JREL_BACK if "JUMP_BACKWARD" in dis.opname[deop] else _JREL
    if deop in dis.haslocal or deop in dis.hasfree:
        return _LOCAL
    if deop in dis.hascompare:
        return _COMPARE
    return {dis.opmap["FORMAT_VALUE"]: _FORMAT, dis.opmap["MAKE_FUNCTION"]: _MAKE_FUNCTION,
            dis.opmap["BINARY_OP"]: _BINARY_OP, dis.opmap["CALL_INTRINSIC_1"]: _INTRINSIC_1,
            dis.opmap["CALL_INTRINSIC_2"]: _INTRINSIC_2}.get(deop, _PLAIN)


def _opcode_table() -> list:
    """Per opcode byte: (name, inline cache entries, takes an argument, argument kind), after dis's deopt map
    (specialized and instrumented forms read as their base instruction, as dis reads them)."""
    table = []
    for op in range(256):
        deop = dis._deoptop(op)
        table.append((dis._all_opname[op], dis._inline_cache_entries[deop], deop in _HAS_ARG, _kind(deop)))
    return table


_HAS_ARG = frozenset(dis.hasarg)
_TABLE = _opcode_table()
_EXTENDED_ARG = dis.opmap["EXTENDED_ARG"]
_INT_OVERFLOW = 2 ** 31  # dis._INT_OVERFLOW: the oparg is a signed C int
_new = tuple.__new__
_Instruction = dis.Instruction
_Positions = dis.Positions


def _decode(raw: bytes) -> list:
    """(offset, op, arg) of each instruction, inline caches skipped (dis._unpack_opargs)."""
    found = []
    extended = 0
    offset = 0
    end = len(raw)
    while offset < end:
        op = raw[offset]
        _, caches, has_arg, _ = _TABLE[op]
        if has_arg:
            arg = raw[offset + 1] | extended
            extended = (arg << 8) if op == _EXTENDED_ARG else 0
            if extended >= _INT_OVERFLOW:
                extended -= 2 * _INT_OVERFLOW
        else:
            arg = None
            extended = 0
        found.append((offset, op, arg))
        offset += 2 + 2 * caches
    return found


def _jump_target(kind: int, offset: int, arg: int, caches: int) -> int:
    if kind == _JABS:
        return arg * 2
    return offset + 2 + (-arg if kind == _JREL_BACK else arg) * 2 + 2 * caches


def read_instructions(code) -> list:
    """Every instruction of `code` (CACHE entries left out), each a `dis.Instruction` equal to the one
    `dis.get_instructions(code)` yields."""
    decoded = _decode(code.co_code)
    labels = set()
    for offset, op, arg in decoded:
        if arg is not None:
            _, caches, _, kind = _TABLE[op]
            if kind == _JABS or kind == _JREL or kind == _JREL_BACK:
                labels.add(_jump_target(kind, offset, arg, caches))
    linestarts = dict(dis.findlinestarts(code))
    # one entry per code unit, caches included (dis steps the same iterator past them)
    positions = list(code.co_positions())
    names, consts, varname = code.co_names, code.co_consts, code._varname_from_oparg
    out = []
    for offset, op, arg in decoded:
        name, caches, _, kind = _TABLE[op]
        argval, argrepr = arg, ""
        if arg is None or kind == _PLAIN:
            pass
        elif kind == _CONST:
            argval = consts[arg]
            argrepr = repr(argval)
        elif kind == _NAME:
            argval = argrepr = names[arg]
        elif kind == _GLOBAL:
            argval = argrepr = names[arg // 2]
            if arg & 1 and argrepr:
                argrepr = "NULL + " + argrepr
        elif kind == _ATTR or kind == _SUPER_ATTR:
            argval = argrepr = names[arg // 2 if kind == _ATTR else arg // 4]
            if arg & 1 and argrepr:
                argrepr = "NULL|self + " + argrepr
        elif kind == _JABS or kind == _JREL or kind == _JREL_BACK:
            argval = _jump_target(kind, offset, arg, caches)
            argrepr = "to " + repr(argval)
        elif kind == _LOCAL:
            argval = argrepr = varname(arg)
        elif kind == _COMPARE:
            argval = argrepr = dis.cmp_op[arg >> 4]
        else:
            argval, argrepr = _special(kind, arg)
        out.append(_new(_Instruction, (name, op, arg, argval, argrepr, offset, linestarts.get(offset),
                                       offset in labels, _new(_Positions, positions[offset // 2]))))
    return out


def _special(kind: int, arg: int) -> tuple:
    """argval and argrepr of the rarer argument kinds, worded as dis words them."""
    if kind == _FORMAT:
        conversion, argrepr = dis.FORMAT_VALUE_CONVERTERS[arg & 0x3]
        argval = (conversion, bool(arg & 0x4))
        if argval[1]:
            argrepr = (argrepr + ", " if argrepr else "") + "with format"
        return argval, argrepr
    if kind == _MAKE_FUNCTION:
        return arg, ", ".join(s for i, s in enumerate(dis.MAKE_FUNCTION_FLAGS) if arg & (1 << i))
    if kind == _BINARY_OP:
        return arg, dis._nb_ops[arg][1]
    if kind == _INTRINSIC_1:
        return arg, dis._intrinsic_1_descs[arg]
    return arg, dis._intrinsic_2_descs[arg]

