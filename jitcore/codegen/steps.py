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

_JUMPS = {"POP_JUMP_IF_TRUE": "bool({})", "POP_JUMP_IF_FALSE": "not {}", "POP_JUMP_IF_NONE": "{} is None",
          "POP_JUMP_IF_NOT_NONE": "{} is not None"}
_SENTINEL = object()


def _binary_op(cg, inst, ins):
    from jitcore.capture.opcodes.arith import BINARY_OPS
    import operator
    name = BINARY_OPS[inst.arg]
    fn = cg.constant_object(getattr(operator, name), name) if cg is not None else "f"
    return f"___res = {fn}({ins[0]}, {ins[1]})", ["___res"]


def _load_attr(cg, inst, ins):
    read = f"___res = getattr({ins[0]}, {inst.argval!r})"
    return read, ([None, "___res"] if inst.arg & 1 else ["___res"])


#: instructions written as one Python statement at a break: opname -> (inputs popped, builder(cg, inst, inputs)
#: -> (statement, pushed expressions, None for a NULL))
_SIMPLE = {
    "LOAD_ATTR": (1, _load_attr),
    "STORE_ATTR": (2, lambda cg, inst, ins: (f"setattr({ins[1]}, {inst.argval!r}, {ins[0]})", [])),
    "BINARY_SUBSCR": (2, lambda cg, inst, ins: (f"___res = {ins[0]}[{ins[1]}]", ["___res"])),
    "STORE_SUBSCR": (3, lambda cg, inst, ins: (f"{ins[1]}[{ins[2]}] = {ins[0]}", [])),
    "BINARY_OP": (2, _binary_op),
    "COMPARE_OP": (2, lambda cg, inst, ins: (f"___res = {ins[0]} {inst.argval} {ins[1]}", ["___res"])),
    "CONTAINS_OP": (2, lambda cg, inst, ins: (
        f"___res = {ins[0]} {'not in' if inst.arg else 'in'} {ins[1]}", ["___res"])),
    "GET_ITER": (1, lambda cg, inst, ins: (f"___res = iter({ins[0]})", ["___res"])),
    "UNARY_NOT": (1, lambda cg, inst, ins: (f"___res = not {ins[0]}", ["___res"])),
    "UNARY_NEGATIVE": (1, lambda cg, inst, ins: (f"___res = -{ins[0]}", ["___res"])),
    "UNARY_INVERT": (1, lambda cg, inst, ins: (f"___res = ~{ins[0]}", ["___res"])),
}


def _covering(table, offset: int):
    for entry in table:
        if entry.start <= offset < entry.end:
            return entry
    return None


def with_levels(code, offset: int):
    """How many with-blocks enclose `offset`, or None when a try/except/finally encloses it (or the structure is
    not the one CPython 3.12 emits for with-blocks: a handler starting PUSH_EXC_INFO, WITH_EXCEPT_START whose
    cleanup handler is itself covered only by enclosing with-blocks' handlers)."""
    table = dis._parse_exception_table(code)
    insts, index_of = instructions_of(code)
    levels = 0
    entry = _covering(table, offset)
    while entry is not None:
        index = index_of.get(entry.target)
        if index is None or index + 1 >= len(insts) or insts[index].opname != "PUSH_EXC_INFO" \
                or insts[index + 1].opname != "WITH_EXCEPT_START":
            return None
        levels += 1
        cleanup = _covering(table, entry.target)
        if cleanup is None:
            return None
        entry = _covering(table, cleanup.target)
    return levels


