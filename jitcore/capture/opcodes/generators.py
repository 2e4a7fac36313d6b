"""Generators traced eagerly: a generator called inside the captured code runs to completion at capture time and
its yielded values become the items of an iterator (generator expressions fed to sum/any/tuple, helper
generators). A generator that is the captured frame itself is never traced (jit.compile refuses it).
"""
from __future__ import annotations

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.opcodes.registry import opcode
from jitcore.capture.values import const

#: a generator yielding more than this while tracing is treated as unbounded
MAX_YIELDS = 10_000


@opcode("RETURN_GENERATOR", signature="--", edits_stack=True)
def return_generator(state, inst):
    """Pushes the value the first next() sends (None), which the following POP_TOP drops."""
    if state.yielded is None:
        raise GraphBreak("generator", "a generator frame outside eager generator tracing")
    state.stack.append(const(None))


@opcode("YIELD_VALUE", signature="value -- sent")
def yield_value(state, inst, value):
    if state.yielded is None:
        raise GraphBreak("generator", "yield outside eager generator tracing")
    if len(state.yielded) >= MAX_YIELDS:
        raise GraphBreak("generator", f"a generator yielded more than {MAX_YIELDS} values while tracing")
    state.yielded.append(value)
    return const(None)
