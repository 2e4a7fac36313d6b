"""What capture hands codegen at a graph break: a `Continuation` of the root frame.

`continuation_at(state, inst, reason)` describes the frame stopped before `inst`: its stack (values and their
NULL/value kinds), the locals live there, how control leaves `inst` (each successor's offset, stack kinds and live
locals, from the handler's declared stack signature and capture/liveness.py), the with-blocks a step written
outside the frame must close, and for a call, whether its callee runs as a compiled copy. Every decision that needs
a guard is made and guarded here, while capture is still open: codegen adds none.
Offsets are those of the code the root frame ran (`Continuation.code`): for a resume stub, its original's.
"""
from __future__ import annotations

import dataclasses
import inspect
import logging
import sys
import traceback
import types
import warnings

import torch

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.interpreter import exception_table, instructions_of
from jitcore.capture.liveness import JUMPS, falls_through, live_locals
from jitcore.capture.opcodes import HANDLERS
from jitcore.capture.values.base import NullValue
from jitcore.capture.values.objects import ClassValue
from jitcore.capture.values.function import UserMethodValue
from jitcore.capture.values.mapping import DictValue
from jitcore.capture.values.opaque import DeferredMethodValue
from jitcore.capture.values.sequence import TupleValue
from jitcore.capture.values.torch_rules import is_torch_code, is_torch_runtime
from jitcore.marks import is_disabled

__all__ = ["Continuation", "Successor", "NativeCallee", "continuation_at", "has_compiled_copy"]

#: stack kinds of declared outputs that are not plain values. The names follow bytecodes.c: LOAD_GLOBAL's `null`
#: is always NULL; the `method` slot of LOAD_ATTR/LOAD_SUPER_ATTR is NULL unless the attribute is a method, which
#: only the running code knows ("unknown": such a stack cannot be packed into a tuple)
_OUTPUT_KINDS = {"null": "null", "method": "unknown"}

#: a call instruction's inputs that may hold the called object, first non-NULL wins (CALL: a method-form load
#: leaves the function in `method` and self in `callable`)
_CALLED = {"CALL": ("method", "callable"), "CALL_FUNCTION_EX": ("func",)}

_NATIVE_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ITERABLE_COROUTINE \
    | inspect.CO_ASYNC_GENERATOR


@dataclasses.dataclass(frozen=True)
class Successor:
    """Where control goes once the breaking instruction ran: `offset` (of `Continuation.code`), the stack kinds
    there ("value", "null" or "unknown", bottom first), and the bound locals live there."""
    offset: int
    kinds: tuple
    live: frozenset


@dataclasses.dataclass(frozen=True)
class NativeCallee:
    """The callee of a call that the entry runs itself: the value at stack slot `slot`, or in its place the
    compiled copy of `fn` (when set), bound to the `receiver` value (when set). `shared`: the guard paths of the
    copy's parameters (its receiver, an argument, an item of `*args` / `**kwargs`) that it captures by structure
    from its first call (Note [Instances shared by structure])."""
    slot: int
    fn: object = None
    receiver: object = None
    shared: tuple = ()
    #: the call makes a new object each time (a plain class's constructor): the resume function receives it
    #: as something this call made, never guarded by identity (Note [Instances shared by structure])
    new_result: bool = False


@dataclasses.dataclass
class Continuation:
    """The root frame stopped before `inst` (which has not run).

    `start` is where to resume to run `inst` again (a CALL's KW_NAMES and the CALL are one unit, DESIGN §4).
    `locals` holds the bound locals live at `start`, the only ones rebuilt. `next` / `jump`: the fall-through and
    jump successors (None where there is none). `exits`: the stack slots of the with-blocks' `__exit__` around
    `inst` (innermost last) when the instruction may run outside the frame, closing them itself on an exception;
    None inside a try block or a with-block jitcore cannot rebuild. `callee`: for a call (run by the entry, or
    by a step function inside a try block), what it calls; None for a call that reads its calling frame.
    """
    reason: GraphBreak
    inst: object
    start: int
    stack: list
    kinds: tuple
    locals: dict
    kw_names: tuple
    next: Successor | None
    jump: Successor | None
    exits: tuple | None
    callee: NativeCallee | None
    #: the frame's cell variables (name -> its cell value), which its resume function shares (Note [Resume
    #: functions share the frame's cells], codegen/resume.py)
    cells: dict = dataclasses.field(default_factory=dict)
    #: the code whose instructions the frame ran, which every offset here is of: the original code when a
    #: resume stub was captured (capture/resume_points.py)
    code: object = None


