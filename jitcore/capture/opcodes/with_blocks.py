"""with-blocks: BEFORE_WITH enters a context manager; the normal exit is an ordinary CALL of the pushed __exit__.

An exception raised in the body unwinds (by the exception table) to the block's handler, where WITH_EXCEPT_START
calls `__exit__(type, value, traceback)`; a true result swallows the exception (POP_JUMP_IF_TRUE past the
RERAISE), as CPython's compiler lays it out. The traceback is a TracebackValue: passed on and stored, never read.
"""
from __future__ import annotations

from jitcore.capture.opcodes.registry import opcode
from jitcore.capture.values.exception import ExceptionValue, TracebackValue
from jitcore.capture.values.objects import ClassValue


@opcode("BEFORE_WITH", signature="mgr -- exit, res")
def before_with(state, inst, mgr):
    return mgr.enter(state)


@opcode("WITH_EXCEPT_START", signature="exit_func, lasti, prev_exc, val -- exit_func, lasti, prev_exc, val, res")
def with_except_start(state, inst, exit_func, lasti, prev_exc, val):
    """3.12 bytecodes.c WITH_EXCEPT_START: res = exit_func(type(val), val, val.__traceback__)."""
    cls = ClassValue(val.cls) if isinstance(val, ExceptionValue) else ClassValue(val.python_type())
    res = exit_func.call(state, [cls, val, TracebackValue(val)], {})
    return exit_func, lasti, prev_exc, val, res
