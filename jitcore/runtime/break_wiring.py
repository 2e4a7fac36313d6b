"""The runtime's side of a graph break: the resume-function factory that codegen's break steps ask.

`break_steps(code, fn_globals, captured, options)` -> codegen's `BreakSteps` for a frame that stopped at a break,
given a `FrameResumes`: codegen.steps.ResumeFactory for the frame's original code, making resume functions (each
with a cache of its own), step functions, and compiled copies of callees that the break runs natively
(runtime/resume_fns.py). Which callee gets a compiled copy was decided, and guarded, during capture.
"""
from __future__ import annotations

from jitcore.codegen.resume import resume_origin
from jitcore.codegen.steps import BreakSteps
from jitcore.runtime.resume_fns import compiled_callee, resume_function, step_function

__all__ = ["break_steps", "FrameResumes"]


class FrameResumes:
    """codegen.steps.ResumeFactory for frames of one original code, run with these globals and options."""

    def __init__(self, original, fn_globals, options):
        self.original = original
        self.globals = fn_globals
        self.options = options

    def resume(self, target: int, kinds: tuple, names: tuple):
        return resume_function(self.original, self.globals, target, kinds, names, self.options)

    def step(self, target: int, kinds: tuple, names: tuple, tails: dict):
        return step_function(self.original, self.globals, target, kinds, names, tails)

    def callee(self, fn):
        return compiled_callee(fn, self.options)


def break_steps(code, fn_globals, captured, options) -> BreakSteps:
    original, _ = resume_origin(code)
    return BreakSteps(code, FrameResumes(original, fn_globals, options), has_prefix=captured.gm is not None)