def continuation_at(state, inst, reason: GraphBreak) -> Continuation:
    """The continuation of the root frame `state`, stopped before `inst` because of `reason`."""
    code = state.code
    stack = list(state.stack)
    kinds = tuple("null" if isinstance(value, NullValue) else "value" for value in stack)
    start = _start_of(code, inst)
    live = live_locals(code, start)
    in_frame = inst.opname in _CALLED and _reads_its_frame(inst, stack)
    bound = {name: value for name, value in state.locals.items() if name in live or in_frame}
    successors = _successors(code, inst, kinds, bound) if inst.opname in HANDLERS else (None, None)
    exits = None if in_frame else _with_exits(code, inst.offset, stack)
    callee = None
    if not in_frame and inst.opname in _CALLED:
        # inside a try block too, where a step function makes the call (codegen/steps.py): a user function's
        # compiled copy is called either way, so the callee's own code is captured, not run natively
        callee = _native_callee(state, inst, stack, reason)
    cells = {name: state.cells[name] for name in code.co_cellvars}
    return Continuation(reason, inst, start, stack, kinds, bound, state.kw_names, *successors, exits, callee, cells,
                        code)


def _start_of(code, inst) -> int:
    insts, index_of = instructions_of(code)
    index = index_of[inst.offset]
    if inst.opname == "CALL" and index and insts[index - 1].opname == "KW_NAMES":
        return insts[index - 1].offset
    return inst.offset


def _successors(code, inst, kinds: tuple, bound: dict) -> tuple:
    """(fall-through, jump) successors of `inst` run on a stack of `kinds`; None where control cannot go."""
    handler = HANDLERS[inst.opname]
    insts, index_of = instructions_of(code)
    index = index_of[inst.offset]
    fall = jump = None
    if falls_through(inst) and index + 1 < len(insts):
        fall = _successor(code, insts[index + 1].offset, _after(handler.signature, inst.arg, kinds), bound)
    if inst.opcode in JUMPS:
        target = insts[index_of[inst.argval]]
        after = _after(handler.jump_signature or handler.signature, inst.arg, kinds)
        if target.opname == "END_FOR":
            # an exhausted FOR_ITER jumps past the END_FOR it names (3.12 bytecodes.c: JUMPBY(oparg + 1)); its
            # jump signature is the stack there (registry.DIS_DIFFERENCES: dis counts that END_FOR's pops)
            target = insts[index_of[target.offset] + 1]
        jump = _successor(code, target.offset, after, bound)
    return fall, jump


def _successor(code, offset: int, kinds: tuple, bound: dict) -> Successor:
    return Successor(offset, kinds, frozenset(live_locals(code, offset) & bound.keys()))


def _after(signature, oparg, kinds: tuple) -> tuple:
    """The stack kinds after an instruction of this declared signature runs on a stack of `kinds`: an output
    named like an input (COPY's `bottom`, FOR_ITER's `iter`, the `unused` slots of a peek) is that input again."""
    below, inputs = signature.take(kinds, oparg)
    out = list(below)
    for item in signature.outputs:
        n = item.size(oparg)
        same = inputs.get(item.name)
        if same is not None and (len(same) == n if isinstance(same, list) else n == 1):
            out.extend(same if isinstance(same, list) else [same])
        else:
            out.extend([_OUTPUT_KINDS.get(item.name, "value")] * n)
    return tuple(out)


def _covering(table, offset: int):
    for entry in table:
        if entry.start <= offset < entry.end:
            return entry
    return None


def _with_levels(code, offset: int):
    """How many with-blocks enclose `offset`, or None when a try/except/finally encloses it (or the structure is
    not the one CPython 3.12 emits for with-blocks: a handler starting PUSH_EXC_INFO, WITH_EXCEPT_START whose
    cleanup handler is itself covered only by enclosing with-blocks' handlers)."""
    table = exception_table(code)
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


def _with_exits(code, offset: int, stack: list):
    """The stack slots of the enclosing with-blocks' `__exit__`, when each can be rebuilt; else None."""
    levels = _with_levels(code, offset)
    if levels is None:
        return None
    exits = tuple(slot for slot, value in enumerate(stack) if value.is_rebuildable_exit())
    return exits if len(exits) == levels else None


