"""The recompile policy of one cache: whether a miss may make a new entry, what it reports, what becomes dynamic.

On a miss, `FrameCache` asks `admit(entries, args, cells)`. Past `cache_limit` the answer is no (reported once: the
call runs natively). Otherwise a miss with entries is a recompile: it is reported with what changed, measured
against the newest entry, and the policy learns from it which Python numbers become dynamic, i.e. graph inputs
instead of constants (automatic dynamic; never under `dynamic=False`). `dynamic()` is the one value handed to the
next capture: what it treats as dynamic. `refuse_dynamic_floats()` is the fallback after a backend refused a graph
with a dynamic float input: floats become constants again.

The shape policy is part of it (`Dynamic.shapes`, a capture.shapes.ShapeChoice): under `dynamic=None` (automatic)
shapes are static until an entry misses because input sizes changed; then exactly the dims that changed (in every
input whose TensorMatch failed, not only the first) get symbolic sizes in every later capture, reported as
`x.shape[0] changed 4 -> 7: now dynamic`. `dynamic=True` makes every dim of every input dynamic from the first
call, `dynamic=False` none but the marked dims (as torch.compile). Parameters and buffers stay static; `jit.mark_dynamic`,
`maybe_mark_dynamic` and `mark_static` are read from the tensors by capture (capture/shapes.py).

Module instances are learnt the same way (`Dynamic.structural`): an entry that missed because a module or a
function on some path is another object of the same kind makes that path structural, so the next capture guards the
object by type and structure, and one entry serves every instance (Note [Instances shared by structure],
capture/values/module.py); under any `dynamic` setting. A compiled copy of a callee whose receiver is known to
repeat (a block beside a twin) is told so before its first capture (`inherit`).
"""
from __future__ import annotations

import dataclasses
import types

import torch

from jitcore.guards import (BatchIdentityMatch, EqualsMatch, IdMatch, IntPredicateMatch, ShapeRelationMatch,
                            TensorMatch, TypeMatch)
from jitcore import events
from jitcore.capture.shapes import ShapeChoice

__all__ = ["Dynamic", "RecompilePolicy"]

#: the guard steps that read an iterator's absolute position (read relative to it, an iterator needs no such step:
#: Note [Iterators carried across a break])
_ITERATOR_STATE_STEPS = frozenset({("iterstate", "pos")})


@dataclasses.dataclass(frozen=True)
class Dynamic:
    """What one capture treats as dynamic."""
    #: guard paths of Python ints and floats captured as graph inputs (SymInt, SymFloat) instead of constants
    numbers: frozenset = frozenset()
    #: which tensor dims get symbolic sizes
    shapes: ShapeChoice = ShapeChoice()
    #: guard paths of modules and functions captured by type and structure instead of identity
    structural: frozenset = frozenset()


