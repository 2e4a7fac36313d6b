"""jitcore: a pure-Python JIT front end for PyTorch.

Captures PyTorch programs into torch.fx graphs by abstract interpretation of CPython 3.12 bytecode, guards and
caches them, and hands them to a backend. Public names only live here; see `jitcore.api` for the entry points.
"""
import sys as _sys

if _sys.version_info[:2] != (3, 12):
    from jitcore.errors import UnsupportedPythonError as _Unsupported

    raise _Unsupported(
        f"jitcore needs CPython 3.12 (its bytecode interpreter follows 3.12's opcodes); this is Python "
        f"{_sys.version_info.major}.{_sys.version_info.minor}. Run it with a 3.12 interpreter, e.g. `make test`, "
        f"which creates a 3.12 virtual environment.")

from jitcore.errors import (JitError, GraphBreakError, InvalidArgumentError, UnknownBackendError,  # noqa: E402
                            BackendCompileError, InternalError)
from jitcore.config import config  # noqa: E402
from jitcore.api import (compile, register, unregister, enabled, explain, reset, disable,  # noqa: E402
                         allow_in_graph, is_compiling)
from jitcore.marks import mark_dynamic, maybe_mark_dynamic, mark_static  # noqa: E402

__all__ = ["compile", "register", "unregister", "enabled", "explain", "reset", "disable", "allow_in_graph",
           "is_compiling", "mark_dynamic", "maybe_mark_dynamic", "mark_static", "config", "JitError", "GraphBreakError", "InvalidArgumentError", "UnknownBackendError",
           "BackendCompileError", "InternalError"]
__version__ = "0.1.0"
