"""Installing prologues: compiled copies of functions, per-instance module forwards, and enabled() blocks.

`compiled_function(fn, options)` returns a new function whose code is fn's with a dispatch prologue (fn itself is
untouched). Inside `enabled()` blocks, `Interceptor` swaps the prologue onto registered functions when the monitor
sees their first call, and restores everything when the outermost block ends.

A registered module instance is never changed (its `__dict__` and class stay as they are: `vars()`, `copy.deepcopy`
and `jit.compile` see the plain module). The prologue goes on its class's forward function instead, with a
dispatcher that admits only registered instances; every other instance of the class falls through to the original
body. A `__code__` the user assigns while the block is open wins: the new code runs (natively), and leaving the
block does not put the old code back over it.
"""
from __future__ import annotations

import threading
import types
import weakref

from jitcore.capture.frame import arg_names
from jitcore.capture.prologues import wraps
from jitcore.runtime.cache import FrameCache
from jitcore.runtime.monitor import Monitor, frame_function
from jitcore.runtime.prologue import build_prologue_code
from jitcore.marks import is_disabled
from jitcore.runtime.registry import REGISTRY
from jitcore.runtime import resume_fns

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
    _mark_for_dynamo(new, fn)
    return new


def _mark_for_dynamo(copy, fn) -> None:
    """torch.compile of a compiled copy traces fn itself (Note [Nesting with torch.compile])."""
    # Note [Nesting with torch.compile]: Dynamo cannot trace the dispatch prologue (its constants are functions).
    # A compiled copy carries torch.compile's own nesting marks: torch.compile(copy) unwraps it to fn (Dynamo's
    # innermost_fn follows _torchdynamo_orig_callable when _torchdynamo_wrapper_id is the copy's id), and a call
    # of the copy inside code Dynamo traces inlines fn (_torchdynamo_inline). The outer compiler wins, as with
    # torch.compile(torch.compile(f)); jit.compile(torch.compile(f)) likewise compiles f (api._unwrap_dynamo).
    copy._torchdynamo_inline = fn
    copy._torchdynamo_orig_callable = fn
    copy._torchdynamo_wrapper_id = id(copy)


resume_fns.use_makers(new_cache, compiled_function)


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
        #: function -> (original code, prologue code), for every function swapped in this block
        self._swapped: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
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
        for fn, (original, prologue) in list(self._swapped.items()):
            # a code the user assigned meanwhile is theirs to keep
            if fn.__code__ is prologue:
                fn.__code__ = original
        self._swapped.clear()

    def _prologue(self, code, fn_globals, members=None):
        """(cache, prologue code) for code under the innermost options; `members`: the module instances a
        class-level forward prologue runs compiled for (None: every call)."""
        options = self.options
        key = (code, options, members is not None)
        found = self._prologues.get(key)
        if found is None:
            cache = new_cache(code, fn_globals, options, gate=self.threads)
            if members is not None:
                cache.dispatcher.admit_only(members, cache.entries)
            found = (cache, build_prologue_code(code, cache.dispatch))
            wraps(found[1], code)
            self._prologues[key] = found
        return found

    def _install(self, fn, code, prologue) -> None:
        self._swapped[fn] = (code, prologue)
        fn.__code__ = prologue
        self.installs += 1

    # -- the monitor's decision on a first call ---------------------------------------------------------------
    def _on_start(self, code, frame) -> bool:
        """Install for the instance running `frame`; True when this code needs no more interception."""
        with self._lock:
            if not self.threads.stack:
                # another thread's block armed the monitor: this thread runs natively, keep watching
                return not self.open_blocks
            # a registered function intercepts every call, its module instances included
            if code in REGISTRY.functions:
                return self._start_function(code, frame)
            if code in REGISTRY.modules:
                return self._start_module(code, frame)
            return True

    def _start_function(self, code, frame) -> bool:
        fn = frame_function(frame)
        if fn is None or is_disabled(fn):
            return True
        cache, prologue = self._prologue(code, fn.__globals__)
        self._capture_now(cache, frame, fn.__closure__)
        self._install(fn, code, prologue)
        # closures re-created per call share this code: keep watching for new instances
        return not code.co_freevars

    def _start_module(self, code, frame) -> bool:
        """A registered instance's first call: the prologue goes on the forward function running it (its class's),
        admitting registered instances only. True once every registered instance's class runs the prologue."""
        params = arg_names(code)
        if not code.co_argcount:
            return True  # no `self` parameter to tell instances apart
        module = frame.f_locals.get(params[0])
        fn = frame_function(frame)
        if fn is None:
            return True
        if fn not in self._swapped and module in REGISTRY.modules.get(code, ()):
            cache, prologue = self._prologue(code, fn.__globals__, _RegisteredInstances(code))
            self._capture_now(cache, frame, fn.__closure__)
            self._install(fn, code, prologue)
        return all(getattr(getattr(type(m), "forward", None), "__code__", None) is not code
                   for m in REGISTRY.modules.get(code, ()))

    def _capture_now(self, cache, frame, closure) -> None:
        """Capture from the live arguments of this first call (which itself runs natively)."""
        f_locals = frame.f_locals
        try:
            args = tuple(f_locals[name] for name in cache.params)
        except KeyError:
            return
        cache.prepare(args, closure)


class _RegisteredInstances:
    """`module in it`: is module registered for this forward code now (registering or unregistering inside an open
    block takes effect at the next call)."""

    __slots__ = ("code",)

    def __init__(self, code):
        self.code = code

    def __contains__(self, module) -> bool:
        members = REGISTRY.modules.get(self.code)
        return members is not None and module in members


INTERCEPTOR = Interceptor()
