"""Generators traced lazily: a generator called inside the captured code is a GeneratorValue whose frame runs up
to each `yield` when its consumer asks for the next item (capture/values/generator.py). A generator that is the
captured frame itself is never traced (jit.compile refuses it).

`yield from` (3.12 bytecodes.c): GET_YIELD_FROM_ITER, then a SEND / YIELD_VALUE loop that passes each value sent
to the outer generator on to the sub-iterator, END_SEND keeping its return value; CLEANUP_THROW is the handler
of that YIELD_VALUE, where an exception thrown into the outer generator arrives (a StopIteration from the
sub-iterator's throw() ends the `yield from` with its value).
"""
from __future__ import annotations

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.opcodes.registry import opcode
from jitcore.capture.values import const
from jitcore.capture.values.builtins import _iter
from jitcore.capture.values.exception import ExceptionValue
from jitcore.capture.values.generator import GeneratorValue


@opcode("RETURN_GENERATOR", signature="-- sent")
def return_generator(state, inst):
    """Pushes the value the first next() sends (None), which the following POP_TOP drops."""
    if not state.is_generator:
        raise GraphBreak("generator", "a generator frame outside generator tracing")
    return const(None)


@opcode("YIELD_VALUE", signature="value -- sent")
def yield_value(state, inst, value):
    """Suspend the frame after this instruction; when resumed, the value sent (None for next()) replaces the
    placeholder pushed here (GeneratorValue.advance)."""
    if not state.is_generator:
        raise GraphBreak("generator", "yield outside generator tracing")
    state.yielded_value = value
    state.yielding = True
    return const(None)


@opcode("GET_YIELD_FROM_ITER", signature="iterable -- iterator")
def get_yield_from_iter(state, inst, iterable):
    """A generator is its own sub-iterator; anything else goes through iter()."""
    if isinstance(iterable, GeneratorValue):
        return iterable
    return _iter(state, iterable)


@opcode("SEND", signature="receiver, value -- receiver, result")
def send(state, inst, receiver, value):
    """receiver.send(value) (next() when value is None and receiver is not a generator); a return ends the
    `yield from`: jump to END_SEND with the return value."""
    if isinstance(receiver, GeneratorValue):
        yielded, result = receiver.advance(state, sent=value)
    elif value.constant() is None:
        item = receiver.next_item(state)
        yielded, result = item is not None, item if item is not None else const(None)
    else:
        yielded, result = True, receiver.call_method(state, "send", [value], {})
    if not yielded:
        state.jump(inst)
    return receiver, result


@opcode("END_SEND", signature="receiver, value -- value")
def end_send(state, inst, receiver, value):
    return value


@opcode("CLEANUP_THROW", signature="sub_iterator, last_sent, exc -- none, value")
def cleanup_throw(state, inst, sub_iterator, last_sent, exc):
    """A StopIteration ends the `yield from` with its value; anything else is re-raised as it is."""
    if isinstance(exc, ExceptionValue) and issubclass(exc.cls, StopIteration):
        if "value" in exc.attrs:
            return const(None), exc.attrs["value"]
        args = exc.args
        if args is None:
            raise GraphBreak("user_exception", "the value of a StopIteration raised by an operation")
        return const(None), args[0] if args else const(None)
    state.raise_traced(exc)
