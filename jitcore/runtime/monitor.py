"""The sys.monitoring tool: PY_START interception of registered code objects inside `enabled()` blocks.

On the first PY_START of a registered function in a block, the callback finds the function instance being called,
captures from the frame's live arguments, installs the dispatch prologue on that instance and clears that code's
local event; the current call runs natively and later calls go through the prologue. Leaving the outermost block
clears the local events and restores every original `__code__`. Only local PY_START events are used (DESIGN §8).

Note [Living beside other monitoring tools]: the callback never returns DISABLE. DISABLE is sticky per location
until `sys.monitoring.restart_events()`, and restart_events re-enables the events every other tool (coverage, a
profiler, a debugger) disabled for itself. A code that needs no more interception gets its local events cleared
instead, which touches only jitcore's own tool id.
"""
from __future__ import annotations

import ctypes
import gc
import sys
import types

from jitcore import events

__all__ = ["Monitor", "frame_function"]

_MON = sys.monitoring
_EVENTS = _MON.events

# CPython 3.12 frame layout (Include/internal/pycore_frame.h): PyFrameObject.f_frame at 24;
# _PyInterpreterFrame.f_code at 0, f_funcobj at 16, frame_obj at 48. Checked on every read.
_F_FRAME, _F_CODE, _F_FUNCOBJ, _FRAME_OBJ = 24, 0, 16, 48
_vp = ctypes.c_void_p


def frame_function(frame):
    """The function object running `frame` (a per-call closure instance included), or None if unsure."""
    try:
        iframe = _vp.from_address(id(frame) + _F_FRAME).value
        if (iframe and _vp.from_address(iframe + _F_CODE).value == id(frame.f_code)
                and _vp.from_address(iframe + _FRAME_OBJ).value == id(frame)):
            fn = ctypes.py_object.from_address(iframe + _F_FUNCOBJ).value
            if isinstance(fn, types.FunctionType) and fn.__code__ is frame.f_code:
                return fn
    except Exception:
        pass
    for ref in gc.get_referrers(frame.f_code):
        if isinstance(ref, types.FunctionType) and ref.__code__ is frame.f_code:
            return ref
    return None


class Monitor:
    """Owns the tool id while any enabled() block is open. `on_start(code, frame)` decides per first call."""

    def __init__(self, on_start):
        self._on_start = on_start
        self.tool_id = None
        self.watched: set = set()
        #: callbacks fired, for tests that prove interception used sys.monitoring
        self.fired = 0

    @property
    def armed(self) -> bool:
        return self.tool_id is not None

    def arm(self) -> None:
        if self.armed:
            return
        for candidate in (_MON.OPTIMIZER_ID, 4, 3):
            if _MON.get_tool(candidate) is None:
                _MON.use_tool_id(candidate, "jitcore")
                self.tool_id = candidate
                break
        else:
            events.emit("fallbacks", "no free sys.monitoring tool id: registered functions run natively", always=True)
            return
        _MON.register_callback(self.tool_id, _EVENTS.PY_START, self._callback)

    def watch(self, code) -> None:
        if self.armed and code not in self.watched:
            _MON.set_local_events(self.tool_id, code, _EVENTS.PY_START)
            self.watched.add(code)

    def unwatch(self, code) -> None:
        if self.armed and code in self.watched:
            _MON.set_local_events(self.tool_id, code, 0)
            self.watched.discard(code)

    def disarm(self) -> None:
        if not self.armed:
            return
        # local events outlive free_tool_id (cpython gh-111963): clear them first
        for code in list(self.watched):
            _MON.set_local_events(self.tool_id, code, 0)
        self.watched.clear()
        _MON.register_callback(self.tool_id, _EVENTS.PY_START, None)
        _MON.free_tool_id(self.tool_id)
        self.tool_id = None

    def _callback(self, code, offset):
        if code not in self.watched:
            # an event set before this block (cpython gh-111963): clear it, never DISABLE (Note [Living beside
            # other monitoring tools])
            _MON.set_local_events(self.tool_id, code, 0)
            return None
        self.fired += 1
        try:
            done = self._on_start(code, sys._getframe(1))
        except Exception as exc:  # never let jitcore abort the user's call
            events.emit("fallbacks", f"internal error while intercepting {code.co_qualname}: {type(exc).__name__}: {exc}",
                key=("monitor", code), always=True)
            done = True
        if done:
            self.unwatch(code)
        return None


