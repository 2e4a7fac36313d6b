"""Generators traced lazily: a generator called inside the captured code is a GeneratorValue whose frame runs up
to each `yield` when its consumer asks for the next item (capture/values/generator.py). A generator that is the
captured frame itself is never traced (jit.compile refuses it).
"""
from __future__ import annotations

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.opcodes.registry import opcode
from jitcore.capture.values import const


@opcode("RETURN_GENERATOR", signature="-- sent")
def return_generator(state, inst):
    """Pushes the value the first next() sends (None), which the following POP_TOP drops."""
    if not state.is_generator:
        raise GraphBreak("generator", "a generator frame outside generator tracing")
    return const(None)


@opcode("YIELD_VALUE", signature="value -- sent")
def yield_value(state, inst, value):
    """Suspend the frame after this instruction; when resumed, the value sent by next() (None) is on the stack."""
    if not state.is_generator:
        raise GraphBreak("generator", "yield outside generator tracing")
    state.yielded_value = value
    state.yielding = True
    return const(None)
