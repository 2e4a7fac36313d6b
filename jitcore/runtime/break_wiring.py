"""The wiring of a graph break: what the entry of a frame that breaks calls for the step and the continuation.

`break_steps` hands codegen the factories it needs: resume functions for each successor, step functions for an
instruction inside try/with regions, and the callable to run for a callee that the break runs natively (its
compiled copy, so the callee gets graphs of its own).
"""
from __future__ import annotations

import types

from jitcore.marks import is_disabled

__all__ = ["break_steps"]


def break_steps(code, fn_globals, captured, options):
    from jitcore.codegen.resume import resume_origin
    from jitcore.codegen.steps import BreakSteps
    from jitcore.runtime.resume_fns import resume_function, step_function
    original, offset_map = resume_origin(code)

    def resume(target, kinds, names):
        return resume_function(original, fn_globals, target, kinds, names, options)

    def native_callable(cg, value, expr):
        return _native_callable(cg, captured.ctx, value, expr, options)

    def step(target, kinds, names, tails):
        return step_function(original, fn_globals, target, kinds, names, tails)

    has_prefix = captured.gm is not None
    return BreakSteps(code, original, offset_map, resume, native_callable, has_prefix, step)


def _native_callable(cg, ctx, value, expr: str, options) -> str:
    """What the entry calls for a callee a break runs natively: a user function's compiled copy (so the callee is
    captured on its own), else the callee itself."""
    from jitcore.capture.values.function import UserFunctionValue, UserMethodValue
    from jitcore.capture.values.module import ModuleValue
    from jitcore.runtime.resume_fns import compiled_callee
    if isinstance(value, UserFunctionValue) and _compilable(value.fn):
        return cg.constant_object(compiled_callee(value.fn, options), "callee")
    if isinstance(value, UserMethodValue) and _compilable(value.fn):
        compiled = cg.constant_object(compiled_callee(value.fn, options), "callee")
        method = cg.constant_object(types.MethodType, "MethodType")
        return f"{method}({compiled}, {cg.load(value.self_value)})"
    if isinstance(value, ModuleValue) and value.source is not None and _hookless(value.module):
        forward = getattr(type(value.module), "forward", None)
        if isinstance(forward, types.FunctionType) and _compilable(forward) \
                and "forward" not in value.module.__dict__:
            value.guard_no_hooks(ctx)
            compiled = cg.constant_object(compiled_callee(forward, options), "callee")
            return f"{cg.constant_object(types.MethodType, 'MethodType')}({compiled}, {expr})"
    return expr


def _compilable(fn) -> bool:
    """A callee worth a compiled copy: a plain Python function (generators and coroutines run natively)."""
    flags = fn.__code__.co_flags
    return not is_disabled(fn) and not flags & (0x20 | 0x80 | 0x200 | 0x100)


def _hookless(module) -> bool:
    from torch.nn.modules import module as impl
    d = module.__dict__
    return not any(d.get(n) for n in ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks",
                                      "_backward_pre_hooks")) and not any(
        getattr(impl, n, None) for n in ("_global_forward_hooks", "_global_forward_pre_hooks",
                                         "_global_backward_hooks", "_global_backward_pre_hooks"))
