"""Frames run natively because a graph break lies inside one of their loops, with the functions they call compiled.

`loop_native_run(code, fn_globals, options)` -> the run of such a native entry (called as every entry's run: the
frame's parameters, then its closure cells). It runs the frame's own code (for a resume stub, the resume code it
stands for) with each call's callable passed through a `CalleeHook` (codegen/native_calls.py), which hands back a
user function's compiled copy, so each callee is captured as a frame of its own. Note [Breaks inside loops],
capture/loop_breaks.py.
"""
from __future__ import annotations

import inspect
import types
import weakref

import torch

from jitcore import events
from jitcore.capture.continuation import has_compiled_copy
from jitcore.capture.frame import arg_names
from jitcore.capture.resume_points import resume_point
from jitcore.capture.values.module import own_call, plain_forward
from jitcore.codegen.native_calls import calls_through
from jitcore.codegen.resume import resume_code
from jitcore.runtime.prologue import FALLTHROUGH
from jitcore.runtime.resume_chain import clear_ticket
from jitcore.runtime.resume_fns import compiled_callee
from jitcore.runtime.tracebacks import note_prologue

__all__ = ["loop_native_run", "CalleeHook"]

_FUNCTION, _METHOD = types.FunctionType, types.MethodType
_MODULE = torch.nn.Module


class CalleeHook:
    """hook(callable) -> what a natively run frame calls instead: a user function's compiled copy (bound as the
    callable was: a method, a module's plain forward), or the callable itself."""

    __slots__ = ("options", "made_inside", "copies", "forwards")

    def __init__(self, options, code):
        self.options = options
        #: functions the frame makes itself (a closure, a lambda) are new objects every call: a copy of each
        #: would be captured again on every call of the frame, so they run as they are
        self.made_inside = frozenset(c for c in code.co_consts if isinstance(c, types.CodeType))
        #: function -> its compiled copy, or the function where it gets none
        self.copies = weakref.WeakKeyDictionary()
        #: a module's forward -> its compiled copy (by structure), or the forward where it gets none
        self.forwards = weakref.WeakKeyDictionary()

    def __call__(self, callee):
        kind = type(callee)
        if kind is _FUNCTION:
            return self._copy(callee)
        if kind is _METHOD:
            fn = callee.__func__
            copy = self._copy(fn) if type(fn) is _FUNCTION else fn
            return callee if copy is fn else _METHOD(copy, callee.__self__)
        if isinstance(callee, _MODULE):
            if torch._C._get_tracing_state() is not None:
                return callee  # a jit trace records the module's own __call__
            # a class's own __call__ (its super().__call__ comes back to forward) is compiled like forward: as a
            # function of the module, shared by structure
            forward = plain_forward(callee) or own_call(callee)
            if forward is None:
                return callee  # hooks run through nn.Module's __call__
            copy = self._copy(forward, self.forwards, _receiver_path(forward.__code__))
            return callee if copy is forward else _METHOD(copy, callee)
        return callee

    def _copy(self, fn, copies=None, shared=()):
        copies = self.copies if copies is None else copies
        found = copies.get(fn)
        if found is None:
            compiles = has_compiled_copy(fn) and fn.__code__ not in self.made_inside \
                and not any(const is FALLTHROUGH for const in fn.__code__.co_consts)  # already has a prologue
            found = fn
            if compiles:
                try:
                    found = compiled_callee(fn, self.options, shared)
                except Exception as exc:  # jitcore's fault, never the program's: the callee runs as it is
                    events.emit("fallbacks", f"no compiled copy of {fn.__qualname__} ({type(exc).__name__}: {exc}); "
                                "it runs natively", key=("loop callee", fn.__code__), code=fn.__code__, error=exc)
            copies[fn] = found
        return found


def _receiver_path(code) -> tuple:
    """The guard path of a forward's receiver: its first parameter, or `args[0]` of a `(*args, **kwargs)` wrapper.
    A loop run natively calls its modules one by one (the blocks of a ModuleList): the forward's copy captures
    the receiver by structure from its first call (Note [Instances shared by structure]), one entry for them all."""
    if code.co_argcount:
        return ((("local", code.co_varnames[0]),),)
    if code.co_flags & inspect.CO_VARARGS:
        return ((("local", code.co_varnames[code.co_kwonlyargcount]), ("item", 0)),)
    return ()


class _Run:
    """The run of one native entry: the hooked code over the entry's arguments and the frame's cells."""

    __slots__ = ("code", "globals", "fn", "stub", "__weakref__")

    def __init__(self, code, fn_globals, stub: bool):
        self.code, self.globals, self.stub = code, fn_globals, stub
        self.fn = types.FunctionType(code, fn_globals, code.co_name) if not code.co_freevars else None

    def __call__(self, *args):
        if self.stub:
            # a driver's ticket left for this resume function: what it runs starts chains of its own
            # (Note [Resume chains run in a loop], runtime/resume_chain.py)
            clear_ticket()
        cells = args[-1]
        fn = self.fn
        if fn is None:
            fn = types.FunctionType(self.code, self.globals, self.code.co_name, None, cells)
        return fn(*args[:-1])


def loop_native_run(code, fn_globals, options) -> _Run:
    """The run of a native entry for `code` (an original, or a resume stub) whose callees run compiled."""
    hook = CalleeHook(options, code)
    point = resume_point(code)
    if point is None:
        return _Run(_hooked_copy(code, hook, arg_names(code)), fn_globals, False)
    original = point.original
    names = arg_names(code)[len(point.stack_names):]
    body = resume_code(original, point.target, point.kinds, names)
    hook.made_inside = CalleeHook(options, original).made_inside
    return _Run(_hooked_copy(body, hook), fn_globals, True)


def _hooked_copy(code, hook, *names):
    """`code` with its calls hooked; tracebacks take its frame for the user's frame that `code` is (Note
    [Tracebacks through compiled code]), so the prologue's frame above it goes, as above a native entry."""
    copy = calls_through(code, hook, *names)
    note_prologue(copy, code)
    return copy