class RecompilePolicy:
    """The limits and what-is-dynamic state of one FrameCache; called with the cache's lock held."""

    def __init__(self, code, where: str, options):
        self.code = code
        #: the frame as messages name it
        self.where = where
        self.limit = options.cache_limit
        #: dynamic=False asks for everything static: nothing is learnt
        self.learns = options.dynamic is not False
        self.limit_reported = False
        #: guard paths of numbers that changed between calls: captured as graph inputs from now on
        self.dynamic_paths: frozenset = frozenset()
        #: the dynamic paths that hold floats; `static_floats` once a backend refused a float graph input
        self.float_paths: frozenset = frozenset()
        self.static_floats = False
        self.shape_mode = options.dynamic
        #: (guard path, dim) of tensor dims whose size changed between calls: symbolic from now on
        self.varied_dims: frozenset = frozenset()
        #: why each varied dim is dynamic, for reports (explain): (path, dim) -> "changed 4 -> 7 at a recompile"
        self.dim_reasons: dict = {}
        #: guard paths of modules and functions whose identity changed between calls: captured by structure
        self.structural_paths: frozenset = frozenset()
        #: guard path -> sizes of each tensor input with symbolic dims, as the newest capture saw them: under
        #: dynamic=True, a dim whose size changed since gets a symbol of its own (`_learn_duck_dims`)
        self.seen_sizes: dict = {}

    def full(self, entries) -> bool:
        return len(entries) >= self.limit

    def admit(self, entries, args, cells) -> bool:
        """May a miss with these arguments make a new entry? Reports the limit or the recompile, and learns."""
        if self.full(entries):
            self._report_limit(entries, args, cells)
            return False
        if entries:
            learnt = self._learn_dims(entries, args, cells)
            self._learn_duck_dims(entries, args, cells)
            self._report_recompile(entries, args, cells, learnt)
            self._learn(entries, args, cells)
            self._learn_structural(entries, args, cells)
        return True

    def dynamic(self) -> Dynamic:
        reasons = tuple((key, why) for key, why in self.dim_reasons.items() if key in self.varied_dims)
        return Dynamic(self.dynamic_paths, ShapeChoice(self.shape_mode, self.varied_dims, reasons),
                       self.structural_paths)

    def inherit(self, dynamic_locals: dict, structural_names=()) -> None:
        """A resume function's policy takes over what the frame that broke into it had made dynamic: tensor dims
        ({name: dims}) and numbers ({name: None}) of the live locals it receives as arguments; and the arguments it
        receives that the frame held by structure or made itself (`structural_names`), captured by structure from
        the first call."""
        self.share((("local", name),) for name in structural_names)
        if self.shape_mode is not None:
            return
        for name, dims in dynamic_locals.items():
            path = (("local", name),)
            if dims is None:
                if self.learns and type(name) is str:
                    self.dynamic_paths = self.dynamic_paths | {path}
            else:
                self.varied_dims = self.varied_dims | {(path, d) for d in dims}
                for d in dims:
                    self.dim_reasons.setdefault((path, d), "dynamic in the frame whose graph break handed it over")

    def share(self, paths) -> None:
        """Objects on these guard paths are captured by type and structure from the next capture on (Note
        [Instances shared by structure])."""
        self.structural_paths = self.structural_paths | frozenset(paths)

    def adopt(self, other: "RecompilePolicy") -> None:
        """Start from what `other` learnt (dims and numbers made dynamic, and why): explain()'s copy of a function
        compiles what the user's own calls compile now."""
        self.varied_dims = other.varied_dims
        self.dim_reasons = dict(other.dim_reasons)
        self.dynamic_paths, self.float_paths = other.dynamic_paths, other.float_paths
        self.static_floats = other.static_floats

    def note_shapes(self, captured, shapes) -> None:
        """A capture's shape guards were made; a dim marked dynamic that tracing made a constant is reported."""
        self.seen_sizes.update((source.path, sizes) for source, sizes in shapes.sizes.items())
        if shapes.violation:
            events.emit("recompiles", f"{self.where}: a dim marked with mark_dynamic became a constant while "
                        f"tracing ({shapes.violation}); the entry is specialised to its size",
                        key=("mark_violation", self.code, shapes.violation), code=self.code)

    def refuse_dynamic_floats(self) -> bool:
        """A backend refused a graph. AOTAutograd cannot always turn a Python float input into a tensor (torch's
        TensorifyScalarRestartAnalysis, which Dynamo answers by specialising the float): when the graph had dynamic
        floats, they are constants from now on. True when that changed what is dynamic (worth capturing again)."""
        if self.static_floats or not self.dynamic_paths & self.float_paths:
            return False
        self.static_floats = True
        self.dynamic_paths = self.dynamic_paths - self.float_paths
        return True

    def give_up(self, misses: int, calls: int) -> bool:
        """Past the limit, `misses` of the last `calls` calls matched no entry: should the frame stop trying its
        entries and run natively (Note [Past the cache limit], runtime/cache.py)? Reported once when it does."""
        if misses * 2 <= calls:
            return False
        events.emit("recompiles", f"{self.where}: {misses} of the last {calls} calls matched none of its "
                    f"{self.limit} entries (cache_limit={self.limit}); it runs natively from now on, without "
                    "trying them", key=("gave up", self.code), always=True, code=self.code, limit=self.limit,
                    gave_up=(misses, calls))
        return True

    def cleared(self) -> None:
        """The cache dropped its entries: the limit may be reported again; what was learnt stays."""
        self.limit_reported = False

    def _learn(self, entries, args, cells) -> None:
        """A number whose change made an entry miss is captured as a graph input from now on; an iterator whose
        absolute position changed (a list iterator followed by position once its list changed) is left to Python
        from then on (values/iterator_input.py)."""
        if not self.learns:
            return
        changed = set()
        kinds = (int,) if self.static_floats else (int, float)
        for entry in entries:
            for path, _, check, value, _ in entry.guard_function.failed_checks(args, cells):
                if path and path[-1] in _ITERATOR_STATE_STEPS:
                    # a list iterator followed by absolute position, handed over at another one: from now on it
                    # stays a Python iterator and each resume takes one item (no entry per position)
                    changed.add(path[:-1])
                    continue
                if isinstance(check, EqualsMatch) and type(check.value) in kinds \
                        and type(value) is type(check.value):
                    changed.add(path)
                    if type(value) is float:
                        self.float_paths = self.float_paths | {path}
        if changed:
            self.dynamic_paths = self.dynamic_paths | changed

    def _learn_structural(self, entries, args, cells) -> None:
        """A module or Python function whose identity made an entry miss (another instance of the same kind, or
        the one compiled for is gone) is captured by structure from now on, with everything read through it."""
        learnt = set()
        for entry in entries:
            for path, _, check, value, _ in entry.guard_function.failed_checks(args, cells):
                if path and isinstance(check, IdMatch) and isinstance(value, (torch.nn.Module, types.FunctionType)):
                    learnt.add(path)
        if learnt:
            self.structural_paths = self.structural_paths | learnt

    def _learn_dims(self, entries, args, cells) -> list:
        """Automatic dynamic shapes: every dim whose size made a TensorMatch fail (in any entry, for every input)
        gets a symbol in the next captures. Returns the messages of the dims that turned dynamic now. Under
        dynamic=True too, as torch.compile's: a dim captured as 0 or 1, or made a constant by tracing, that changed
        gets a symbol of its own (DYNAMIC) rather than a duck one that may equal another dim's by chance."""
        if self.shape_mode is False:
            return []
        learnt = []
        varied = set(self.varied_dims)
        for entry in entries:
            for path, user_name, check, value, _ in entry.guard_function.failed_checks(args, cells):
                if not isinstance(check, TensorMatch) or not hasattr(value, "size") \
                        or value.dim() != len(check.sizes):
                    continue
                for dim, (want, got) in enumerate(zip(check.sizes, value.size())):
                    if want is not None and want != got and (path, dim) not in varied:
                        varied.add((path, dim))
                        self.dim_reasons[(path, dim)] = f"changed {want} -> {got} at a recompile"
                        learnt.append(f"{user_name}.shape[{dim}] changed {want} -> {got}: now dynamic")
        self.varied_dims = frozenset(varied)
        return learnt

    def _learn_duck_dims(self, entries, args, cells) -> None:
        """Under dynamic=True, dims of equal size share a symbol guarded by their equality (Note [Duck shapes
        under dynamic=True], capture/shapes.py). When such a relation fails, each dim of its inputs whose size
        changed since it was captured gets a symbol of its own from now on (DYNAMIC), as torch.compile's automatic
        dynamic does: a size that varies is no evidence of an equality. The failed relation is the report."""
        if self.shape_mode is not True:
            return
        varied = set(self.varied_dims)
        for entry in entries:
            for paths, _, check, values, _ in entry.guard_function.failed_checks(args, cells):
                if not isinstance(check, ShapeRelationMatch) or values is None:
                    continue
                for path, value in zip(paths, values):
                    seen = self.seen_sizes.get(path)
                    if seen is None or not isinstance(value, torch.Tensor) or value.dim() != len(seen):
                        continue
                    for dim, (was, now) in enumerate(zip(seen, value.size())):
                        if was != now and (path, dim) not in varied:
                            varied.add((path, dim))
                            self.dim_reasons[(path, dim)] = f"changed {was} -> {now} at a recompile"
        self.varied_dims = frozenset(varied)

    # -- reports ----------------------------------------------------------------------------------------------
    @staticmethod
    def _failure_reasons(entries, args, cells) -> list:
        """Why the newest entry does not fit these arguments: comparing with every stale entry would repeat the
        same change once per entry (`x.shape[0] changed 4 -> 7`, then `5 -> 7`, ...)."""
        for entry in reversed(entries):
            reasons = entry.guard_function.failures(args, cells)
            if reasons:
                return reasons
        return []

    def _report_recompile(self, entries, args, cells, learnt=()) -> None:
        reasons = self._failure_reasons(entries, args, cells)
        if learnt:
            # the size changes say it better: `x.shape[0] changed 4 -> 7: now dynamic`
            reasons = list(learnt) + [r for r in reasons if ": shape[" not in r]
        number = len(entries) + 1
        events.emit("recompiles", f"recompiling {self.where} (entry {number}): "
                    + ("; ".join(reasons[:3]) or "no entry matched"), key=("recompile", self.code, tuple(reasons)),
                    code=self.code, reasons=reasons, entries=number, cache_limit=self.limit)

    def _report_limit(self, entries, args, cells) -> None:
        if self.limit_reported:
            return
        self.limit_reported = True
        reasons = self._failure_reasons(entries, args, cells)
        events.emit("recompiles", f"{self.where} hit cache_limit={self.limit}; new variants run natively. "
                    f"Changing: {'; '.join(reasons[:3]) or 'unknown'}. Consider dynamic shapes, jit.disable, "
                    f"or a larger cache_limit.", key=("limit", self.code), always=True,
                    code=self.code, reasons=reasons, limit=self.limit,
                    changing=_what_changes(entries, args, cells))


def _what_changes(entries, args, cells) -> list:
    """`"<kind> <user name>"` for each check of the newest failing entry, where kind says what sort of value keeps
    changing, so the cache-limit hint fits it: `shape` (a tensor's sizes), `number` (a Python scalar), `object` (a
    different object: another module instance as `self`), `type`, or `other`."""
    for entry in reversed(entries):
        found = []
        for _, user_name, check, value, _ in entry.guard_function.failed_checks(args, cells):
            found.append(f"{_change_kind(check, value)} {user_name}")
        if found:
            return found
    return []


def _change_kind(check, value) -> str:
    if isinstance(check, ShapeRelationMatch):
        return "shape"
    if isinstance(check, TensorMatch):
        sizes = getattr(value, "shape", None)
        return "shape" if sizes is not None and tuple(check.sizes) != tuple(sizes) else "other"
    if isinstance(check, (EqualsMatch, IntPredicateMatch)) and isinstance(value, (int, float, str)):
        return "number"
    if isinstance(check, (IdMatch, BatchIdentityMatch)):
        return "object"
    if isinstance(check, TypeMatch):
        return "type"
    return "other"
