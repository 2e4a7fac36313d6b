"""Resume functions as callables, and compiled copies of callees that a graph break runs natively.

A resume function is made once per (original code, target offset, stack layout, live names, options): its code is
codegen.resume's, with a dispatch prologue and a cache of its own, so it is captured on its first call. A frame
with free variables gets a maker that binds the running closure's cells per call.
"""
from __future__ import annotations

import dis
import types
import weakref

from jitcore.codegen.resume import resume_code

__all__ = ["resume_function", "step_function", "compiled_callee", "clear"]

_RESUMES: dict = {}
_CALLEES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _line_of(code, offset: int) -> int:
    line = code.co_firstlineno
    for inst in dis.get_instructions(code):
        if inst.starts_line is not None:
            line = inst.starts_line
        if inst.offset >= offset:
            return line
    return line


def resume_function(original, fn_globals, target: int, kinds: tuple, names: tuple, options):
    from jitcore.runtime.install import new_cache
    from jitcore.runtime.prologue import build_prologue_code
    key = (original, target, kinds, names, options)
    found = _RESUMES.get(key)
    if found is not None:
        return found
    label = f"jitcore_resume_in_{original.co_name}_at_{_line_of(original, target)}"
    code = resume_code(original, target, kinds, names, label)
    cache = new_cache(code, fn_globals, options)
    prologue = build_prologue_code(code, cache.dispatch)
    if original.co_freevars:
        def make(cells, _code=prologue, _globals=fn_globals, _label=label):
            return types.FunctionType(_code, _globals, _label, None, cells)
        found = make
    else:
        found = types.FunctionType(prologue, fn_globals, label)
    _RESUMES[key] = found
    return found


def step_function(original, fn_globals, target: int, kinds: tuple, names: tuple, tails: dict):
    """A plain function running the instruction at `target` of `original` inside its try/with regions, then
    returning `tails[successor](...)`: the resume function of wherever the instruction went."""
    key = ("step", original, target, kinds, names, tuple(sorted((o, id(c)) for o, (_, c) in tails.items())))
    found = _RESUMES.get(key)
    if found is None:
        label = f"jitcore_step_in_{original.co_name}_at_{_line_of(original, target)}"
        code = resume_code(original, target, kinds, names, label, tails)
        found = _RESUMES[key] = types.FunctionType(code, fn_globals, label)
    return found


def compiled_callee(fn, options):
    """fn's compiled copy for these options, so a callee that a break runs natively gets graphs of its own."""
    from jitcore.runtime.install import compiled_function
    per_fn = _CALLEES.get(fn)
    if per_fn is None:
        per_fn = _CALLEES[fn] = {}
    compiled = per_fn.get(options)
    if compiled is None:
        compiled = per_fn[options] = compiled_function(fn, options)
    return compiled


def clear() -> None:
    _RESUMES.clear()
    _CALLEES.clear()
