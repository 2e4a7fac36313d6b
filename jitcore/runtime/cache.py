"""The cache of one code object compiled with one set of options: its entries, its lock, its dispatcher.

On a miss, `FrameCache` asks its recompile policy (runtime/policy.py) whether a new entry may be made and has the
compile pipeline (runtime/pipeline.py) make it: a compiled entry, or a *native* one that runs the original body
under the guards gathered so far (a frame that cannot be captured is not captured again for the same guards). Past
`cache_limit` a call runs natively, at no more than the cost of the dispatch (Note [Past the cache limit]). Entries
are assembled by runtime/entry.py.
"""
from __future__ import annotations

import contextlib
import dataclasses
import random
import threading

from jitcore.capture.frame import arg_names
from jitcore.runtime.dispatch import Dispatcher
from jitcore.runtime.entry import Entry, native_run
from jitcore.runtime.pipeline import CompilePipeline
from jitcore.runtime.policy import RecompilePolicy
from jitcore.runtime.prologue import FALLTHROUGH
from jitcore.runtime.stats import STATS

__all__ = ["FrameCache", "Entry", "Options", "STATS", "CAPTURE_LOCK", "compiling_here"]

#: held while any cache captures or compiles (Note [Threads]); re-entrant: a capture may compile a callee's copy
CAPTURE_LOCK = threading.RLock()


class _Compiling(threading.local):
    depth = 0


_COMPILING = _Compiling()


def compiling_here() -> bool:
    """True while this thread captures or compiles (auto-enable ignores the frames that work enters)."""
    return _COMPILING.depth > 0


@contextlib.contextmanager
def _compile_section():
    """CAPTURE_LOCK, held for one miss or prepare.

    Note [Compiling leaves no trace]: what jitcore does to compile must not be seen by the program. Python's
    `random` state is put back after: modules imported on the first compile draw from it (rich.style seeds an id
    counter with random.getrandbits at import), and a seeded program must draw the same numbers compiled or not.
    Capture runs none of the program's code, so nothing the program asked for is undone."""
    with CAPTURE_LOCK:
        state = random.getstate()
        _COMPILING.depth += 1
        try:
            yield
        finally:
            _COMPILING.depth -= 1
            random.setstate(state)


@dataclasses.dataclass(frozen=True)
class Options:
    backend: object          # the backend callable
    backend_name: str
    fullgraph: bool = False
    dynamic: object = None
    cache_limit: int = 8


# Note [Past the cache limit]
# A full cache makes no more entries, so a miss there can only run natively. Two things keep that cheap:
# - The miss path of a full cache returns FALLTHROUGH at once: no lock, no second walk over the entries' guards (a
#   thread racing with the last append at worst runs one call natively, which is always right).
# - The dispatcher counts its calls from then on (one increment); every PAST_LIMIT_WINDOW calls the misses are
#   compared with the calls. Where most calls of a window missed, trying the entries costs more than it saves: the
#   frame *gives up* and its dispatcher runs the original body without trying any entry (reported once). Where most
#   hit, the entries are kept and the next window is counted. `clear()` (jit.reset()) starts over.
# Giving up only ever runs the frame natively, which is always sound; it loses the hits of the remaining calls.

#: calls counted past the cache limit before deciding whether the frame gives up
PAST_LIMIT_WINDOW = 32


class FrameCache:
    def __init__(self, code, fn_globals, options: Options, original=None, gate=None):
        self.code = code
        self.globals = fn_globals
        self.options = options
        self.params = arg_names(code)
        self.name = code.co_qualname
        self.entries: list = []
        self._lock = CAPTURE_LOCK
        where = f"{self.name}() at {code.co_filename}:{code.co_firstlineno}"
        self.policy = RecompilePolicy(code, where, options)
        self.pipeline = CompilePipeline(code, fn_globals, self.params, options, where, self.policy, self._retire)
        self.dispatcher = Dispatcher(code, self.params, self.miss, original, gate)
        #: past the limit: [calls] the dispatcher counts, and the misses among them (Note [Past the cache limit])
        self._calls: list | None = None
        self._misses = 0

    @property
    def dispatch(self):
        return self.dispatcher.fn

    def miss(self, args: tuple, cells):
        """Capture for these arguments (or decline), then run this call."""
        if self._calls is not None:
            self._missed_past_limit()
            return FALLTHROUGH
        entry = self._entry_for(args, cells)
        # run outside the lock: the call may block on other threads that call compiled code (Note [Threads])
        return FALLTHROUGH if entry is None else entry.run(*args, cells)

    def _entry_for(self, args: tuple, cells):
        """The entry for these arguments, captured now if none matches; None when the policy declines.

        Note [Threads]: hits never lock (the dispatcher's code is swapped whole; entries are only appended). A miss
        takes CAPTURE_LOCK, one lock for every cache: capture and backends touch process-wide state (fake tensor
        modes, torch's tracing contexts), and a thread that missed while another compiled finds its entry here.
        Nothing runs user code under the lock."""
        with _compile_section():
            STATS.dispatch_misses += 1
            for entry in self.entries:  # another thread may have added a matching entry meanwhile
                if entry.guard_check(*args, cells):
                    return entry
            if not self.policy.admit(self.entries, args, cells):
                if self.policy.full(self.entries) and self._calls is None:
                    self._calls, self._misses = [1], 1
                    self.dispatcher.count_calls(self._calls, self.entries)
                return None
            entry = self.pipeline.compile(args, cells)
            self.entries.append(entry)
            self.dispatcher.update(self.entries)
            return entry

    def _missed_past_limit(self) -> None:
        """Count a miss of a full cache; at the end of a window, give up where most calls missed."""
        self._misses += 1
        calls = self._calls[0]
        if calls < PAST_LIMIT_WINDOW:
            return
        with self._lock:
            if self._calls is None or self.dispatcher.native:
                return
            if self.policy.give_up(self._misses, calls):
                self.dispatcher.go_native(True, self.entries)
            else:
                self._calls[0], self._misses = 0, 0

    def prepare(self, args: tuple, cells) -> None:
        """Make sure an entry exists for these arguments without running anything (first calls in enabled())."""
        with _compile_section():
            if any(entry.guard_check(*args, cells) for entry in self.entries):
                return
            if not self.policy.admit(self.entries, args, cells):  # a recompile: reported and learnt from as a miss
                return
            self.entries.append(self.pipeline.compile(args, cells))
            self.dispatcher.update(self.entries)

    def clear(self) -> None:
        with self._lock:
            self.entries.clear()
            self.policy.cleared()
            self._calls, self._misses = None, 0
            self.dispatcher.go_native(False, self.entries)

    def _retire(self, entry: Entry) -> None:
        """The entry runs natively from now on (a fault contained after it was made)."""
        with self._lock:
            entry.run = native_run
            entry.native = True
            self.dispatcher.update(self.entries)
