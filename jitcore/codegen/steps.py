"""What an entry does at a graph break: rebuild the frame's stack and live locals, run the breaking instruction
in Python where it can be written as Python, and continue in a resume function.

Input: capture's `Continuation` (capture/continuation.py). The functions the entry calls come from a
`ResumeFactory`, which the runtime implements (runtime/break_wiring.py): codegen asks, it never imports the runtime.
Expressible steps: a call (CALL, CALL_FUNCTION_EX), a conditional jump, a FOR_ITER and the one-statement
instructions of `_WRITTEN`. Each is written as Python only outside try regions (around it, the with-blocks are
closed by the entry itself on an exception); inside them a step function of the factory runs the instruction
within those regions; for every other instruction the entry resumes *at* it and the resume function runs it
(natively, since its own capture stops right there). Stack inputs are taken by the handlers' declared signatures
(capture/opcodes/registry.py), outputs come from the continuation's successors.
"""
from __future__ import annotations

import operator
import types
from typing import Protocol

from jitcore.capture.opcodes import HANDLERS
from jitcore.capture.opcodes.arith import BINARY_OPS
from jitcore.capture.values.base import Value
from jitcore.codegen.resume import closure_names, real_offset, resume_origin

__all__ = ["BreakSteps", "CALL_RESULT", "ResumeFactory"]


class ResumeFactory(Protocol):
    """The functions an entry calls at a graph break, made by the runtime for one frame's original code. Offsets
    are the original code's; `kinds` are "null"/"value" per stack slot, bottom first; `names` the locals passed
    after the non-NULL stack slots, in this order."""

    def resume(self, target: int, kinds: tuple, names: tuple, carried: tuple = ()):
        """The resume function continuing at `target` (for a frame with cell or free variables: a maker taking
        the frame's cells, `codegen.resume.closure_names` order, and returning it). `carried`: for each "value"
        stack slot, its index in the break's stack when it is that slot's value handed on (else None)."""

    def step(self, target: int, kinds: tuple, names: tuple, tails: dict):
        """A function running just the instruction at `target` inside the frame's try/with regions, then
        continuing in `callable(...)` of `tails[successor] = (kinds, names, callable)` for wherever it went (for a
        frame with cell or free variables: a maker taking the frame's cells, as `resume`); called through
        `handover`, as a resume function is."""

    def callee(self, fn, shared: tuple = ()):
        """fn's compiled copy, so a callee that the break runs natively is captured on its own; `shared`: guard
        paths of its parameters that the copy captures by structure from its first call."""

    def handover(self):
        """`(waiting, fn, *args)` -> what the entry returns to continue in `fn(*args)` (Note [Resume chains run in
        a loop], runtime/resume_chain.py)."""

    def ticket(self):
        """(take, key) for an entry of a resume function: `take(key)` says whether a chain's driver called it;
        None for an original frame's entry."""


_JUMPS = {"POP_JUMP_IF_TRUE": "bool({})", "POP_JUMP_IF_FALSE": "not {}", "POP_JUMP_IF_NONE": "{} is None",
          "POP_JUMP_IF_NOT_NONE": "{} is not None"}
_SENTINEL = object()


#: what `_break_slot` names the breaking call's result by
CALL_RESULT = "result"


def _break_slot(expr: str):
    """The index in the break's stack of a slot the entry hands on as it was (`___s<i>`, set by emit), CALL_RESULT
    for what the breaking call returned, else None."""
    if expr.startswith("___s") and expr[4:].isdigit():
        return int(expr[4:])
    return CALL_RESULT if expr == "___res" else None


def _binary_op(cg, inst, x):
    name = BINARY_OPS[inst.arg]
    return f"{cg.constant_object(getattr(operator, name), name)}({x['lhs']}, {x['rhs']})"


