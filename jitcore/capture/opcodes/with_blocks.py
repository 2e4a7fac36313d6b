"""with-blocks: BEFORE_WITH enters a context manager; the normal exit is an ordinary CALL of the pushed __exit__.

Exception edges (WITH_EXCEPT_START and the handlers) are never followed: an exception while tracing stops capture.
"""
from __future__ import annotations

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.opcodes.registry import opcode


@opcode("BEFORE_WITH", signature="mgr -- exit, res")
def before_with(state, inst, mgr):
    enter = getattr(mgr, "enter", None)
    if enter is not None:
        return enter(state)
    if mgr.is_tensor():
        raise GraphBreak("user_exception", "TypeError: a tensor is not a context manager")
    exit_method = mgr.getattr(state, "__exit__")
    result = mgr.call_method(state, "__enter__", [], {})
    return exit_method, result
