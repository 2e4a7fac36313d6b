"""The cache of one code object compiled with one set of options: its entries, its lock, its dispatcher.

On a miss, `FrameCache` asks its recompile policy (runtime/policy.py) whether a new entry may be made and has the
compile pipeline (runtime/pipeline.py) make it: a compiled entry, or a *native* one that runs the original body
under the guards gathered so far (a frame that cannot be captured is not captured again for the same guards). Past
`cache_limit` a call runs natively. Entries are assembled by runtime/entry.py.
"""
from __future__ import annotations

import dataclasses
import threading

from jitcore.capture.frame import arg_names
from jitcore.runtime.dispatch import Dispatcher
from jitcore.runtime.entry import Entry, native_run
from jitcore.runtime.pipeline import CompilePipeline
from jitcore.runtime.policy import RecompilePolicy
from jitcore.runtime.prologue import FALLTHROUGH
from jitcore.runtime.stats import STATS

__all__ = ["FrameCache", "Entry", "Options", "STATS", "CAPTURE_LOCK"]

#: held while any cache captures or compiles (Note [Threads]); re-entrant: a capture may compile a callee's copy
CAPTURE_LOCK = threading.RLock()


@dataclasses.dataclass(frozen=True)
class Options:
    backend: object          # the backend callable
    backend_name: str
    fullgraph: bool = False
    dynamic: object = None
    cache_limit: int = 8


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

    @property
    def dispatch(self):
        return self.dispatcher.fn

    def miss(self, args: tuple, cells):
        """Capture for these arguments (or decline), then run this call."""
        entry = self._entry_for(args, cells)
        # run outside the lock: the call may block on other threads that call compiled code (Note [Threads])
        return FALLTHROUGH if entry is None else entry.run(*args, cells)

    def _entry_for(self, args: tuple, cells):
        """The entry for these arguments, captured now if none matches; None when the policy declines.

        Note [Threads]: hits never lock (the dispatcher's code is swapped whole; entries are only appended). A miss
        takes CAPTURE_LOCK, one lock for every cache: capture and backends touch process-wide state (fake tensor
        modes, torch's tracing contexts), and a thread that missed while another compiled finds its entry here.
        Nothing runs user code under the lock."""
        with self._lock:
            STATS.dispatch_misses += 1
            for entry in self.entries:  # another thread may have added a matching entry meanwhile
                if entry.guard_check(*args, cells):
                    return entry
            if not self.policy.admit(self.entries, args, cells):
                return None
            entry = self.pipeline.compile(args, cells)
            self.entries.append(entry)
            self.dispatcher.update(self.entries)
            return entry

    def prepare(self, args: tuple, cells) -> None:
        """Make sure an entry exists for these arguments without running anything (first calls in enabled())."""
        with self._lock:
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
            self.dispatcher.update(self.entries)

    def _retire(self, entry: Entry) -> None:
        """The entry runs natively from now on (a fault contained after it was made)."""
        with self._lock:
            entry.run = native_run
            entry.native = True
            self.dispatcher.update(self.entries)