#: instructions written as one Python expression (or, without outputs, one statement): opname ->
#: builder(cg, inst, inputs by their declared names) -> text
_WRITTEN = {
    "LOAD_ATTR": lambda cg, inst, x: f"getattr({x['owner']}, {inst.argval!r})",
    "STORE_ATTR": lambda cg, inst, x: f"setattr({x['owner']}, {inst.argval!r}, {x['value']})",
    "BINARY_SUBSCR": lambda cg, inst, x: f"{x['container']}[{x['sub']}]",
    "STORE_SUBSCR": lambda cg, inst, x: f"{x['container']}[{x['sub']}] = {x['value']}",
    "BINARY_OP": _binary_op,
    "COMPARE_OP": lambda cg, inst, x: f"{x['left']} {inst.argval} {x['right']}",
    "CONTAINS_OP": lambda cg, inst, x: f"{x['left']} {'not in' if inst.arg else 'in'} {x['right']}",
    "GET_ITER": lambda cg, inst, x: f"iter({x['iterable']})",
    "UNARY_NOT": lambda cg, inst, x: f"not {x['value']}",
    "UNARY_NEGATIVE": lambda cg, inst, x: f"-{x['value']}",
    "UNARY_INVERT": lambda cg, inst, x: f"~{x['value']}",
}


def _inputs(inst, stack: list) -> tuple:
    """(stack below the instruction's inputs, {declared input name: expression}) for a stack of expressions."""
    return HANDLERS[inst.opname].signature.take(stack, inst.arg)


def _pushed(successor, below: list) -> list:
    """The expressions a written step leaves where `successor` expects the instruction's outputs: its one value,
    `___res`, last; a slot below it (LOAD_ATTR's method slot) is NULL, since the written form loads the bound
    attribute."""
    count = len(successor.kinds) - len(below)
    return [None] * (count - 1) + ["___res"] if count else []


