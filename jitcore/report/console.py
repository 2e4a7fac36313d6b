"""The one console for everything jitcore says: recompilations, graph breaks, cache-limit hits, fallbacks.

Quiet by default; `config.log` (JITCORE_LOG) selects topics. Identical messages are printed once per location.
Warnings that a user must see even when quiet (a fallback after an internal error) use `always=True`.
"""
from __future__ import annotations

import sys
import threading

__all__ = ["say", "reset_seen", "EVENTS"]

_seen: set = set()
_lock = threading.Lock()
#: every message said (printed or not), newest last, for tests and the CLI summary; bounded
EVENTS: list = []
_MAX_EVENTS = 2000
_console = None


def _get_console():
    global _console
    if _console is None:
        from rich.console import Console
        _console = Console(stderr=True, highlight=False, soft_wrap=False)
    return _console


def say(topic: str, message: str, *, key=None, always: bool = False) -> None:
    """Record a message; print it when its topic is selected (or always), once per key."""
    from jitcore.config import config
    with _lock:
        dedupe = (topic, key if key is not None else message)
        if dedupe in _seen:
            return
        _seen.add(dedupe)
        EVENTS.append((topic, message))
        if len(EVENTS) > _MAX_EVENTS:
            del EVENTS[: len(EVENTS) - _MAX_EVENTS]
    if always or topic in config.log:
        from rich.markup import escape
        _get_console().print(f"[bold cyan]jitcore[/] [yellow]{topic}[/]: {escape(message)}")


def reset_seen() -> None:
    with _lock:
        _seen.clear()
        EVENTS.clear()
