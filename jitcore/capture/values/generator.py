"""Generators traced lazily, and iterators whose items are computed on demand.

A generator function called inside traced code becomes a GeneratorValue holding its frame, not yet started. Each
next() (FOR_ITER, next(), draining by list()/sum()...) resumes that frame until its next `yield`, exactly when
Python would, so the generator's side effects interleave with its consumer's as they do in eager code and a
consumer that stops early (`break`, any()) does not run the rest. `LazyIteratorValue` does the same for zip,
enumerate, map and filter over such iterators.
"""
from __future__ import annotations

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.base import Value

__all__ = ["GeneratorValue", "LazyIteratorValue", "is_lazy", "MAX_YIELDS"]

#: a generator yielding more than this while tracing is treated as unbounded
MAX_YIELDS = 10_000

_GENERATOR_TYPE = type((lambda: (yield))())


class _OnDemand(Value):
    """An iterator whose items exist only once next_item() computes them."""

    __slots__ = ()

    def truth(self, state):
        return True

    def iterate(self, state):
        items = []
        while (item := self.next_item(state)) is not None:
            items.append(item)
        return items


class GeneratorValue(_OnDemand):
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

    def next_item(self, state):
        """Resume the generator's frame until it yields (its value) or returns (None)."""
        if self.finished:
            return None
        if self.running:
            raise GraphBreak.raises(ValueError, "generator already executing")
        if self.count >= MAX_YIELDS:
            raise GraphBreak("generator", f"a generator yielded more than {MAX_YIELDS} values while tracing")
        frame = self.frame
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
            return None
        self.count += 1
        return frame.take_yielded()


    def getattr(self, state, name):
        raise GraphBreak("unsupported_call", f"generator.{name}() while tracing")

    def reconstruct(self, codegen):
        if self.finished:
            return "iter(())"
        raise GraphBreak("generator", "a generator suspended inside the traced code is needed by Python")


class LazyIteratorValue(_OnDemand):
    """An iterator whose next item is computed when asked for (zip/enumerate/map/filter over a lazy source)."""

    __slots__ = ("produce", "iter_type", "finished")

    def __init__(self, produce, iter_type):
        super().__init__(None)
        #: produce(state) -> the next item, or None when exhausted
        self.produce = produce
        self.iter_type = iter_type
        self.finished = False

    def python_type(self):
        return self.iter_type

    def next_item(self, state):
        if self.finished:
            return None
        item = self.produce(state)
        if item is None:
            self.finished = True
        return item


    def reconstruct(self, codegen):
        if self.finished:
            return "iter(())"
        raise GraphBreak("generator", f"a lazy {self.iter_type.__name__} iterator is needed by Python")


def is_lazy(value) -> bool:
    return isinstance(value, (GeneratorValue, LazyIteratorValue))
