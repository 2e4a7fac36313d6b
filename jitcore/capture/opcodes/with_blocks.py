"""with-blocks: BEFORE_WITH enters a context manager; the normal exit is an ordinary CALL of the pushed __exit__.

Exception edges (WITH_EXCEPT_START and the handlers) are never followed: an exception while tracing stops capture.
"""
from __future__ import annotations

from jitcore.capture.opcodes.registry import opcode


@opcode("BEFORE_WITH", signature="mgr -- exit, res")
def before_with(state, inst, mgr):
    return mgr.enter(state)
