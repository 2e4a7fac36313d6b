"""Resume functions as callables, and compiled copies of callees that a graph break runs natively.

A resume function is made once per (original code, target offset, stack layout, live names, options): its code is
a stub (runtime/lazy_resume.py, Note [Resume functions are stubs]) with a dispatch prologue and a cache of its own,
so it is captured on its first call; the resume code it runs natively is assembled only when it does. A frame
with cell or free variables gets a maker that binds the frame's cells per call (Note [Resume functions share the
frame's cells], codegen/resume.py). The caches hold each original
code and each callee weakly; `clear()` empties them (jitcore.reset()).
Resume functions need caches and callees compiled copies, which runtime/install.py makes: it builds on cache.py,
which reaches this module through the break wiring, so install registers its makers here (`use_makers`) instead
of this module importing it back.
"""
from __future__ import annotations

import types
import weakref

from jitcore.capture.code_cache import CodeCache
from jitcore.capture.values.module import WrapperCall
from jitcore.codegen.resume import closure_names, resume_code
from jitcore.runtime import distributed, resume_chain
from jitcore.runtime.lazy_resume import stub_code
from jitcore.runtime.prologue import build_prologue_code

__all__ = ["resume_function", "step_function", "compiled_callee", "use_makers", "clear"]

#: original code -> {(target, kinds, names, options): resume function or maker}
_RESUMES = CodeCache()
#: original code -> {(target, kinds, names, tails): step function}
_STEPS = CodeCache()
#: original code -> {(target, kinds, names, options): the resume function's recompile policy}
_RESUME_POLICIES = CodeCache()
#: function (or a capture.values.module.WrapperCall marker) -> {options: its compiled copy}
_CALLEES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


class _Makers:
    """install.py's `new_cache(code, fn_globals, options)` and `compiled_function(fn, options)`."""

    new_cache = None
    compiled_function = None


_MAKERS = _Makers()


def use_makers(new_cache, compiled_function) -> None:
    """Called once by runtime/install.py: how a resume function gets its cache and a callee its compiled copy."""
    _MAKERS.new_cache = new_cache
    _MAKERS.compiled_function = compiled_function


def resume_function(original, fn_globals, target: int, kinds: tuple, names: tuple, options, inherited=None,
                    structural=()):
    """`inherited`: what the capture that breaks here had made dynamic in the live locals ({name: dims} of tensors
    with symbolic sizes, {name: None} for symbolic numbers); the resume function's shape policy takes it over,
    so it does not learn each size again. `structural`: the names of arguments it captures by structure (Note
    [Instances shared by structure])."""
    per_code = _RESUMES.setdefault(original, {})
    key = (target, kinds, names, options)
    found = per_code.get(key)
    if found is not None:
        if inherited or structural:
            _RESUME_POLICIES.setdefault(original, {})[key].inherit(inherited or {}, structural)
        return found
    # Note [Resume codes carry the user's names] (codegen/resume.py)
    label = original.co_name
    code = stub_code(original, fn_globals, target, kinds, names)
    cache = _MAKERS.new_cache(code, fn_globals, options)
    _RESUME_POLICIES.setdefault(original, {})[key] = cache.policy
    if inherited or structural:
        cache.policy.inherit(inherited or {}, structural)
    prologue = build_prologue_code(code, cache.dispatch)
    resume_chain.note_stub(code, prologue)
    if closure_names(original):
        def make(cells, _code=prologue, _globals=fn_globals, _label=label):
            return types.FunctionType(_code, _globals, _label, None, cells)
        found = make
    else:
        found = types.FunctionType(prologue, fn_globals, label)
    per_code[key] = found
    return found


def step_function(original, fn_globals, target: int, kinds: tuple, names: tuple, tails: dict):
    """A plain function running the instruction at `target` of `original` inside its try/with regions, then
    returning `tails[successor][2](...)`: the resume function of wherever the instruction went."""
    per_code = _STEPS.setdefault(original, {})
    key = (target, kinds, names, tuple(sorted((o, k, n, id(c)) for o, (k, n, c) in tails.items())))
    found = per_code.get(key)
    if found is None:
        # the step is called by a chain's driver, which its tails hand their resume function back to (Note
        # [Resume chains run in a loop], runtime/resume_chain.py)
        cells = bool(closure_names(original))
        tails = {o: (k, n, resume_chain.handed(c, cells)) for o, (k, n, c) in tails.items()}
        code = resume_code(original, target, kinds, names, tails)
        if cells:
            def make(cells, _code=code, _globals=fn_globals, _label=original.co_name):
                return types.FunctionType(_code, _globals, _label, None, cells)
            found = make
        else:
            found = types.FunctionType(code, fn_globals, original.co_name)
        per_code[key] = found
    return found


def compiled_callee(fn, options, shared=()):
    """fn's compiled copy for these options, so a callee that a break runs natively gets graphs of its own.
    `shared`: guard paths of its parameters (the receiver, an argument, an item of `*args`) where the copy will
    see several objects of one kind (Note [Sharing follows the arguments], capture/continuation.py): the copy
    captures them by structure from now on, instead of by identity first."""
    per_fn = _CALLEES.get(fn)
    if per_fn is None:
        per_fn = _CALLEES[fn] = {}
    compiled = per_fn.get(options)
    if compiled is None:
        if isinstance(fn, WrapperCall):
            # a DDP or FSDP-managed module: its own call runs natively, the forward underneath compiled
            compiled = distributed.wrapper_call(fn.kind, lambda forward: _MAKERS.compiled_function(forward, options))
        else:
            compiled = _MAKERS.compiled_function(fn, options)
        per_fn[options] = compiled
    if shared and not isinstance(fn, WrapperCall):
        compiled._jitcore_cache.policy.share(shared)
    return compiled


def clear() -> None:
    _RESUMES.clear()
    _RESUME_POLICIES.clear()
    _STEPS.clear()
    _CALLEES.clear()
    distributed.clear()
