"""The exceptions jitcore raises to its users.

Every error a user can see is a `JitError`. Internal failures inside capture or codegen never reach user code
(they fall back to native execution) unless `fullgraph=True` or strict mode asks for them.
"""

__all__ = ["JitError", "GraphBreakError", "InvalidArgumentError", "UnknownBackendError", "BackendCompileError",
           "InternalError", "UnsupportedPythonError"]


class JitError(Exception):
    """Base class of every error jitcore raises on purpose."""


class InvalidArgumentError(JitError, TypeError):
    """A public API received a value it cannot use; the message names the argument, the expectation and what came."""


class UnknownBackendError(JitError, LookupError):
    """A backend name that no registered backend has."""


class GraphBreakError(JitError):
    """Capture had to stop (a graph break) while `fullgraph=True` asked for one whole graph."""

    def __init__(self, message: str, *, kind: str = "", filename: str = "", lineno: int = 0, source_line: str = ""):
        super().__init__(message)
        self.kind = kind
        self.filename = filename
        self.lineno = lineno
        self.source_line = source_line


class BackendCompileError(JitError):
    """A backend raised while compiling a graph (raised only under fullgraph / strict mode)."""


class InternalError(JitError):
    """A fault inside jitcore itself, raised only under strict mode; otherwise the frame runs natively."""


class UnsupportedPythonError(JitError, RuntimeError):
    """jitcore runs on CPython 3.12 only."""