def _callee_slot(inst, stack: list) -> int:
    _, inputs = HANDLERS[inst.opname].signature.take(list(range(len(stack))), inst.arg)
    return next(inputs[name] for name in _CALLED[inst.opname] if not isinstance(stack[inputs[name]], NullValue))


# Note [Calls that read their frame]: the entry runs a breaking call itself, in its own frame, whose globals are
# the entry's namespace (`___G`, `___graph`, ...) and whose locals are its own. A callee that reads the calling
# frame (`globals()`, `locals()`, `vars()`, `dir()`, `eval`/`exec` without namespaces, zero-argument `super()`,
# `sys._getframe`, `inspect.currentframe`) would see that frame instead of the user's: such a call runs in a
# step or resume function made from the user's code (the user's globals), given every bound local, not only the
# live ones (`locals()` shows the dead ones too). So do calls that read the call stack for where they were called
# from: logging (a record's funcName, lineno, pathname), warnings.warn (the warning's file and line, and the
# registry of the module's globals that shows each warning once), traceback's stack functions.
# Known limits: the frames above that function are the entry's and the dispatcher's, not the user's caller
# (`sys._getframe(1)`, `warnings.warn(stacklevel=2)`), and a frame object kept past the call shows that
# function's line and locals, not the lines the rest of the function runs.
_ANY = 1 << 16
_LOG_METHODS = ("debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log")
_STACK_READERS = ([getattr(logging.Logger, n) for n in _LOG_METHODS] + [getattr(logging, n) for n in _LOG_METHODS]
                  + [warnings.warn, traceback.extract_stack, traceback.format_stack, traceback.print_stack])
#: id(callee) -> how many arguments it may take and still read the calling frame (eval(source, globals) does not)
_FRAME_READERS = {id(fn): most for fn, most in ((globals, 0), (locals, 0), (vars, 0), (dir, 0), (super, 0),
                                                (eval, 1), (exec, 1), (sys._getframe, 1),
                                                (inspect.currentframe, 0), (inspect.stack, 1),
                                                *((fn, _ANY) for fn in _STACK_READERS))}


def _reads_its_frame(inst, stack: list) -> bool:
    """Note [Calls that read their frame]: the call at `inst` has such a callee (with few enough arguments; with
    CALL_FUNCTION_EX their number is unknown, so any)."""
    slot = _callee_slot(inst, stack)
    callee = stack[slot].identity()
    if callee is None and isinstance(stack[slot], DeferredMethodValue):
        # `obj.name` of an object jitcore does not model: the function its class holds
        owner = stack[slot].owner.identity()
        callee = inspect.getattr_static(type(owner), stack[slot].name, None) if owner is not None else None
    elif callee is None and isinstance(stack[slot], UserMethodValue):
        callee = stack[slot].fn  # a bound method passed on the stack (a resume function's parameter)
    if isinstance(callee, types.MethodType):
        callee = callee.__func__  # `log.info` read as a bound method
    most = _FRAME_READERS.get(id(callee)) if callee is not None else None
    if most is None:
        return False
    return inst.opname != "CALL" or inst.arg <= most


def _native_callee(state, inst, stack: list, reason: GraphBreak) -> NativeCallee:
    slot = _callee_slot(inst, stack)
    new_result = _constructs(stack[slot])
    if reason.kind == "recursion_limit":
        # the call went too deep to trace: a compiled copy would trace as deep again and add frames per level
        # (a recursion 400 calls deep would exhaust Python's stack), so the callee runs as it is
        return NativeCallee(slot, new_result=new_result)
    found = stack[slot].compiled_callee(state, has_compiled_copy)
    if found is None:
        return NativeCallee(slot, new_result=new_result)
    fn, receiver = found
    return NativeCallee(slot, fn, receiver, _shared_parameters(state, inst, stack, fn, receiver),
                        new_result)


def _constructs(callee) -> bool:
    """Does calling `callee` make a new object every time? A class whose metaclass and `__new__` are the plain
    ones does (`nn.Sequential(*blocks)`, a config class); one with a `__new__` or metaclass of its own may hand
    back a cached instance."""
    cls = getattr(callee, "cls", None)
    if not isinstance(callee, ClassValue) or not isinstance(cls, type):
        return False
    return type(cls).__call__ is type.__call__ and cls.__new__ is object.__new__


