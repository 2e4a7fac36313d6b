"""What an entry does at a graph break: rebuild the frame's stack and live locals, run the breaking instruction
in Python where it can be written as Python, and continue in a resume function.

Expressible steps: a call (CALL, CALL_FUNCTION_EX), a conditional jump, a FOR_ITER. Each is written as Python only
outside try/with regions, where an exception it raises needs no handler of the frame; elsewhere, and for every
other instruction, the entry resumes *at* the breaking instruction and the resume function runs it (natively,
since its own capture stops right there). A call to a user function runs that function's compiled copy, so the
callee is captured on its own.
"""
from __future__ import annotations

import dis

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.interpreter import instructions_of
from jitcore.capture.values.base import NullValue

__all__ = ["BreakSteps"]

_JUMPS = {"POP_JUMP_IF_TRUE": "{}", "POP_JUMP_IF_FALSE": "not {}", "POP_JUMP_IF_NONE": "{} is None",
          "POP_JUMP_IF_NOT_NONE": "{} is not None"}
_SENTINEL = object()


def _in_region(code, offset: int) -> bool:
    return any(entry.start <= offset < entry.end for entry in dis._parse_exception_table(code))


class BreakSteps:
    """Emits the break part of an entry. `resume(target_offset, kinds, names)` gives a resume function (or a
    maker taking the closure cells); `native_callable(value)` gives the object to call for a callee value."""

    def __init__(self, code, original, offset_map, resume, native_callable, has_prefix: bool):
        self.code = code
        self.original = original
        self.offset_map = offset_map
        self.resume = resume
        self.native_callable = native_callable
        self.has_prefix = has_prefix

    def _original_offset(self, offset: int) -> int:
        return offset if self.offset_map is None else self.offset_map[offset]

    def _next_offset(self, inst) -> int:
        insts, index_of = instructions_of(self.code)
        return insts[index_of[inst.offset] + 1].offset

    def emit(self, cg, bp, replay: list) -> list:
        lines = []
        stack = []
        for i, value in enumerate(bp.stack):
            if isinstance(value, NullValue):
                stack.append(None)
            else:
                lines.append(f"___s{i} = {cg.load(value)}")
                stack.append(f"___s{i}")
        names = tuple(name for name in self.code.co_varnames if name in bp.locals)
        local_exprs = []
        for name in names:
            value = bp.locals[name]
            expr = value.source.emit(cg) if not hasattr(value, "reconstruct") else cg.load(value)
            lines.append(f"___l_{name} = {expr}")
            local_exprs.append(f"___l_{name}")
        lines.extend(replay)
        inst = bp.inst
        opname = inst.opname
        in_region = _in_region(self.original, self._original_offset(inst.offset))
        if not in_region and opname == "CALL":
            lines.extend(self._call(cg, bp, stack, names, local_exprs))
        elif not in_region and opname == "CALL_FUNCTION_EX":
            lines.extend(self._call_ex(cg, bp, stack, names, local_exprs))
        elif not in_region and opname in _JUMPS:
            lines.extend(self._jump(cg, bp, stack, names, local_exprs))
        elif not in_region and opname == "FOR_ITER":
            lines.extend(self._for_iter(cg, bp, stack, names, local_exprs))
        else:
            if not self.has_prefix and not replay:
                raise GraphBreak(bp.reason.kind, bp.reason.detail)
            lines.append(self._resume_call(cg, inst.offset, stack, names, local_exprs))
        return lines

    # -- steps ------------------------------------------------------------------------------------------------
    def _resume_call(self, cg, offset, stack, names, local_exprs) -> str:
        kinds = tuple("null" if s is None else "value" for s in stack)
        fn = self.resume(self._original_offset(offset), kinds, names)
        ref = cg.constant_object(fn, "resume")
        callee = f"{ref}(___cells)" if self.original.co_freevars else ref
        args = [s for s in stack if s is not None] + list(local_exprs)
        return f"return {callee}({', '.join(args)})"

    def _call(self, cg, bp, stack, names, local_exprs) -> list:
        nargs = bp.inst.arg
        base = len(stack) - nargs - 2
        method, callable_, args = stack[base], stack[base + 1], stack[base + 2:]
        values = bp.stack[base:]
        if method is not None:
            fn_value, fn_expr, args = values[0], method, [callable_, *args]
        else:
            fn_value, fn_expr = values[1], callable_
        kw = bp.kw_names
        positional = args[:len(args) - len(kw)]
        keywords = [f"{k}={v}" for k, v in zip(kw, args[len(args) - len(kw):])]
        target = self.native_callable(cg, fn_value, fn_expr)
        lines = [f"___res = {target}({', '.join(positional + keywords)})"]
        after = stack[:base] + ["___res"]
        lines.append(self._resume_call(cg, self._next_offset(bp.inst), after, names, local_exprs))
        return lines

    def _call_ex(self, cg, bp, stack, names, local_exprs) -> list:
        has_kwargs = bp.inst.arg & 1
        base = len(stack) - 3 - has_kwargs
        fn_value, fn_expr = bp.stack[base + 1], stack[base + 1]
        call = f"{self.native_callable(cg, fn_value, fn_expr)}(*{stack[base + 2]}"
        call += f", **{stack[base + 3]})" if has_kwargs else ")"
        after = stack[:base] + ["___res"]
        return [f"___res = {call}", self._resume_call(cg, self._next_offset(bp.inst), after, names, local_exprs)]

    def _jump(self, cg, bp, stack, names, local_exprs) -> list:
        test = _JUMPS[bp.inst.opname].format(stack[-1])
        rest = stack[:-1]
        return [f"if {test}:",
                "    " + self._resume_call(cg, bp.inst.argval, rest, names, local_exprs),
                self._resume_call(cg, self._next_offset(bp.inst), rest, names, local_exprs)]

    def _for_iter(self, cg, bp, stack, names, local_exprs) -> list:
        sentinel = cg.constant_object(_SENTINEL, "exhausted")
        insts, index_of = instructions_of(self.code)
        end_for = insts[index_of[bp.inst.argval]]
        after_loop = insts[index_of[end_for.offset] + 1].offset
        return [f"___item = next({stack[-1]}, {sentinel})",
                f"if ___item is {sentinel}:",
                "    " + self._resume_call(cg, after_loop, stack[:-1], names, local_exprs),
                self._resume_call(cg, self._next_offset(bp.inst), stack + ["___item"], names, local_exprs)]