class BreakSteps:
    """Emits the break part of an entry. `resume(target_offset, kinds, names)` gives a resume function (or a
    maker taking the closure cells); `native_callable(value)` gives the object to call for a callee value."""

    def __init__(self, code, original, offset_map, resume, native_callable, has_prefix: bool, step=None):
        #: step(target, kinds, names, tails) -> a step function (runtime/resume_fns.step_function), or None
        self.step = step
        self.code = code
        self.original = original
        self.offset_map = offset_map
        self.resume = resume
        self.native_callable = native_callable
        self.has_prefix = has_prefix

    def _original_offset(self, offset: int) -> int:
        if self.offset_map is None:
            return offset
        # a jump may target an EXTENDED_ARG prefix; the map holds the instructions themselves
        from jitcore.codegen.resume import real_offset
        return self.offset_map[real_offset(self.code, offset)]

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
        # the resume code's own ___stack parameters are dead after its prologue: only the original's locals live on
        names = tuple(name for name in self.original.co_varnames if name in bp.locals)
        local_exprs = []
        for index, name in enumerate(names):
            value = bp.locals[name]
            expr = value.source.emit(cg) if not hasattr(value, "reconstruct") else cg.load(value)
            lines.append(f"___l{index} = {expr}")
            local_exprs.append(f"___l{index}")
        lines.extend(replay)
        inst = bp.inst
        opname = inst.opname
        exits = self._region_exits(bp, stack)
        step = {"CALL": self._call, "CALL_FUNCTION_EX": self._call_ex, "FOR_ITER": self._for_iter}.get(opname)
        if step is None and opname in _JUMPS:
            step = self._jump
        if step is None and opname in _SIMPLE:
            step = self._simple
        if step is not None and exits is not None:
            work, tail = step(cg, bp, stack, names, local_exprs)
            if exits:
                # the step runs outside the frame's with-blocks: on an exception, close them as the frame would
                lines.append("try:")
                lines.extend("    " + line for line in work)
                lines.append("except BaseException as ___e:")
                for exit_expr in reversed(exits):
                    lines.append(f"    {exit_expr}(type(___e), ___e, ___e.__traceback__)")
                lines.append("    raise")
            else:
                lines.extend(work)
            lines.extend(tail)
        elif step is not None and self.step is not None and not self.original.co_freevars:
            # inside a try block or a with-block jitcore cannot re-enter: a step function runs the instruction
            # within those regions and hands over to the compiled continuation
            lines.append(self._step_call(cg, bp, stack, names, local_exprs))
        else:
            if not self.has_prefix and not replay:
                raise GraphBreak(bp.reason.kind, bp.reason.detail)
            lines.append(self._resume_call(cg, self._start_of(inst), stack, names, local_exprs))
        return lines

    def _simple(self, cg, bp, stack, names, local_exprs):
        """One instruction of _SIMPLE written as Python: pop its inputs, push what it computes."""
        pops, build = _SIMPLE[bp.inst.opname]
        inputs = stack[len(stack) - pops:]
        statement, pushed = build(cg, bp.inst, inputs)
        after = stack[:len(stack) - pops] + pushed
        return [statement], [self._resume_call(cg, self._next_offset(bp.inst), after, names, local_exprs)]

    def _step_call(self, cg, bp, stack, names, local_exprs) -> str:
        inst = bp.inst
        kinds = tuple("null" if s is None else "value" for s in stack)
        insts, index_of = instructions_of(self.code)
        successors = {}
        if inst.opname in _SIMPLE:
            pops, build = _SIMPLE[inst.opname]
            pushed = build(None, inst, [None] * pops)[1] if inst.opname != "LOAD_ATTR" else \
                ([None, "x"] if inst.arg & 1 else ["x"])
            if None in pushed:
                # a method-form attribute load pushes NULL or not at run time: the stack cannot be packed
                return self._resume_call(cg, self._start_of(inst), stack, names, local_exprs)
            successors[self._next_offset(inst)] = kinds[:len(kinds) - pops] + ("value",) * len(pushed)
        elif inst.opname == "CALL":
            successors[self._next_offset(inst)] = kinds[:len(kinds) - inst.arg - 2] + ("value",)
        elif inst.opname == "CALL_FUNCTION_EX":
            successors[self._next_offset(inst)] = kinds[:len(kinds) - 3 - (inst.arg & 1)] + ("value",)
        elif inst.opname == "FOR_ITER":
            successors[self._next_offset(inst)] = kinds + ("value",)
            end_for = insts[index_of[inst.argval]]
            successors[insts[index_of[end_for.offset] + 1].offset] = kinds[:-1]
        else:
            successors[self._next_offset(inst)] = kinds[:-1]
            successors[inst.argval] = kinds[:-1]
        tails = {}
        for offset, after in successors.items():
            original = self._original_offset(offset)
            tails[original] = (after, self.resume(original, after, names))
        start = self._original_offset(self._start_of(inst))
        fn = self.step(start, kinds, names, tails)
        ref = cg.constant_object(fn, "step")
        args = [s for s in stack if s is not None] + list(local_exprs)
        return f"return {ref}({', '.join(args)})"

    def _region_exits(self, bp, stack):
        """The __exit__ expressions of the with-blocks around the break (innermost last), when the step may run
        outside them; None when it may not (a try region, or a with-block whose context jitcore cannot rebuild).
        """
        levels = with_levels(self.original, self._original_offset(bp.inst.offset))
        if levels is None:
            return None
        exits = [expr for value, expr in zip(bp.stack, stack)
                 if expr is not None and getattr(getattr(value, "region", None), "reconstruct_exit", None)]
        return exits if len(exits) == levels else None

    def _start_of(self, inst) -> int:
        """Where to resume to run `inst` again: a CALL's KW_NAMES and the CALL are one unit (DESIGN §4)."""
        insts, index_of = instructions_of(self.code)
        index = index_of[inst.offset]
        if inst.opname == "CALL" and index and insts[index - 1].opname == "KW_NAMES":
            return insts[index - 1].offset
        return inst.offset

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
        after = stack[:base] + ["___res"]
        return ([f"___res = {target}({', '.join(positional + keywords)})"],
                [self._resume_call(cg, self._next_offset(bp.inst), after, names, local_exprs)])

    def _call_ex(self, cg, bp, stack, names, local_exprs) -> list:
        has_kwargs = bp.inst.arg & 1
        base = len(stack) - 3 - has_kwargs
        fn_value, fn_expr = bp.stack[base + 1], stack[base + 1]
        call = f"{self.native_callable(cg, fn_value, fn_expr)}(*{stack[base + 2]}"
        call += f", **{stack[base + 3]})" if has_kwargs else ")"
        after = stack[:base] + ["___res"]
        return [f"___res = {call}"], [self._resume_call(cg, self._next_offset(bp.inst), after, names, local_exprs)]

    def _jump(self, cg, bp, stack, names, local_exprs) -> list:
        test = _JUMPS[bp.inst.opname].format(stack[-1])
        rest = stack[:-1]
        return [f"___jump = {test}"], [
            "if ___jump:",
            "    " + self._resume_call(cg, bp.inst.argval, rest, names, local_exprs),
            self._resume_call(cg, self._next_offset(bp.inst), rest, names, local_exprs)]

    def _for_iter(self, cg, bp, stack, names, local_exprs) -> list:
        sentinel = cg.constant_object(_SENTINEL, "exhausted")
        insts, index_of = instructions_of(self.code)
        end_for = insts[index_of[bp.inst.argval]]
        after_loop = insts[index_of[end_for.offset] + 1].offset
        return [f"___item = next({stack[-1]}, {sentinel})"], [
            f"if ___item is {sentinel}:",
            "    " + self._resume_call(cg, after_loop, stack[:-1], names, local_exprs),
            self._resume_call(cg, self._next_offset(bp.inst), stack + ["___item"], names, local_exprs)]