class BreakSteps:
    """Emits the break part of an entry for a frame of `code`, with functions from `factory`. `has_prefix`: the
    entry runs a graph before the break (else resuming at the breaking instruction gains nothing). `stub`: the
    frame is a resume stub's, run as its original `code` from the target (capture/resume_points.py), whose closure
    already is the frame's cells, as a resume code's is."""

    def __init__(self, code, factory: ResumeFactory, has_prefix: bool, stub: bool = False):
        self.code = code
        self.original, self.offset_map = resume_origin(code)
        #: the entry's `___cells` are the frame's cells in `closure_names` order (a resume frame), not only its
        #: function's free variables (an original frame, whose cell variables the entry builds)
        self.resumed = stub or self.offset_map is not None
        self.factory = factory
        self.has_prefix = has_prefix
        #: local name -> the entry's variable holding it (set by emit)
        self._locals: dict = {}
        #: cell variable name -> the entry's variable holding its cell (set by emit, in an original frame)
        self._frame_cells: dict = {}
        #: whether the entry took a driver's ticket (`prelude`): the expression its resume call passes on
        self._waiting = "False"

    def prelude(self, cg) -> list:
        """The entry's first lines: a resume function's entry takes the ticket of the chain's driver that called
        it before anything it runs can start a chain of its own (Note [Resume chains run in a loop])."""
        ticket = self.factory.ticket()
        if ticket is None:
            return []
        take, key = ticket
        self._waiting = "___waiting"
        return [f"___waiting = {cg.constant_object(take, 'take')}({cg.constant_object(key, 'ticket')})"]

    def _original_offset(self, offset: int) -> int:
        if self.offset_map is None:
            return offset
        # a jump may target an EXTENDED_ARG prefix; the map holds the instructions themselves
        return self.offset_map[real_offset(self.code, offset)]

    def _names(self, live) -> tuple:
        """The resume parameters for the locals `live`: the original code's names, in its order."""
        return tuple(name for name in self.original.co_varnames if name in live)

    def emit(self, cg, cont, replay) -> list:
        """The entry's lines from the break on; `replay()` writes the side effects' replay, after the stack and the
        live locals are rebuilt (they may read what it writes back, and it may use objects they build)."""
        lines = []
        stack = []
        for i, (value, kind) in enumerate(zip(cont.stack, cont.kinds)):
            if kind == "null":
                stack.append(None)
            else:
                lines.append(f"___s{i} = {cg.load(value)}")
                stack.append(f"___s{i}")
        self._locals = {}
        for index, name in enumerate(self._names(cont.locals)):
            value = cont.locals[name]
            expr = cg.load(value) if isinstance(value, Value) else value.source.emit(cg)  # an argument never read
            lines.append(f"___l{index} = {expr}")
            self._locals[name] = f"___l{index}"
        self._frame_cells = {}
        if not self.resumed:
            for index, name in enumerate(self.original.co_cellvars):
                # built before the step, which may run a closure over them, and before any branch that uses them
                lines.append(f"___c{index} = {cg.load(cont.cells[name])}")
                self._frame_cells[name] = f"___c{index}"
        replayed = replay()
        lines.extend(replayed)
        opname = cont.inst.opname
        step = {"CALL": self._call, "CALL_FUNCTION_EX": self._call_ex, "FOR_ITER": self._for_iter}.get(opname)
        if step is None and opname in _JUMPS:
            step = self._jump
        if step is None and opname in _WRITTEN:
            step = self._written
        if step is not None and cont.exits is not None:
            work, tail = step(cg, cont, stack)
            if cont.exits:
                # the step runs outside the frame's with-blocks: on an exception, close them as the frame would
                lines.append("try:")
                lines.extend("    " + line for line in work)
                lines.append("except BaseException as ___e:")
                for slot in reversed(cont.exits):
                    lines.append(f"    {stack[slot]}(type(___e), ___e, ___e.__traceback__)")
                lines.append("    raise")
            else:
                lines.extend(work)
            lines.extend(tail)
        elif step is not None or cont.next is not None and cont.start == cont.inst.offset:
            # inside a try block or a with-block jitcore cannot re-enter, or an instruction not written as Python
            # (a BUILD_MAP whose keys jitcore cannot hash): a step function runs the instruction within its
            # regions and hands over to the compiled continuation (resuming *at* it would run the rest natively)
            lines.append(self._step_call(cg, cont, stack))
        else:
            if not self.has_prefix and not replayed:
                raise cont.reason.fresh()
            lines.append(self._resume_call(cg, cont.start, stack, cont.locals))
        return lines

    def _step_call(self, cg, cont, stack) -> str:
        tails = {}
        for successor in (cont.next, cont.jump):
            if successor is None:
                continue
            if "unknown" in successor.kinds:
                # a method-form attribute load pushes NULL or not at run time: the stack cannot be packed
                return self._resume_call(cg, cont.start, stack, cont.locals)
            target = self._original_offset(successor.offset)
            names = self._names(successor.live)
            tails[target] = (successor.kinds, names, self.factory.resume(target, successor.kinds, names))
        names = self._names(cont.locals)
        fn = self.factory.step(self._original_offset(cont.start), cont.kinds, names, tails)
        if cont.callee is not None and cont.callee.fn is not None:
            # the step function makes the call with what its stack holds: the callee's compiled copy in its slot
            stack = list(stack)
            stack[cont.callee.slot] = self._callee(cg, cont, stack)
        args = [s for s in stack if s is not None] + [self._locals[name] for name in names]
        ref = cg.constant_object(fn, "step")
        callee = f"{ref}({self._cells(cg)})" if closure_names(self.original) else ref
        return self._handover(cg, callee, args)

    # -- steps ------------------------------------------------------------------------------------------------
    def _resume_call(self, cg, offset, stack, live) -> str:
        kinds = tuple("null" if s is None else "value" for s in stack)
        names = self._names(live)
        carried = tuple(_break_slot(s) for s in stack if s is not None)
        fn = self.factory.resume(self._original_offset(offset), kinds, names, carried)
        ref = cg.constant_object(fn, "resume")
        callee = f"{ref}({self._cells(cg)})" if closure_names(self.original) else ref
        args = [s for s in stack if s is not None] + [self._locals[name] for name in names]
        return self._handover(cg, callee, args)

    def _handover(self, cg, callee: str, args: list) -> str:
        """`return callee(*args)`, made by the chain's driver (Note [Resume chains run in a loop])."""
        handover = cg.constant_object(self.factory.handover(), "handover")
        return f"return {handover}({', '.join([self._waiting, callee, *args])})"

    def _cells(self, cg) -> str:
        """The cells a resume maker binds (Note [Resume functions share the frame's cells]): a resume frame's own
        closure; in the original frame, its cell variables' cells (rebuilt at the break, shared with the inner
        functions rebuilt there) before its closure."""
        if self.resumed or not self.original.co_cellvars:
            return "___cells"
        own = "".join(f"{self._frame_cells[name]}, " for name in self.original.co_cellvars)
        return f"({own}) + ___cells" if self.original.co_freevars else f"({own})"

    def _written(self, cg, cont, stack) -> tuple:
        """One instruction of _WRITTEN as Python: its declared inputs in, its outputs where the successor wants them."""
        below, inputs = _inputs(cont.inst, stack)
        text = _WRITTEN[cont.inst.opname](cg, cont.inst, inputs)
        pushed = _pushed(cont.next, below)
        statement = f"___res = {text}" if pushed else text
        return [statement], [self._resume_call(cg, cont.next.offset, below + pushed, cont.next.live)]

    def _callee(self, cg, cont, stack) -> str:
        """What the entry calls for the callee of a call step: a user function's compiled copy, as capture decided
        (so the callee is captured on its own), else the callee itself."""
        callee = cont.callee
        expr = stack[callee.slot]
        if callee.fn is None:
            return expr
        compiled = cg.constant_object(self.factory.callee(callee.fn, callee.shared), "callee")
        if callee.receiver is None:
            return compiled
        receiver = expr if callee.receiver is cont.stack[callee.slot] else cg.load(callee.receiver)
        return f"{cg.constant_object(types.MethodType, 'MethodType')}({compiled}, {receiver})"

    def _call(self, cg, cont, stack) -> tuple:
        below, inputs = _inputs(cont.inst, stack)
        args = inputs["args"]
        if inputs["method"] is not None:
            args = [inputs["callable"], *args]
        kw = cont.kw_names
        positional = args[:len(args) - len(kw)]
        keywords = [f"{k}={v}" for k, v in zip(kw, args[len(args) - len(kw):])]
        call = f"{self._callee(cg, cont, stack)}({', '.join(positional + keywords)})"
        after = below + _pushed(cont.next, below)
        return [f"___res = {call}"], [self._resume_call(cg, cont.next.offset, after, cont.next.live)]

    def _call_ex(self, cg, cont, stack) -> tuple:
        below, inputs = _inputs(cont.inst, stack)
        call = f"{self._callee(cg, cont, stack)}(*{inputs['callargs']}"
        call += f", **{inputs['kwargs']})" if inputs["kwargs"] is not None else ")"
        after = below + _pushed(cont.next, below)
        return [f"___res = {call}"], [self._resume_call(cg, cont.next.offset, after, cont.next.live)]

    def _jump(self, cg, cont, stack) -> tuple:
        below, inputs = _inputs(cont.inst, stack)
        (tested,) = inputs.values()
        return [f"___jump = {_JUMPS[cont.inst.opname].format(tested)}"], [
            "if ___jump:",
            "    " + self._resume_call(cg, cont.jump.offset, below, cont.jump.live),
            self._resume_call(cg, cont.next.offset, below, cont.next.live)]

    def _for_iter(self, cg, cont, stack) -> tuple:
        sentinel = cg.constant_object(_SENTINEL, "exhausted")
        below, inputs = _inputs(cont.inst, stack)
        (iterator,) = inputs.values()
        return [f"___item = next({iterator}, {sentinel})"], [
            f"if ___item is {sentinel}:",
            "    " + self._resume_call(cg, cont.jump.offset, below, cont.jump.live),
            self._resume_call(cg, cont.next.offset, below + [iterator, "___item"], cont.next.live)]
