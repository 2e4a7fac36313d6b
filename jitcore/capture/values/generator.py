"""Generators traced lazily: a generator object made inside traced code, and its send/throw/close.

A generator function called inside traced code becomes a GeneratorValue holding its frame, not yet started. Each
next() (FOR_ITER, next(), draining by list()/sum()...) resumes that frame until its next `yield`, exactly when
Python would, so the generator's side effects interleave with its consumer's as they do in eager code and a
consumer that stops early (`break`, any()) does not run the rest (values/lazy_iterator.py does the same for
zip, enumerate, map and filter over such iterators).

`send`, `throw` and `close` follow CPython's genobject.c (3.12): a sent value becomes the result of the suspended
`yield`; a thrown exception is raised at the suspended YIELD_VALUE, so the frame's own handlers see it; a
generator suspended in `yield from` hands `throw`/`close` to its sub-iterator first (`_PyGen_yf`); `close()`
throws GeneratorExit and complains when the generator yields again. A generator that returns raises
StopIteration carrying its return value to `send`/`next()`; `yield from` (SEND / END_SEND / CLEANUP_THROW in
opcodes/generators.py) receives it as its result.
"""
from __future__ import annotations

from jitcore.capture.breaks import GraphBreak, TracedException
from jitcore.capture.values.base import MethodCallValue
from jitcore.capture.values.lazy_iterator import OnDemand
from jitcore.capture.values.constant import const
from jitcore.capture.values.exception import ExceptionValue, chain_context, exception_of

__all__ = ["GeneratorValue", "close_iterator", "MAX_YIELDS"]

#: a generator yielding more than this while tracing is treated as unbounded
MAX_YIELDS = 10_000

#: the generator methods modelled here (everything else about a generator object breaks)
_METHODS = ("send", "throw", "close", "__next__")

_GENERATOR_TYPE = type((lambda: (yield))())


