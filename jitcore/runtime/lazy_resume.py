"""Resume stubs: the code of a resume function, with its native body assembled only when it must run natively.

`stub_code(original, fn_globals, target, kinds, names)` -> a small code object whose parameters are the stack slots
(`___stack<i>`) and the live locals a graph break hands over, and whose body is one call: `return NATIVE(cells,
<parameters>)`. The runtime gives it a dispatch prologue like any function (runtime/resume_fns.py).

Note [Resume functions are stubs]
A function with a graph break every few lines gets a resume function per break, each continuing the rest of the
function. Assembling each one's code with the rest in it (then disassembling it, splicing its prologue into it and
finding the line it starts at) cost the rest's length at every break: quadratic in the number of breaks. A stub
holds none of it:
- capture runs a stub as its *original* code from the target offset, the stack rebuilt from its parameters
  (capture/resume_points.py, `FrameState.root`), over the original's instructions, liveness and exception table,
  each computed once per original; a break there is at an offset of the original, so the next resume function is
  made from the original again. What a break costs is the part its capture interprets.
- only when the stub's dispatcher falls through (no entry admitted, past the cache limit, a graph that raised, a
  contained fault) does NATIVE assemble the resume code (`codegen.resume.resume_code`, once per stub) and run it,
  in a frame of its own below the stub's. The stub's one exception-table entry covers that call with the same
  handler as its dispatch call: the stub's frame leaves the traceback, since the resume code's frame continues the
  user's function (Note [Tracebacks through compiled code]). The stub's instructions have no line, so a traceback
  entry for its frame shows the line it is given.
Step functions (a breaking instruction inside a try region) run natively at once, so their codes are assembled
when they are made.
"""
from __future__ import annotations

import types
import weakref

from bytecode import Bytecode, CompilerFlags, FreeVar, Instr, Label, TryBegin, TryEnd

from jitcore.capture.resume_points import note_resume_point
from jitcore.codegen.resume import closure_names, real_offset, resume_code
from jitcore.runtime.resume_chain import clear_ticket
from jitcore.runtime.tracebacks import user_traceback

__all__ = ["stub_code"]

_CO_VARARGS, _CO_VARKEYWORDS = 0x04, 0x08


class _NativeBody:
    """Runs a stub's resume code natively; assembles it on the first such call."""

    __slots__ = ("original", "globals", "target", "kinds", "names", "code", "fn")

    def __init__(self, original, fn_globals, target: int, kinds: tuple, names: tuple):
        # weak: the stub lives in a cache keyed by its original (runtime/resume_fns.py)
        self.original = weakref.ref(original)
        self.globals = fn_globals
        self.target, self.kinds, self.names = target, kinds, names
        self.code = None
        #: the function over `code`, for a code without free variables (one per call otherwise: its cells)
        self.fn = None

    def __call__(self, cells, *args):
        # a driver's ticket left for this stub: its native body starts chains of its own (runtime/resume_chain.py)
        clear_ticket()
        code = self.code
        if code is None:
            original = self.original()
            if original is None:
                raise RuntimeError("jitcore: a resume function outlived the function it continues")
            # two threads may both assemble it: equal codes, either one serves
            code = self.code = resume_code(original, self.target, self.kinds, self.names)
        if cells is not None:
            return types.FunctionType(code, self.globals, code.co_name, None, cells)(*args)
        fn = self.fn
        if fn is None:
            fn = self.fn = types.FunctionType(code, self.globals, code.co_name)
        return fn(*args)


def stub_code(original, fn_globals, target: int, kinds: tuple, names: tuple):
    """The stub standing for `original` continued at `target` with a stack of `kinds` ("value"/"null" per slot,
    bottom first) and the locals `names`; recorded as a resume point for capture."""
    target = real_offset(original, target)
    native = _NativeBody(original, fn_globals, target, tuple(kinds), tuple(names))
    stack_names = tuple(f"___stack{i}" for i in range(sum(kind == "value" for kind in kinds)))
    params = [*stack_names, *names]
    # the resume code's free variables (Note [Resume functions share the frame's cells], codegen/resume.py): a
    # frame's cell variables too, so the stub is made per call over the frame's cells and hands them on
    freevars = closure_names(original)
    items = []
    if freevars:
        items.append(Instr("COPY_FREE_VARS", len(freevars), lineno=None))
    handler = Label()
    guarded = TryBegin(handler, False, 0)
    items += [Instr("RESUME", 0, lineno=None), guarded, Instr("PUSH_NULL", lineno=None),
              Instr("LOAD_CONST", native, lineno=None)]
    if freevars:
        items += [Instr("LOAD_CLOSURE", FreeVar(name), lineno=None) for name in freevars]
        items.append(Instr("BUILD_TUPLE", len(freevars), lineno=None))
    else:
        items.append(Instr("LOAD_CONST", None, lineno=None))
    items += [Instr("LOAD_FAST", name, lineno=None) for name in params]
    items += [Instr("CALL", len(params) + 1, lineno=None), TryEnd(guarded), Instr("RETURN_VALUE", lineno=None)]
    # the handler of runtime/prologue.py: user_traceback(exc), then RERAISE
    items += [handler, Instr("PUSH_NULL", lineno=None), Instr("LOAD_CONST", user_traceback, lineno=None),
              Instr("COPY", 3, lineno=None), Instr("CALL", 1, lineno=None), Instr("POP_TOP", lineno=None),
              Instr("RERAISE", 0, lineno=None)]
    out = Bytecode(items)
    # Note [Resume codes carry the user's names] (codegen/resume.py)
    out.name = original.co_name
    out.qualname = original.co_qualname
    out.filename = original.co_filename
    out.first_lineno = original.co_firstlineno
    out.argnames = params
    out.argcount = len(params)
    out.posonlyargcount = 0
    out.kwonlyargcount = 0
    out.flags = CompilerFlags(original.co_flags & ~(_CO_VARARGS | _CO_VARKEYWORDS))
    out.freevars = list(freevars)
    stub = out.to_code()
    note_resume_point(stub, original, target, tuple(kinds))
    return stub
