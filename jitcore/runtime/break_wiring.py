"""The runtime's side of a graph break: the resume-function factory that codegen's break steps ask.

`break_steps(fn_globals, captured, options)` -> codegen's `BreakSteps` for a frame that stopped at a break,
given a `FrameResumes`: codegen.steps.ResumeFactory for the frame's original code, making resume functions (each
with a cache of its own), step functions, and compiled copies of callees that the break runs natively
(runtime/resume_fns.py). Which callee gets a compiled copy was decided, and guarded, during capture.
"""
from __future__ import annotations

import torch
from torch.fx.experimental.symbolic_shapes import is_concrete_int

from jitcore.capture.resume_points import resume_point
from jitcore.capture.values.base import Value
from jitcore.capture.values.symint import SymIntValue
from jitcore.capture.values.tensor import TensorValue
from jitcore.codegen.resume import resume_origin
from jitcore.codegen.steps import CALL_RESULT, BreakSteps
from jitcore.runtime import resume_chain
from jitcore.runtime.resume_fns import compiled_callee, resume_function, step_function

__all__ = ["break_steps", "FrameResumes"]


class FrameResumes:
    """codegen.steps.ResumeFactory for frames of one original code, run with these globals and options."""

    def __init__(self, original, fn_globals, options, inherited=None, structural=frozenset(), code=None,
                 structural_slots=frozenset()):
        self.original = original
        #: the code the breaking frame ran (a resume stub's, whose entries take a chain's ticket)
        self.code = code
        self.globals = fn_globals
        self.options = options
        #: live locals that were dynamic in the capture that broke: {name: symbolic dims, or None for a number}
        self.inherited = inherited or {}
        #: the live locals the capture held by structure or made itself: Note [Instances shared by structure]
        self.structural = structural
        #: the same for the values on the break's stack, by their index there
        self.structural_slots = structural_slots

    def resume(self, target: int, kinds: tuple, names: tuple, carried: tuple = ()):
        inherited = {name: self.inherited[name] for name in names if name in self.inherited}
        structural = tuple(name for name in names if name in self.structural)
        # a stack slot handed on is the resume function's `___stack<j>` parameter
        structural += tuple(f"___stack{j}" for j, slot in enumerate(carried) if slot in self.structural_slots)
        return resume_function(self.original, self.globals, target, kinds, names, self.options, inherited,
                               structural)

    def step(self, target: int, kinds: tuple, names: tuple, tails: dict):
        return step_function(self.original, self.globals, target, kinds, names, tails)

    def callee(self, fn, shared=()):
        return compiled_callee(fn, self.options, shared)

    def handover(self):
        return resume_chain.handover

    def ticket(self):
        key = resume_chain.ticket_of(self.code) if self.code is not None else None
        return None if key is None else (resume_chain.take, key)


def break_steps(fn_globals, captured, options) -> BreakSteps:
    point = captured.break_point
    # the code the frame ran: a resume stub's capture runs its original (capture/resume_points.py)
    original, _ = resume_origin(point.code)
    resumes = FrameResumes(original, fn_globals, options, _dynamic_locals(point.locals),
                           _structural_names(point, captured.ctx), code=captured.ctx.code,
                           structural_slots=_structural_slots(point, captured.ctx))
    return BreakSteps(point.code, resumes, has_prefix=captured.gm is not None,
                      stub=resume_point(captured.ctx.code) is not None)


def _structural_names(point, ctx) -> frozenset:
    """The live locals a resume function receives that this capture made itself (a new object on every call: a
    module built inside, a nested function, a container holding them) or held by structure: the resume function
    captures them, and what it reads through them, by structure from its first call instead of recompiling once
    per object (Note [Instances shared by structure])."""
    return frozenset(name for name, value in point.locals.items() if _shared(value, ctx))


def _structural_slots(point, ctx) -> frozenset:
    """The same for the values on the break's stack (`self.drop_path` waiting for its argument's call to come
    back), by their index there."""
    slots = frozenset(i for i, value in enumerate(point.stack) if _shared(value, ctx))
    if point.callee is not None and point.callee.new_result:
        # `nn.Sequential(*blocks)` run at the break: a new object on every call, as one made by the capture is
        slots |= {CALL_RESULT}
    return slots


def _shared(value, ctx) -> bool:
    if isinstance(value, Value):
        return value.source is None or ctx.by_structure(value.source)
    # an argument the capture never read before the break (`self` of a block whose first line breaks)
    source = getattr(value, "source", None)
    return source is not None and ctx.by_structure(source)


def _dynamic_locals(live: dict) -> dict:
    """The live locals a resume function receives with symbolic sizes: tensors (their symbolic dims) and
    symbolic numbers (None)."""
    found = {}
    for name, value in live.items():
        if isinstance(value, TensorValue) and isinstance(value.fake, torch.Tensor):
            dims = frozenset(d for d, size in enumerate(value.fake.shape) if isinstance(size, torch.SymInt)
                             and not is_concrete_int(size))
            if dims:
                found[name] = dims
        elif isinstance(value, SymIntValue) and value.is_symbolic_number():
            found[name] = None
    return found
