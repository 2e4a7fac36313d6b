"""Resume chains in constant stack depth: an entry that ends in a resume function hands it back to a loop instead
of calling it from its own frame.

`handover(waiting, fn, *args)` is what an entry's break part returns (codegen/steps.py); `take(key)` is the first
thing a resume function's entry does; `note_stub(stub, prologue)` records the key of a stub's entries.

Note [Resume chains run in a loop]
An entry at a graph break ends in `return resume(...)`. Called from the entry's frame, each break of a chain adds
the frames of a prologue, a dispatcher and an entry below the last: a loop with a break in its body continues in
the resume function of the same offset once per iteration, so its depth grows with the iteration count and a long
enough loop (a detector's per-box loop: 100 boxes) raises RecursionError in the middle of the user's program,
where nothing can be undone. So the chain runs as a trampoline:
- the first entry of a chain (an original frame's, or a resume function's not called by a chain) calls
  `handover(False, fn, ...)`, which becomes the *driver*: it calls `fn` in a loop, and before each call records
  in a thread-local *ticket* the code of the function it calls (a resume function's prologue code);
- a resume function's entry takes the ticket first thing (`take`): when the ticket names its own code, it was
  called by a driver waiting for it, and its break part returns `handover(True, next, ...)`, a `_Next` that the
  driver calls in its place; the driver's frame stays where the chain started. Taking clears the ticket, so
  whatever the entry itself calls (the breaking instruction, a callee with breaks of its own) starts chains of
  its own and never hands a `_Next` to a caller that is not a driver. A resume function whose dispatcher falls
  through runs its native body (runtime/lazy_resume.py), which clears a ticket left for it; an entry without a
  break returns its value, which ends the driver's loop.
A step function (a breaking instruction inside try regions; an inlined comprehension is one) is called by a
driver too (`handover` from the entry), and its tails return their resume function to it (`handed`), so a step
never calls the rest of the chain from its own frame either.
"""
from __future__ import annotations

import functools
import threading
import weakref

__all__ = ["handover", "handed", "take", "clear_ticket", "note_stub", "ticket_of"]


class _Ticket(threading.local):
    #: the prologue code of the resume function a driver is calling, until its entry takes it
    code = None


_TICKET = _Ticket()

#: resume stub code -> a weak reference to its prologue code (the key its entries take a ticket by; the prologue
#: reaches the stub through its dispatcher, so a strong one would keep the stub alive)
_KEYS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


class _Next:
    """What an entry called by a driver returns: the driver calls `fn(*args)` next."""

    __slots__ = ("fn", "args")

    def __init__(self, fn, args):
        self.fn = fn
        self.args = args


def note_stub(stub, prologue) -> None:
    _KEYS[stub] = weakref.ref(prologue)


def ticket_of(code):
    """The ticket key of entries of `code` (a resume stub's code), or None for any other code."""
    key = _KEYS.get(code)
    return None if key is None else key()


def take(key) -> bool:
    """Whether a driver waits for the resume function whose prologue code is `key` (and is called now)."""
    ticket = _TICKET
    if ticket.code is key:
        ticket.code = None
        return True
    return False


def clear_ticket() -> None:
    _TICKET.code = None


def handover(waiting: bool, fn, *args):
    """Continue the chain in `fn(*args)`: handed back to the driver that waits (`waiting`), else run here as one."""
    if waiting:
        return _Next(fn, args)
    ticket = _TICKET
    while True:
        ticket.code = fn.__code__
        try:
            result = fn(*args)
        finally:
            ticket.code = None
        if type(result) is not _Next:
            return result
        fn, args = result.fn, result.args


def handed(resume, maker: bool):
    """A step function's tail callable for `resume` (a resume maker taking the frame's cells when `maker`): it
    returns the call to its driver instead of making it (a step is only ever called by a driver)."""
    if maker:
        return lambda cells: functools.partial(handover, True, resume(cells))
    return functools.partial(handover, True, resume)