class GeneratorValue(OnDemand):
    __slots__ = ("frame", "finished", "count", "running", "handled", "origins")

    def __init__(self, frame):
        super().__init__(None)
        self.frame = frame
        self.finished = False
        self.count = 0
        self.running = False
        #: exceptions its handlers were handling when it yielded (and where they were raised)
        self.handled: list = []
        self.origins: list = []

    def python_type(self):
        return _GENERATOR_TYPE

    @property
    def started(self) -> bool:
        return self.frame.current is not None

    def next_item(self, state):
        """Resume the generator's frame until it yields (its value) or returns (None)."""
        yielded, value = self.advance(state)
        return value if yielded else None

    def advance(self, state, sent=None, thrown=None):
        """Resume the frame with `sent` as the suspended yield's result, or with `thrown` (an ExceptionValue)
        raised at it: (True, the next yielded value) or (False, the return value). Raises TracedException for
        an exception leaving the generator."""
        if self.finished:
            if thrown is not None:
                _raise(state, thrown)
            return False, const(None)
        if self.running:
            raise GraphBreak.raises(ValueError, "generator already executing")
        if self.count >= MAX_YIELDS:
            raise GraphBreak("generator", f"a generator yielded more than {MAX_YIELDS} values while tracing")
        frame = self.frame
        if not self.started:
            if thrown is not None:
                # thrown into a generator that never ran: no handler of its body is active yet
                self.finished = True
                _raise(state, thrown)
            if sent is not None and sent.constant() is not None:
                raise GraphBreak.raises(TypeError, "can't send non-None value to a just-started generator")
        elif thrown is not None:
            outcome = self._throw_to_delegate(state, thrown)
            if type(outcome) is tuple:
                return outcome
            thrown = outcome
        elif sent is not None:
            frame.stack[-1] = sent  # the suspended YIELD_VALUE pushed a placeholder for it
        # the caller of next() is the frame's parent while it runs (where exceptions go, how deep inlining is)
        frame.parent = state
        frame.depth = state.depth + 1
        if frame.depth > state.ctx.max_inline_depth:
            raise GraphBreak("recursion_limit", f"inlining deeper than {state.ctx.max_inline_depth} calls")
        self.running = True
        saved = state.graph.current_location
        # the generator's own handlers are the caller's only while it runs (CPython's gi_exc_state): set aside
        # at each yield, put back on top of the caller's when it resumes
        ctx = state.ctx
        base = len(ctx.exc_stack)
        ctx.exc_stack.extend(self.handled)
        ctx.handling.extend(self.origins)
        try:
            if self.started and thrown is not None:
                if self.handled:
                    # genobject.c gen_send_ex2 -> _PyErr_ChainStackItem: only the generator's own handled one
                    chain_context(state, thrown)
                frame.throw_in(thrown)
            frame.run()
        except BaseException:
            self.finished = True
            raise
        finally:
            self.running = False
            state.graph.current_location = saved
            self.handled, self.origins = ctx.exc_stack[base:], ctx.handling[base:]
            del ctx.exc_stack[base:], ctx.handling[base:]
        if frame.done:
            self.finished = True
            return False, frame.result if frame.result is not None else const(None)
        self.count += 1
        return True, frame.take_yielded()

    def delegate(self):
        """The sub-iterator of a `yield from` the generator is suspended in (CPython's _PyGen_yf), or None."""
        frame = self.frame
        if not self.started or self.finished or len(frame.stack) < 2:
            return None
        following = frame.instructions[frame.ip] if frame.ip < len(frame.instructions) else None
        if following is None or following.opname != "RESUME" or following.arg < 2:
            return None
        return frame.stack[-2]

    def _throw_to_delegate(self, state, thrown):
        """genobject.c _gen_throw with a delegate: GeneratorExit closes it first; a generator delegate takes the
        exception itself ((True, its next yield), which is ours); what it raises, or its return as a
        StopIteration that CLEANUP_THROW unpacks, is the exception raised at our yield (returned)."""
        delegate = self.delegate()
        if delegate is None:
            return thrown
        if issubclass(thrown.cls, GeneratorExit):
            close_iterator(state, delegate)
            return thrown
        if isinstance(delegate, GeneratorValue):
            try:
                yielded, value = delegate.advance(state, thrown=thrown)
            except TracedException as raised:
                return raised.value
            return (True, value) if yielded else _stop_iteration(value)
        if _builtin_iterator(delegate):
            return thrown  # builtin iterators have no throw(): raised at our yield
        raise GraphBreak("generator", f"throw() into a yield from over a {delegate.kind_name}")

    def getattr(self, state, name):
        if name in _METHODS:
            return MethodCallValue(self, name)
        raise GraphBreak("unsupported_call", f"generator.{name} while tracing")

    def call_method(self, state, name, args, kwargs):
        if name not in _METHODS or kwargs:
            raise GraphBreak("unsupported_call", f"generator.{name}() while tracing")
        if name == "close" and not args:
            self.close(state)
            return const(None)
        if name == "send" and len(args) == 1:
            return self.resume_or_stop(state, sent=args[0])
        if name == "__next__" and not args:
            return self.resume_or_stop(state)
        if name == "throw" and len(args) in (1, 2, 3):
            return self.resume_or_stop(state, thrown=_thrown_exception(state, args))
        raise GraphBreak("unsupported_call", f"generator.{name}() with {len(args)} arguments")

    def resume_or_stop(self, state, sent=None, thrown=None):
        """send()/throw()/next(): the next yielded value, or StopIteration carrying the return value."""
        yielded, value = self.advance(state, sent=sent, thrown=thrown)
        if yielded:
            return value
        _raise(state, _stop_iteration(value))

    def close(self, state) -> None:
        """generator.close(): GeneratorExit thrown at the suspended yield; returning or letting GeneratorExit
        (or StopIteration) out is a clean close, yielding again a RuntimeError."""
        if not self.started or self.finished:
            self.finished = True
            return
        try:
            yielded, _ = self.advance(state, thrown=ExceptionValue(GeneratorExit, []))
        except TracedException as raised:
            if issubclass(raised.value.cls, (GeneratorExit, StopIteration)):
                return
            raise
        if yielded:
            _raise(state, ExceptionValue(RuntimeError, [const("generator ignored GeneratorExit")]))

    def reconstruct(self, codegen):
        if self.finished:
            return "iter(())"
        raise GraphBreak("generator", "a generator suspended inside the traced code is needed by Python")


def _raise(state, exc):
    if exc.origin is None:
        chain_context(state, exc)
    state.raise_traced(exc)


def _stop_iteration(value):
    # genobject.c: `return` and `return None` raise a bare StopIteration, `return v` StopIteration(v)
    return ExceptionValue(StopIteration, [] if value.constant() is None else [value])


def _thrown_exception(state, args):
    """throw(exc), throw(cls), throw(cls, value[, tb]): the exception raised inside (genobject.c _gen_throw)."""
    if len(args) == 3 and args[2].constant() is not None:
        raise GraphBreak("generator", "generator.throw() with a traceback")
    if len(args) >= 2 and args[1].constant() is not None:
        return exception_of(state, args[1])
    return exception_of(state, args[0])


def _builtin_iterator(value) -> bool:
    """An iterator of a builtin kind (list_iterator, zip, map...): it has neither throw() nor close()."""
    if isinstance(value, GeneratorValue):
        return False
    try:
        kind = value.python_type()
    except GraphBreak:
        return False
    return kind.__module__ == "builtins" and not hasattr(kind, "throw") and hasattr(kind, "__next__")


def close_iterator(state, value) -> None:
    """genobject.c gen_close_iter: close a generator; builtin iterators have no close()."""
    if isinstance(value, GeneratorValue):
        value.close(state)
    elif not _builtin_iterator(value):
        raise GraphBreak("generator", f"closing a yield from over a {value.kind_name}")


