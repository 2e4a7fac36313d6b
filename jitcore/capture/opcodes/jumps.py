"""Jumps and loops: unconditional jumps, conditional jumps on Python values, GET_ITER / FOR_ITER unrolling.

A condition's truth comes from its value; a tensor's truth is a graph break (tensor_branch).
"""
from __future__ import annotations

from jitcore.capture.opcodes.registry import opcode
from jitcore.capture.values import NOT_CONSTANT
from jitcore.capture.values.builtins import _iter


@opcode("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", signature="--")
def jump(state, inst):
    state.jump(inst)


@opcode("POP_JUMP_IF_TRUE", signature="cond --")
def pop_jump_if_true(state, inst, cond):
    if cond.truth(state):
        state.jump(inst)


@opcode("POP_JUMP_IF_FALSE", signature="cond --")
def pop_jump_if_false(state, inst, cond):
    if not cond.truth(state):
        state.jump(inst)


def _is_none(value) -> bool:
    c = value.constant()
    # a value that is not a constant is None only if its type says so; a value of unknown type (what the caller
    # handles, values/exception.py CallerExcInfo) breaks the graph here rather than be taken for not None
    return c is None if c is not NOT_CONSTANT else value.python_type() is type(None)


@opcode("POP_JUMP_IF_NONE", signature="value --")
def pop_jump_if_none(state, inst, value):
    if _is_none(value):
        state.jump(inst)


@opcode("POP_JUMP_IF_NOT_NONE", signature="value --")
def pop_jump_if_not_none(state, inst, value):
    if not _is_none(value):
        state.jump(inst)


@opcode("GET_ITER", signature="iterable -- iter")
def get_iter(state, inst, iterable):
    return _iter(state, iterable)


@opcode("FOR_ITER", signature="iterator -- iterator, next", jump="iterator --")
def for_iter(state, inst, iterator):
    """Exhausted: drop the iterator and jump past the END_FOR at the target (3.12 bytecodes.c FOR_ITER)."""
    item = iterator.next_item(state)
    if item is None:
        state.jump(inst)
        state.ip += 1
        return None
    return iterator, item
