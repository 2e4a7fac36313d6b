"""The event bus: how the engine tells the outside what happened, without knowing who listens.

The runtime and capture layers call `emit()` (a recompile, a graph break, a graph compiled, a fallback) and wrap a
backend compile in `compiling()`. Listeners, such as the console in jitcore.report, subscribe from above; this
module imports nothing of jitcore, so every layer may use it and none of them depends on the report layer.

An event is `(topic, message, key, always, facts)`: `message` is its plain-text form, `key` deduplicates repeats of
one event (None: the message itself), `always` asks for it to be shown even when its topic is not selected, and
`facts` holds the structured details (`code=`, `brk=`, `reasons=` ...) a listener may lay out.
"""
from __future__ import annotations

import contextlib
import threading

__all__ = ["emit", "subscribe", "unsubscribe", "compiling", "set_progress"]

_lock = threading.Lock()
#: listeners called with (topic, message, key, always, facts), in subscription order
_listeners: tuple = ()
#: a context-manager factory (code, backend_name) shown while a backend compiles; None: nothing is shown
_progress = None


def subscribe(listener) -> None:
    """Call `listener(topic, message, key, always, facts)` for every event from now on (once per listener)."""
    global _listeners
    with _lock:
        if listener not in _listeners:
            _listeners = _listeners + (listener,)


def unsubscribe(listener) -> None:
    global _listeners
    with _lock:
        _listeners = tuple(fn for fn in _listeners if fn is not listener)


def emit(topic: str, message: str, *, key=None, always: bool = False, **facts) -> None:
    """Tell every listener. A listener that fails is skipped: reporting never breaks the program."""
    for listener in _listeners:
        try:
            listener(topic, message, key, always, facts)
        except Exception:
            pass


def set_progress(factory) -> None:
    """Install the context-manager factory `compiling()` uses (the console's spinner), or None."""
    global _progress
    _progress = factory


def compiling(code, backend_name: str = ""):
    """A context manager around one backend compile of a graph of `code`."""
    factory = _progress
    if factory is None:
        return contextlib.nullcontext()
    try:
        return factory(code, backend_name)
    except Exception:
        return contextlib.nullcontext()
