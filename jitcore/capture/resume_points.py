"""Resume stubs: small code objects that stand for "the original code, continued at an offset".

A resume function's code is a stub (runtime/lazy_resume.py): its parameters are the stack slots and live locals
handed over at a graph break, and it holds no copy of the original body. Capture runs a stub by interpreting the
*original* code from the target offset with the stack rebuilt from the stub's parameters (`FrameState.root`), so
a function with many breaks never assembles, disassembles or analyses its rest once per break (Note [Resume
functions are stubs] in runtime/lazy_resume.py). The runtime records each stub here (`note_resume_point`);
capture, codegen and the report read it (`resume_point`). The original is held weakly: resume functions live in
caches keyed by their original, and a strong reference back would keep both alive for good. An entry lives as long
as its stub (`jit.reset()` leaves it: a resume function still referenced must still continue where it did).
"""
from __future__ import annotations

import dataclasses
import weakref

from jitcore.capture.code_cache import CodeCache

__all__ = ["ResumePoint", "note_resume_point", "resume_point"]


@dataclasses.dataclass(frozen=True)
class ResumePoint:
    """Where a stub continues: `target`, an instruction offset of the original code; `kinds`, "value" or "null"
    per stack slot there, bottom first (each "value" slot is a parameter `___stack<i>`, in order, before the live
    locals)."""
    original_ref: weakref.ref
    target: int
    kinds: tuple

    @property
    def original(self):
        return self.original_ref()

    @property
    def stack_names(self) -> tuple:
        return tuple(f"___stack{i}" for i in range(sum(kind == "value" for kind in self.kinds)))


#: stub code -> its ResumePoint
_POINTS = CodeCache()


def note_resume_point(stub, original, target: int, kinds: tuple) -> ResumePoint:
    point = ResumePoint(weakref.ref(original), target, tuple(kinds))
    _POINTS[stub] = point
    return point


def resume_point(code) -> ResumePoint | None:
    """The resume point a stub stands for, or None for any other code (or a stub whose original died)."""
    point = _POINTS.get(code)
    return point if point is not None and point.original is not None else None
