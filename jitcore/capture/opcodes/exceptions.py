"""Exceptions: `raise`, `assert`, and the handler code of `try`/`except`/`finally` (3.12 zero-cost tables).

A raise throws TracedException; the interpreter loop (FrameState.unwind) finds the handler in the frame's
exception table, trims the stack and jumps there, pushing the exception. The handler code then runs these opcodes.
`ctx.exc_stack` is the traced counterpart of the thread's "exception being handled" (sys.exc_info()); a raise
with arguments chains to it (values/exception.py, Note [Implicit chaining]).
"""
from __future__ import annotations

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.opcodes.registry import opcode
from jitcore.capture.values import const
from jitcore.capture.values.exception import ExceptionValue, chain_context, exception_of, matches
from jitcore.capture.values.objects import ClassValue


@opcode("RAISE_VARARGS", signature="args[oparg] --")
def raise_varargs(state, inst, args):
    if not args:
        # a bare raise re-raises what is handled, chained as it is
        if not state.ctx.exc_stack:
            raise GraphBreak.raises(RuntimeError, "No active exception to reraise")
        state.raise_traced(state.ctx.exc_stack[-1])
    exc = exception_of(state, args[0])
    if len(args) == 2:
        cause = args[1]
        exc.setattr(state, "__cause__", cause if cause.constant() is None else exception_of(state, cause))
    chain_context(state, exc)
    state.raise_traced(exc)


@opcode("RERAISE", signature="exc --")
def reraise(state, inst, exc):
    """(3.12: the `lasti` below exc, when oparg is set, stays; it only repositions the real frame.)"""
    state.raise_traced(exc)


@opcode("PUSH_EXC_INFO", signature="exc -- prev, exc")
def push_exc_info(state, inst, exc):
    stack = state.ctx.exc_stack
    prev = stack[-1] if stack else const(None)
    stack.append(exc)
    state.ctx.handling.append(state.ctx.pending_origin)
    return prev, exc


@opcode("POP_EXCEPT", signature="prev --")
def pop_except(state, inst, prev):
    state.ctx.exc_stack.pop()
    state.ctx.handling.pop()


@opcode("CHECK_EXC_MATCH", signature="exc, classinfo -- exc, matched")
def check_exc_match(state, inst, exc, classinfo):
    return exc, const(matches(state, exc, classinfo))


@opcode("LOAD_ASSERTION_ERROR", signature="-- cls")
def load_assertion_error(state, inst):
    return ClassValue(AssertionError)
