"""The one console for everything jitcore says: recompilations, graph breaks, cache-limit hits, fallbacks, graphs.

Quiet by default; `config.log` (JITCORE_LOG) selects topics. A break is printed once per place in the user's code
(file, line, kind); a function's first recompile and first graph are printed and later ones counted, listed at exit
(`counted_lines`), so a long training loop says each thing once.
Warnings that a user must see even when quiet (a fallback after an internal error) use `always=True`. Callers pass
the facts of an event as keywords (`code=`, `brk=`, `reasons=` ...); report.live lays them out, and the message
string is the plain-text form kept in EVENTS. `compile_status` shows a spinner while a backend compiles for long.
Imports rich lazily; never raises into the caller. Entry points: `say`, `recording`, `compile_status`, `EVENTS`.
"""
from __future__ import annotations

import atexit
import contextlib
import sys
import threading

from jitcore import events
from jitcore.config import config
from jitcore.report.describe import break_key, frame_of

__all__ = ["say", "reset_seen", "EVENTS", "Event", "recording", "compile_status", "get_console", "use_console"]

#: dedupe keys already printed, oldest first (a dict used as an ordered set, trimmed like EVENTS)
_seen: dict = {}
_MAX_SEEN = 20000
#: longest message the process-wide log keeps (a graph's code can be long; it was printed in full already)
_MAX_LOGGED_CHARS = 4000
_lock = threading.RLock()
#: every message said (printed or not), newest last, for tests and the CLI summary; bounded
EVENTS: list = []
_MAX_EVENTS = 2000
#: topics whose events are shown once per function and then counted (a training loop recompiles, and makes a
#: graph, for each variant: the first says what happens; the rest are a count at exit and in the summary)
_COUNTED = ("recompiles", "graphs")
#: (topic, function key) -> [label, events said, events shown]
_counts: dict = {}
_exit_note_registered = False
_console = None
#: lists that `recording()` blocks collect events into; while one is open nothing is printed or deduplicated
_recorders: list = []
#: wide terminals still get blocks of at most this many columns, so lines stay readable
MAX_WIDTH = 120


class Event(tuple):
    """`(topic, message)`, as EVENTS has always been unpacked, with the event's `facts` (a dict) attached."""

    def __new__(cls, topic: str, message: str, facts: dict, always: bool = False):
        self = super().__new__(cls, (topic, message))
        self.facts = facts
        self.always = always
        return self

    @property
    def topic(self) -> str:
        return self[0]

    @property
    def message(self) -> str:
        return self[1]


def get_console():
    global _console
    if _console is None:
        from rich.console import Console  # lazy: rich is loaded when jitcore first prints
        _console = Console(stderr=True, highlight=False)
    return _console


@contextlib.contextmanager
def use_console(console):
    """Print through `console` inside the block (tests render to a StringIO at a chosen width)."""
    global _console
    saved = _console
    _console = console
    try:
        yield console
    finally:
        _console = saved


def _plain_facts(facts: dict) -> dict:
    plain = {}
    for name, value in facts.items():
        if isinstance(value, (str, int, float, bool, type(None), type(_plain_facts.__code__))):
            plain[name] = value
        elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            plain[name] = list(value)
    return plain


