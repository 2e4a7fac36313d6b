"""Cache entries and how they are assembled: the guard function, compiled and native entries, pinned parameters.

An `Entry` is what a dispatcher tries: `guard_check(*args, cells)` says whether it fits a call, `run(*args, cells)`
runs it (or returns FALLTHROUGH, which runs the frame's original body). `EntryAssembly` makes the entries of one
frame: `guards(collected)` compiles the (source, check) pairs capture gathered into one guard function,
`module_state(...)` folds the checks on module state into one batched check (runtime/guard_batch.py) and says which
parameters the entry may pass to its graph directly, `compiled(...)` and `native(...)` make the entries.
`ALWAYS` is the guard of an entry made after a fault while building guards: it matches every call.
"""
from __future__ import annotations

import dataclasses
import weakref

from jitcore import guards
from jitcore.capture.breaks import GraphBreak
from jitcore.capture.shapes import guard_tree_of
from jitcore.runtime.guard_batch import batch_module_guards, source_reader
from jitcore.guards.identity import address
from jitcore.runtime.prologue import FALLTHROUGH
from jitcore.runtime.stats import STATS

__all__ = ["Entry", "EntryAssembly", "ModuleState", "ALWAYS", "native_run"]


@dataclasses.dataclass
class Entry:
    """One cache entry. `guard_function` is the compiled guard (its `check` is `guard_check`; reports ask it for
    `failures`); `native` entries run the original body; `gm`, `op_count`, `break_reason` and `compile_seconds`
    are what reports show of a compiled one."""
    guard_check: object
    run: object
    guard_function: object
    native: bool
    gm: object = None
    op_count: int = 0
    break_reason: GraphBreak | None = None
    compile_seconds: dict = dataclasses.field(default_factory=dict)
    #: calls whose compiled graph raised (and ran natively instead); the pipeline retires the entry at a limit
    raises: int = 0


def native_run(*args):
    """The run of a native entry: the dispatcher runs the frame's original body."""
    return FALLTHROUGH


@dataclasses.dataclass
class ModuleState:
    """The guards of one capture with module state batched, and what the batch pins by identity."""
    #: the (source, check) pairs to compile, the batched check among them
    guards: list
    #: source -> the parameter or buffer the entry passes to its graph as it is
    pinned: dict
    #: the modules those parameters belong to (the entry lets go of them when one dies)
    owners: list


class EntryAssembly:
    """Makes the entries of one frame: guards over its parameters, globals and builtins."""

    def __init__(self, params: tuple, fn_globals: dict):
        self.params = params
        self.globals = fn_globals
        self.builtins = _builtins_of(fn_globals)

    def guards(self, collected, examples=None):
        """The compiled guard function for (source, check) pairs; a None source marks a root check. `examples`:
        the live arguments of the capture, which lets tensor checks on arguments merge into one."""
        tree = guard_tree_of(collected)
        return guards.compile_tree(tree, list(self.params), self.globals, self.builtins, examples)

    def module_state(self, collected, args, cells, structural=frozenset()) -> ModuleState:
        """The collected guards with the checks on module state folded into one, read from the live call; the
        checks on paths captured by structure are left as they are (the batch pins objects by identity)."""
        read = source_reader(self.params, args, cells, self.globals, self.builtins)
        pinned: dict = {}
        batched = batch_module_guards(collected, read, pinned, structural)
        owners = pinned.pop(None, [])
        return ModuleState(batched, pinned, owners)

    def native(self, guard_fn, reason: GraphBreak | None = None, run=native_run) -> Entry:
        """`run`: what the entry runs instead of the original body (a loop's frame with its callees compiled:
        runtime/loop_native.py)."""
        STATS.native_entries += 1
        return Entry(guard_fn.check, run, guard_fn, native=True, break_reason=reason)

    def compiled(self, captured, run, guard_fn, owners, timings: dict) -> Entry:
        _release_with(owners, run)
        return Entry(guard_fn.check, run, guard_fn, native=False, gm=captured.gm, op_count=captured.op_count,
                     break_reason=captured.break_point.reason if captured.break_point else None,
                     compile_seconds=timings)


def _release_with(owners, run) -> None:
    """When a module whose parameters an entry passes directly dies, drop them from the entry (its batched guard
    fails from then on, so the entry never runs again): a cache never keeps a dropped model's tensors alive."""
    if not owners:
        return
    ref = weakref.ref(run)
    for owner in {address(o): o for o in owners}.values():
        weakref.finalize(owner, _drop_pinned, ref)


def _drop_pinned(ref) -> None:
    run = ref()
    if run is not None:
        namespace = run.__globals__
        for name in [n for n in namespace if n.startswith("___param")]:
            namespace[name] = None


class _AlwaysGuard:
    """The guard of a native entry made after an internal fault: it matches everything, built without guards/."""

    tree = guards.GuardTree()

    @staticmethod
    def check(*args):
        return True

    @staticmethod
    def failures(args, cells):
        return []

    @staticmethod
    def failed_checks(args, cells):
        return []


ALWAYS = _AlwaysGuard()


def _builtins_of(fn_globals) -> dict:
    """The builtins namespace a function with these globals sees."""
    b = fn_globals.get("__builtins__", __builtins__)
    return b if isinstance(b, dict) else vars(b)
