"""Stack shuffles, no-ops and returns: RESUME, NOP, POP_TOP, PUSH_NULL, COPY, SWAP, END_FOR, RETURN_*."""
from __future__ import annotations

from jitcore.capture.opcodes.registry import opcode
from jitcore.capture.values import NULL, const


@opcode("RESUME", "NOP", "EXTENDED_ARG", signature="--")
def no_effect(state, inst):
    """Nothing to model: RESUME only matters to CPython's eval breaker; dis already folds EXTENDED_ARG into the next
    instruction's argument."""


@opcode("POP_TOP", signature="value --")
def pop_top(state, inst, value):
    pass


@opcode("PUSH_NULL", signature="-- null")
def push_null(state, inst):
    return NULL


@opcode("COPY", signature="bottom, unused[oparg-1] -- bottom, unused[oparg-1], top")
def copy(state, inst, bottom, unused):
    return (bottom, *unused, bottom)


@opcode("SWAP", signature="bottom, unused[oparg-2], top -- top, unused[oparg-2], bottom")
def swap(state, inst, bottom, unused, top):
    return (top, *unused, bottom)


@opcode("END_FOR", signature="second, value --")
def end_for(state, inst, second, value):
    """Reached only by falling through; an exhausted FOR_ITER jumps past it (3.12 bytecodes.c FOR_ITER)."""


@opcode("RETURN_VALUE", signature="retval --")
def return_value(state, inst, retval):
    state.do_return(retval)


@opcode("RETURN_CONST", signature="--")
def return_const(state, inst):
    state.do_return(const(inst.argval))
