"""Installing prologues: compiled copies of functions, per-instance module forwards, and enabled() blocks.

`compiled_function(fn, options)` returns a new function whose code is fn's with a dispatch prologue (fn itself is
untouched). Inside `enabled()` blocks, `Interceptor` swaps the prologue onto registered function instances and
module instances when the monitor sees their first call, and restores everything when the outermost block ends.
"""
from __future__ import annotations

import threading
import types
import weakref

from jitcore.capture.frame import arg_names
from jitcore.runtime.cache import FrameCache
from jitcore.runtime.monitor import Monitor, frame_function
from jitcore.runtime.prologue import build_prologue_code
from jitcore.marks import is_disabled
from jitcore.runtime.registry import REGISTRY

__all__ = ["compiled_function", "Interceptor", "INTERCEPTOR", "ALL_CACHES"]

#: every FrameCache alive, so reset() can empty them
ALL_CACHES: "weakref.WeakSet[FrameCache]" = weakref.WeakSet()


def new_cache(code, fn_globals, options, original=None, gate=None) -> FrameCache:
    cache = FrameCache(code, fn_globals, options, original, gate)
    ALL_CACHES.add(cache)
    return cache


def _function_with_code(fn, code):
    new = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__qualname__ = fn.__qualname__
    new.__doc__ = fn.__doc__
    new.__module__ = fn.__module__
    new.__annotations__ = fn.__annotations__
    new.__dict__.update(fn.__dict__)
    new.__wrapped__ = fn
    return new


def compiled_function(fn, options):
    """A copy of fn that dispatches through its own cache; the first call captures.

    Whatever the cache declines runs through fn itself, with fn's current defaults and code (Dispatcher).
    """
    cache = new_cache(fn.__code__, fn.__globals__, options, original=fn)
    new = _function_with_code(fn, build_prologue_code(fn.__code__, cache.dispatch))
    new.__defaults__, new.__kwdefaults__ = cache.dispatcher.copy_defaults()
    new._jitcore_cache = cache
    return new


class _ThreadBlocks(threading.local):
    """One thread's open enabled() blocks: their options, innermost last, and how many there are."""

    depth = 0

    def __init__(self):
        self.stack = []


class Interceptor:
    """The state of enabled() blocks: per-thread option stacks, installed prologues, the monitor.

    Blocks are per thread, like torch's grad mode: prologues are installed on function objects (shared by every
    thread) while any thread has a block open, but a dispatcher runs compiled code only in a thread whose own
    block is open; elsewhere the call falls through to the original code.
    """

    def __init__(self):
        self.monitor = Monitor(self._on_start)
        self.threads = _ThreadBlocks()
        #: open blocks over all threads: prologues stay installed while it is above zero
        self.open_blocks = 0
        self._lock = threading.RLock()
        #: (code, options) -> (cache, prologue code)
        self._prologues: dict = {}
        #: function -> original code, for every function swapped in this block
        self._swapped: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
        #: module instances given a per-instance forward in this block
        self._module_forwards: "weakref.WeakSet" = weakref.WeakSet()
        #: prologue installs made (tests use it to prove later calls went through the prologue)
        self.installs = 0

    @property
    def option_stack(self) -> list:
        """This thread's open blocks' options, innermost last."""
        return self.threads.stack

    @property
    def options(self):
        stack = self.threads.stack
        return stack[-1] if stack else None

    def enter(self, options) -> None:
        with self._lock:
            self.threads.stack.append(options)
            self.threads.depth = len(self.threads.stack)
            self.open_blocks += 1
            if self.open_blocks == 1:
                self.monitor.arm()
            for code in REGISTRY.codes():
                self.monitor.watch(code)

    def exit(self) -> None:
        with self._lock:
            self.threads.stack.pop()
            self.threads.depth = len(self.threads.stack)
            self.open_blocks -= 1
            if not self.open_blocks:
                self.restore_all()
                self.monitor.disarm()

    def watch_new(self, code) -> None:
        """A registration made while a block is open starts being intercepted right away."""
        with self._lock:
            if self.open_blocks:
                self.monitor.watch(code)

    def restore_all(self) -> None:
        for fn, original in list(self._swapped.items()):
            fn.__code__ = original
        self._swapped.clear()
        for module in list(self._module_forwards):
            module.__dict__.pop("forward", None)
        self._module_forwards.clear()

    def _prologue(self, code, fn_globals):
        options = self.options
        key = (code, options)
        found = self._prologues.get(key)
        if found is None:
            cache = new_cache(code, fn_globals, options, gate=self.threads)
            found = (cache, build_prologue_code(code, cache.dispatch))
            self._prologues[key] = found
        return found

    # -- the monitor's decision on a first call ---------------------------------------------------------------
    def _on_start(self, code, frame) -> bool:
        """Install for the instance running `frame`; True when this code needs no more interception."""
        with self._lock:
            if not self.threads.stack:
                # another thread's block armed the monitor: this thread runs natively, keep watching
                return not self.open_blocks
            if code in REGISTRY.modules:
                return self._start_module(code, frame)
            if code in REGISTRY.functions:
                return self._start_function(code, frame)
            return True

    def _start_function(self, code, frame) -> bool:
        fn = frame_function(frame)
        if fn is None or is_disabled(fn):
            return True
        cache, prologue = self._prologue(code, fn.__globals__)
        self._capture_now(cache, frame, fn.__closure__)
        self._swapped[fn] = code
        fn.__code__ = prologue
        self.installs += 1
        # closures re-created per call share this code: keep watching for new instances
        return not code.co_freevars

    def _start_module(self, code, frame) -> bool:
        params = arg_names(code)
        instances = REGISTRY.modules[code]
        module = frame.f_locals.get(params[0]) if params else None
        if module is None or module not in instances or "forward" in module.__dict__:
            return all("forward" in m.__dict__ for m in instances)
        fn = frame_function(frame)
        if fn is None:
            return True
        cache, prologue = self._prologue(code, fn.__globals__)
        self._capture_now(cache, frame, fn.__closure__)
        forward = types.FunctionType(prologue, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
        forward.__kwdefaults__ = fn.__kwdefaults__
        module.__dict__["forward"] = types.MethodType(forward, module)
        self._module_forwards.add(module)
        self.installs += 1
        return all("forward" in m.__dict__ for m in instances)

    def _capture_now(self, cache, frame, closure) -> None:
        """Capture from the live arguments of this first call (which itself runs natively)."""
        f_locals = frame.f_locals
        try:
            args = tuple(f_locals[name] for name in cache.params)
        except KeyError:
            return
        cache.prepare(args, closure)


INTERCEPTOR = Interceptor()