def _shared_parameters(state, inst, stack: list, fn, receiver) -> tuple:
    """The guard paths, in the callee's frame, of what the call passes that the callee will see other objects of
    the same kind in: Note [Instances shared by structure], [Sharing follows the arguments]."""
    if not isinstance(fn, types.FunctionType) or "__signature__" in fn.__dict__:
        return ()  # a DDP/FSDP marker; a signature that may not be the code's own parameters
    arguments = _call_arguments(state, inst, stack)
    if arguments is None:
        return ()
    positional, keywords = arguments
    if receiver is not None:
        positional = [receiver, *positional]
    signature = inspect.signature(fn, follow_wrapped=False)
    try:
        bound = signature.bind(*positional, **keywords)
    except TypeError:  # the call raises in Python as it is; nothing to share
        return ()
    shared = []
    for name, given in bound.arguments.items():
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            items = enumerate(given)
        elif kind is inspect.Parameter.VAR_KEYWORD:
            items = given.items()
        else:
            items = ((None, given),)
        shared += [(("local", name),) + ((("item", key),) if key is not None else ())
                   for key, value in items if _shared_argument(state.ctx, value)]
    return tuple(shared)


# Note [Sharing follows the arguments]
# A callee's compiled copy serves every call that reaches it. When the calling capture holds an argument by
# structure (it serves several objects of that kind), or the argument is a block read beside a twin (`repeated`),
# or a module or function the capture made itself (a new one on every call), the callee will see other objects
# there too: its copy captures that parameter by structure from its first call rather than learning it from a
# miss. This carries sharing through wrappers that pass their receiver on as an argument: transformers' layers,
# whose class forward is `forward_with_checkpointing(self, *args, **kwargs)` -> a decorator's `wrapped(*args,
# **kwargs)` -> the layer's own forward, and `self.experts.map(x)` called in method form. The receiver counts as
# the first argument. Guarding by structure is as sound as by identity; it only gives up pinning.


def _call_arguments(state, inst, stack: list):
    """(positional values, {keyword: value}) that the call at `inst` passes its callee (self included for a
    method-form call), or None where they are not known one by one (`f(*xs)` of a sequence held whole)."""
    _, inputs = HANDLERS[inst.opname].signature.take(stack, inst.arg)
    if inst.opname == "CALL":
        args = list(inputs["args"])
        if not isinstance(inputs["method"], NullValue):
            args = [inputs["callable"], *args]
        split = len(args) - len(state.kw_names)
        return args[:split], dict(zip(state.kw_names, args[split:]))
    callargs, kwargs = inputs["callargs"], inputs["kwargs"]
    if not isinstance(callargs, TupleValue) or kwargs is not None and not isinstance(kwargs, DictValue):
        return None
    keywords = kwargs.items if kwargs is not None else {}
    if not all(type(key) is str for key in keywords):
        return None
    return list(callargs.items), dict(keywords)


def _shared_argument(ctx, value) -> bool:
    """Will the callee see other objects where this value is passed? Only modules and Python functions are
    captured by structure."""
    if not isinstance(value.identity(), (torch.nn.Module, types.FunctionType)):
        return False
    if value.source is None:
        return True  # made by this capture: a new one on every call
    return ctx.by_structure(value.source) or getattr(value, "repeated", False)


def has_compiled_copy(fn) -> bool:
    """A callee worth a compiled copy: a plain Python function (generators and coroutines run natively, and so do
    functions that are not Python's, such as Cython's, whose __code__ holds no bytecode), and not torch's own
    machinery (Note [Only the user's code])."""
    return isinstance(fn, types.FunctionType) and not is_disabled(fn) and not is_torch_runtime(fn) \
        and (not is_torch_code(fn.__code__) or fn.__module__ == _CONTAINERS) and not fn.__code__.co_flags & _NATIVE_FLAGS


#: torch.nn's module containers (Sequential, ModuleList, ModuleDict): their forward only calls the user's layers
#: it holds, so a break under one gets it a compiled copy, as a user's function would, rather than running every
#: layer it holds natively (Dynamo traces torch.nn's frames too)
_CONTAINERS = "torch.nn.modules.container"
