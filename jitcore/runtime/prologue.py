"""Builds a function's dispatch prologue with `bytecode`: the original body with a call in front.

The new code starts `r = DISPATCH(<params>, <closure cells or None>); if r is not FALLTHROUGH: return r`, then
runs the original body unchanged, so tracebacks, line numbers and inspect keep working. DISPATCH is a constant of
the code object (no globals lookup); falling through costs one call and one identity test.
"""
from __future__ import annotations

import dis

import torch
from bytecode import Bytecode, Instr, Label, CellVar, FreeVar, TryBegin

from jitcore.capture.frame import arg_names

__all__ = ["FALLTHROUGH", "build_prologue_code"]


class _Fallthrough:
    __slots__ = ()

    def __repr__(self):
        return "FALLTHROUGH"


#: what a dispatcher returns to make the prologue run the original body
FALLTHROUGH = _Fallthrough()


def build_prologue_code(code, dispatch):
    """`code` with the dispatch prologue placed after its RESUME (MAKE_CELL/COPY_FREE_VARS already ran there)."""
    bc = Bytecode.from_code(code)
    # Note [Resume pitfalls] (codegen/resume.py): a resume function's prologue jumps into try regions, where
    # `bytecode` cannot recompute exception depths (it writes 32768); keep the depths the code already has
    tries = [x for x in bc if isinstance(x, TryBegin)]
    table = sorted(dis._parse_exception_table(code), key=lambda e: e.start)
    if len(tries) != len(table):
        raise ValueError(f"exception table of {code.co_qualname} does not match its try blocks")
    for begin, entry in zip(tries, table):
        begin.stack_depth = entry.depth
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
        prologue = [Instr("PUSH_NULL", lineno=line), Instr("LOAD_CONST", dispatch, lineno=line)]
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
    bc.clear()
    bc.extend(out)
    new = bc.to_code(stacksize=max(code.co_stacksize, len(params) + 3), compute_exception_stack_depths=False)
    _opaque_to_dynamo(new)
    return new


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