def say(topic: str, message: str, *, key=None, always: bool = False, **facts) -> None:
    """Record a message; print it when its topic is selected (or always), once per key."""
    event = Event(topic, message, facts, always)
    with _lock:
        if _recorders:
            for events in _recorders:
                events.append(event)
            return
        dedupe = (topic, _dedupe_key(topic, key, message, facts))
        if dedupe in _seen:
            return
        _seen[dedupe] = None
        if len(_seen) > _MAX_SEEN:
            for old in list(_seen)[: _MAX_SEEN // 2]:
                del _seen[old]
        # the process-wide log keeps plain facts only: a graph, an exception or a break would keep the user's
        # tensors and frames alive for as long as the log holds the event; and messages up to a length
        logged = message if len(message) <= _MAX_LOGGED_CHARS else message[:_MAX_LOGGED_CHARS] + " ..."
        EVENTS.append(Event(topic, logged, _plain_facts(facts), always))
        if len(EVENTS) > _MAX_EVENTS:
            del EVENTS[: len(EVENTS) - _MAX_EVENTS]
    selected = config.log
    if always or topic in selected or (topic == "graphs" and "guards" in selected):
        if always or _first_of_its_function(topic, facts):
            show(event, selected)


def _dedupe_key(topic: str, key, message: str, facts: dict):
    """One report per break in the user's code (file, line, kind), whichever resume function met it; else the
    caller's key, else the message."""
    if topic == "breaks" and "brk" in facts:
        try:
            return break_key(facts.get("code"), facts["brk"])
        except Exception:  # a break of an unexpected shape still dedupes by what the runtime said
            pass
    return key if key is not None else message


def _first_of_its_function(topic: str, facts: dict) -> bool:
    """True for a function's first recompile, and for the first graph of each of its parts (the function, each
    resume function), which are shown; the later ones are counted."""
    code = facts.get("code")
    if topic not in _COUNTED or code is None:
        return True
    try:
        frame = frame_of(code)
        # a function's recompiles are one story; each part of it (a resume function) has a graph of its own
        label = f"{frame.function}()" if topic == "recompiles" else frame.label
        function = (frame.filename, frame.lineno, label)
    except Exception:
        function, label = code, code.co_qualname
    global _exit_note_registered
    with _lock:
        count = _counts.setdefault((topic, function), [label, 0, 0])
        count[1] += 1
        if count[1] > 1:
            if not _exit_note_registered:
                _exit_note_registered = True
                atexit.register(print_counts)
            return False
        count[2] += 1
    return True


def counted_lines() -> list[str]:
    """One line per function whose recompiles or graphs were counted instead of shown."""
    with _lock:
        per_function: dict = {}
        for (topic, function), (label, said, shown) in _counts.items():
            if said > shown:
                noun = {"recompiles": "recompile", "graphs": "graph"}[topic]
                per_function.setdefault((function, label), []).append(
                    f"{said - shown} more {noun}{'s' if said - shown != 1 else ''}")
    return [f"{label}: {' and '.join(parts)} not shown (the first of each was)"
            for (_, label), parts in per_function.items()]


def print_counts() -> None:
    """At exit: what was counted instead of shown, one line per function (nothing when nothing was)."""
    lines = counted_lines()
    if not lines:
        return
    try:
        console = get_console()
        from jitcore.report.layout import Rows, header  # lazy: rich, only when something was counted
        console.print(header("counted", "repeats of what was shown above", "cyan"),
                      Rows([("", line) for line in lines]), width=min(console.width, MAX_WIDTH))
    except Exception:
        for line in lines:
            print(f"jitcore: {line}", file=sys.stderr)


def show(event: Event, selected=frozenset()) -> None:
    """Print one event; a failure to render falls back to one plain line (reporting never breaks the program)."""
    try:
        from jitcore.report.live import render_event  # lazy: it imports rich, loaded at the first message shown
        console = get_console()
        renderable = render_event(event, selected)
        if renderable is not None:
            console.print(renderable, width=min(console.width, MAX_WIDTH))
    except Exception:  # the plain message still reaches the user, its later lines indented under the first
        print(f"jitcore {event.topic}: " + event.message.replace("\n", "\n    "), file=sys.stderr)


@contextlib.contextmanager
def recording():
    """Collect every event said inside the block (explain() uses it); nothing is printed or marked as seen."""
    events: list = []
    with _lock:
        _recorders.append(events)
    try:
        yield events
    finally:
        with _lock:
            _recorders.remove(events)


def reset_seen() -> None:
    with _lock:
        _seen.clear()
        EVENTS.clear()
        _counts.clear()


# -- progress on long compiles --------------------------------------------------------------------------------
_status_depth = 0


@contextlib.contextmanager
def compile_status(code, backend: str = "", delay: float = 1.0):
    """A spinner on the terminal while a backend compiles a graph of `code` for more than `delay` seconds.

    Nothing is shown on a non-terminal (logs, pipes, CI) or a dumb terminal.

    Only the outermost block shows one. Failures of the display are ignored: it must never break a compile.
    """
    global _status_depth
    console = get_console()
    with _lock:
        outermost = _status_depth == 0
        _status_depth += 1
    if not outermost or not console.is_terminal or console.is_dumb_terminal:
        try:
            yield
        finally:
            with _lock:
                _status_depth -= 1
        return
    state = {"live": None, "done": False}
    guard = threading.Lock()

    def start():
        with guard:
            if state["done"]:
                return
            try:
                from rich.live import Live  # lazy: only a compile that lasts shows a spinner
                from rich.spinner import Spinner
                what = frame_of(code).label + (f" with {backend}" if backend else "")
                spinner = Spinner("dots", text=f"jitcore: compiling a graph of {what}", style="cyan")
                live = Live(spinner, console=console, transient=True, refresh_per_second=8,
                            redirect_stdout=False, redirect_stderr=False)
                live.start()
                state["live"] = live
            except Exception:
                state["live"] = None

    timer = threading.Timer(delay, start)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        with _lock:
            _status_depth -= 1
        timer.cancel()
        with guard:
            state["done"] = True
            live = state["live"]
        if live is not None:
            try:
                live.stop()
            except Exception:
                pass


def _on_event(topic, message, key, always, facts) -> None:
    say(topic, message, key=key, always=always, **facts)


events.subscribe(_on_event)
events.set_progress(compile_status)
