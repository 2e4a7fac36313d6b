"""The abstract interpreter: frame state and the instruction loop.

`FrameState` steps through a code object's instructions (capture/code_reader.py: what `dis.get_instructions`
gives, base opnames on 3.12) with a
symbolic stack and symbolic locals of values (capture/values). Handlers come from capture/opcodes; a handler that
cannot continue raises GraphBreak. Calls to user functions run in a child FrameState sharing the CaptureContext.
Entry point: `FrameState.root(ctx, args)` then `.run()` -> the returned value.
The loop pops each handler's declared inputs and pushes what it returns; with config.debug_checks (on in every test
and fuzz run) it holds each step's depth change to the declared effect of the outcome (registry.Handler.effect).
Calls nested deeper than the context's max_inline_depth break the graph (recursion_limit).
"""
from __future__ import annotations

import dis
import inspect
import linecache
import sys
import types

from jitcore.guards import CodeMatch, EqualsMatch, IdMatch, LengthMatch, TypeMatch, immutable_constant
from jitcore.guards.tree import Held
from jitcore.config import config
from jitcore.marks import is_disabled
from jitcore.capture.breaks import GraphBreak
from jitcore.capture.code_cache import CodeCache
from jitcore.capture.code_reader import read_instructions
from jitcore.capture.opcodes import HANDLERS, UNSUPPORTED
from jitcore.capture.prologues import unwrapped
from jitcore.capture.resume_points import resume_point
from jitcore.capture.side_effects import DELETED
from jitcore.capture.opcodes.registry import StackEffectError
from jitcore.capture.sources import (LocalSource, GlobalSource, ModuleGlobalSource, BuiltinSource, CellSource,
                                     CellObjectSource,
                                     AttrSource, ItemSource, HeldSource)
from jitcore.capture.values import wrap
from jitcore.capture.values.base import NULL
from jitcore.capture.values.cells import CellBox, RootCell, root_cell
from jitcore.capture.values.constant import const
from jitcore.capture.values.exception import ExceptionValue, TracedException, chain_context, exception_from_break
from jitcore.capture.values.objects import is_trusted_module
from jitcore.capture.values.torch_rules import is_torch_code, is_torch_runtime
from jitcore.capture.values.arguments import bind_arguments
from jitcore.capture.values.generator import GeneratorValue
from jitcore.capture.values.function_modes import relocate

__all__ = ["FrameState", "CaptureInternalError", "StopCapture", "instructions_of", "exception_table",
           "exception_handler", "clear_code_caches"]

#: code -> (instructions without CACHE entries, offset -> index); by identity and weak in the code (CodeCache: a
#: lookup that hashes a code object costs ~10 us), so a dropped function frees its entry
_INSTRUCTIONS = CodeCache()
#: code -> its exception-table entries
_EXCEPTION_TABLES = CodeCache()
#: code -> per instruction, what the loop needs to step it (_plans_of)
_PLANS = CodeCache()


class StopCapture(Exception):
    """Raised when the root frame reaches the instruction where a graph break was found (the second attempt
    of a capture stops there: everything before it is the prefix graph), or on a first attempt, at a break its
    instruction raised untouched (`reason`: that break; Note [A break at an untouched instruction]). Carries the
    frame state."""

    def __init__(self, state, inst, reason=None):
        super().__init__(f"stop at offset {inst.offset}")
        self.state = state
        self.inst = inst
        self.reason = reason


#: root instructions whose handler hands the named inputs straight to one operation, changing nothing first but
#: the kw_names register (CALL: the callee's call, the first of its inputs that is not NULL; a conditional jump:
#: the condition's truth). Note [A break at an untouched instruction] in capture/frame.py
_DIRECT_OPERAND = {"CALL": ("method", "callable"), "POP_JUMP_IF_TRUE": ("cond",), "POP_JUMP_IF_FALSE": ("cond",)}


class CaptureInternalError(Exception):
    """A fault inside jitcore while interpreting; carries the opcode and the user's location."""


def exception_table(code) -> list:
    """code's exception-table entries (start, end, target, depth, lasti), read once per code."""
    table = _EXCEPTION_TABLES.get(code)
    if table is None:
        table = _EXCEPTION_TABLES[code] = dis._parse_exception_table(code)
    return table


def exception_handler(code, offset):
    """The exception-table entry covering `offset` (start, end, target, depth, lasti), or None."""
    for entry in exception_table(code):
        if entry.start <= offset < entry.end:
            return entry
    return None


def instructions_of(code):
    """(instructions, offset -> index) of a code object, CACHE entries left out."""
    entry = _INSTRUCTIONS.get(code)
    if entry is None:
        insts = read_instructions(code)
        entry = (insts, {inst.offset: index for index, inst in enumerate(insts)})
        _INSTRUCTIONS[code] = entry
    return entry


def _plans_of(code) -> list:
    """Per instruction of `code` (as instructions_of lists them): (the handler planned for, its inputs' slot
    counts (Signature.input_layout), their total when every input is one slot (taken as one slice) else None, its
    line or None). Found once per code, so that a step evaluates no signature; the loop plans again where
    HANDLERS now holds another handler (tests replace handlers)."""
    plans = _PLANS.get(code)
    if plans is None:
        plans = _PLANS[code] = [_plan(HANDLERS.get(inst.opname), inst) for inst in instructions_of(code)[0]]
    return plans


def _plan(handler, inst) -> tuple:
    slots = count = None
    if handler is not None:
        slots, single = handler.signature.input_layout(inst.arg)
        count = len(slots) if single else None
    return handler, slots, count, inst.positions.lineno if inst.positions is not None else None


def clear_code_caches() -> None:
    """Forget every code object's instructions, step plans and exception table (jitcore.reset())."""
    _INSTRUCTIONS.clear()
    _PLANS.clear()
    _EXCEPTION_TABLES.clear()


class _Lazy:
    """An argument not read yet: wrapped (and guarded) only when the code loads it."""
    __slots__ = ("value", "source")

    def __init__(self, value, source):
        self.value = value
        self.source = source


class FrameState:
    def __init__(self, ctx, code, fn_globals, local_values: dict, cells: dict, parent=None, fn=None):
        self.ctx = ctx
        self.code = code
        self.globals = fn_globals
        self.instructions, self.index_of = instructions_of(code)
        self.plans = _plans_of(code)
        self.ip = 0
        self.stack: list = []
        self.locals = local_values
        self.cells = cells
        self.parent = parent
        self.fn = fn
        self.depth = 0 if parent is None else parent.depth + 1
        self.kw_names: tuple = ()
        self.result = None
        self.done = False
        self.jumped = False
        self.current = None
        self.lineno = code.co_firstlineno
        #: a generator's frame (resumed by GeneratorValue.next_item); `yielding` asks run() to suspend after
        #: the current instruction, with `yielded_value` the value it yields
        self.is_generator = False
        self.yielding = False
        self.yielded_value = None
        #: a class body's namespace (name -> value) while its frame runs (opcodes/names.py); None elsewhere
        self.namespace = None

    @property
    def graph(self):
        return self.ctx.graph

    # -- construction -----------------------------------------------------------------------------------------
    @classmethod
    def root(cls, ctx, arg_values: dict):
        """The frame being captured: arguments come from the live call and are wrapped lazily with local sources."""
        code = ctx.code
        # a resume stub (capture/resume_points.py) runs its original code from the target offset
        point = resume_point(code)
        if point is not None:
            code = point.original
        local_values = {name: _Lazy(value, LocalSource(name)) for name, value in arg_values.items()}
        cells = {}
        # the function's own closure: a stub's free variables are its original's cell and free variables (Note
        # [Resume functions share the frame's cells], codegen/resume.py), so the original's cell variables run
        # over the cells the stub was made over, as its resume code would
        for index, name in enumerate(ctx.code.co_freevars):
            cells[name] = root_cell(ctx, ctx.closure[index], CellSource(index, name), CellObjectSource(index, name))
        frame = cls(ctx, code, ctx.globals, local_values, cells)
        if point is not None:
            frame._enter_at(point)
        return frame

    def _enter_at(self, point) -> None:
        """Start at a resume point: the stack there is the stub's `___stack<i>` parameters (taken out of the
        locals, so only the user's names stay) and NULLs, as the frame had it at the break."""
        self.ip = self.index_of[point.target]
        names = iter(point.stack_names)
        for kind in point.kinds:
            if kind == "null":
                self.stack.append(NULL)
                continue
            value = self.locals.pop(next(names))
            try:
                self.stack.append(wrap(self, value.value, value.source) if type(value) is _Lazy else value)
            except GraphBreak:
                raise
            except Exception as exc:
                raise CaptureInternalError(f"{type(exc).__name__}: {exc} (while rebuilding the stack of a resume "
                                           f"point of {self.code.co_qualname})") from exc

    # -- the loop ---------------------------------------------------------------------------------------------
    def run(self):
        check = config.debug_checks
        stop = self.ctx.stop_at if self.parent is None else None
        untouched = self.parent is None and self.ctx.stop_untouched
        progress = kw_names = None
        instructions, plans = self.instructions, self.plans
        while not self.done:
            inst = instructions[self.ip]
            planned, slots, count, line = plans[self.ip]
            handler = HANDLERS.get(inst.opname)
            if handler is not planned:
                planned, slots, count, line = plans[self.ip] = _plan(handler, inst)
            if self.parent is None:
                if stop is not None and inst.offset == stop[0]:
                    seen = self.ctx.visits.get(inst.offset, 0) + 1
                    self.ctx.visits[inst.offset] = seen
                    if seen == stop[1]:
                        raise StopCapture(self, inst)
                elif self.ctx.count_visits:
                    self.ctx.visits[inst.offset] = self.ctx.visits.get(inst.offset, 0) + 1
                if untouched:
                    progress, kw_names = self.ctx.progress(), self.kw_names
            self.ip += 1
            self.current = inst
            if line is not None and line != self.lineno:
                # positions, not starts_line: a resume function enters mid-line, after its prologue's jump
                self.lineno = line
                self.graph.current_location = (self.code, line)
            if handler is None:
                kind = UNSUPPORTED.get(inst.opname, "unsupported_opcode")
                raise self._located(GraphBreak(kind, f"opcode {inst.opname}"))
            try:
                self._step(handler, inst, check, slots, count)
                if self.yielding:
                    self.yielding = False
                    return None
            except TracedException as exc:
                if self.unwind(exc.value):
                    continue
                if self.parent is not None:
                    raise
                raise self._located(GraphBreak("user_exception", f"{exc.value.cls.__name__} raised and not caught "
                                                                 f"in the traced code"))
            except GraphBreak as brk:
                value = exception_from_break(brk)
                # caught here only by this frame's own handlers: in a caller the break reaches the code that made
                # the call first (hasattr(), a __getattr__ fallback, getattr with a default), which handles it as
                # Python would, and the caller's handlers next
                if value is not None and exception_handler(self.code, inst.offset) is not None:
                    # an error the modelled operation raises for real: catchable by the traced handlers
                    value.origin = self.origin()
                    chain_context(self, value)
                    if self.unwind(value):
                        continue
                    raise TracedException(value, value.origin) from None
                brk = self._located(brk)
                if untouched and self._untouched(inst, brk, progress):
                    self.ip -= 1
                    self.kw_names = kw_names
                    raise StopCapture(self, inst, brk) from None
                raise brk
            except (CaptureInternalError, StackEffectError):
                raise
            except RecursionError:
                raise self._located(GraphBreak("recursion_limit", "Python recursion limit while tracing"))
            except Exception as exc:
                raise CaptureInternalError(
                    f"{type(exc).__name__}: {exc} (while executing {inst.opname} at offset {inst.offset}, "
                    f"{self.location_text()})") from exc
        if self.parent is None:
            self.check_suspended_generators()
        return self.result

    def _untouched(self, inst, brk, progress) -> bool:
        """Note [A break at an untouched instruction] (capture/frame.py): `brk` was raised, before anything changed,
        by the operation this root instruction hands its operand to, and nothing else happened meanwhile (no
        graph node, guard, side effect or inlined frame)."""
        names = _DIRECT_OPERAND.get(inst.opname)
        if names is None or brk.untouched is None or brk.whole_frame or brk.root_offset != inst.offset:
            return False
        if self.ctx.progress() != progress:
            return False
        _, inputs = HANDLERS[inst.opname].signature.take(list(self.stack), inst.arg)
        operand = next((inputs[name] for name in names if inputs[name] is not NULL), None)
        return operand is not None and (brk.untouched is operand or brk.untouched is operand.identity())

    def check_suspended_generators(self) -> None:
        """A generator left suspended inside a try/with block is closed by Python when the function returns
        (its `finally` and `__exit__` run then); that is not traced, so such a frame runs natively."""
        for gen in self.ctx.generators:
            frame = gen.frame
            if gen.finished or frame.current is None:
                continue
            entry = exception_handler(frame.code, frame.current.offset)
            if entry is None:
                continue
            insts, index = instructions_of(frame.code)
            target = insts[index[entry.target]]
            if target.opname == "CALL_INTRINSIC_1" and target.argrepr == "INTRINSIC_STOPITERATION_ERROR":
                continue  # only the implicit StopIteration guard of every generator: nothing runs on close
            if target.opname == "CLEANUP_THROW":
                continue  # suspended in `yield from`: closing runs the delegate's cleanup (checked on its own)
            brk = GraphBreak("generator", "a generator left suspended inside a try or with block (Python runs "
                                          "its cleanup when the function returns)")
            brk.whole_frame = True
            raise self._located(brk)

    def _step(self, handler, inst, check, slots, count):
        """Run one instruction's handler on its inputs; `slots`, `count`: see _plans_of."""
        stack = self.stack
        depth = len(stack)
        self.jumped = False
        oparg = inst.arg
        if count is not None:
            # every input one slot: the top `count` items, bottom first, are the handler's arguments
            args = stack[depth - count:]
            del stack[depth - count:]
        else:
            args = []
            inputs = handler.signature.inputs
            for item, n in zip(reversed(inputs), reversed(slots)):
                if item.count is None:
                    args.append(stack.pop() if n else None)
                else:
                    chunk = stack[len(stack) - n:]
                    del stack[len(stack) - n:]
                    args.append(chunk)
            args.reverse()
        try:
            out = handler.fn(self, inst, *args)
        except BaseException:
            # an instruction that raises leaves its inputs where the handler's depth may still reach them
            # (3.12 WITH_EXCEPT_START keeps exit, lasti, prev and exc below its result): put them back
            for item, n, arg in zip(handler.signature.inputs, slots, args):
                if item.count is not None:
                    stack.extend(arg)
                elif n:
                    stack.append(arg)
            raise
        if out is not None:
            if type(out) is tuple:
                stack.extend(out)
            else:
                stack.append(out)
        if check:
            # the declared effect of this outcome (jump signature when it jumped), held against dis once
            expected = handler.checked_effect(oparg, self.jumped)
            if len(stack) - depth != expected:
                raise StackEffectError(f"{inst.opname} (arg {oparg}) changed the stack by {len(stack) - depth}, "
                                       f"its signature says {expected}")

    def _located(self, brk: GraphBreak) -> GraphBreak:
        if self.parent is None and brk.root_offset is None and not brk.whole_frame:
            # where the root frame was when capture had to stop (or when the exception being handled was
            # raised): the break point of the frame
            brk.root_offset, brk.root_visit = self.origin()
        if self.parent is None:
            # no break point inside a TorchFunctionMode entered in the trace (Note [Torch function modes traced])
            relocate(self.ctx, brk)
        if brk.location is None and self.parent is not None and is_torch_code(self.code):
            # Note [Only the user's code] (runtime/autoenable.py): a break inside torch's own code is the user's
            # call into torch, reported there; the detail names the torch function it stopped in
            if not brk.inside_torch:
                brk.inside_torch = f"{self.code.co_qualname}()"
                brk.detail = f"{brk.detail}, inside torch's {brk.inside_torch}" if brk.detail \
                    else f"inside torch's {brk.inside_torch}"
            return brk
        if brk.location is None:
            brk.location = self.location()
        return brk

    def location(self) -> tuple:
        """(filename, lineno, source line, function name) of the instruction being traced, as breaks report it."""
        filename = self.code.co_filename
        return filename, self.lineno, linecache.getline(filename, self.lineno), self.code.co_name

    def location_text(self) -> str:
        return f"{self.code.co_filename}:{self.lineno} in {self.code.co_name}"

    def take_yielded(self):
        value, self.yielded_value = self.yielded_value, None
        return value

    # -- exceptions -------------------------------------------------------------------------------------------
    def origin(self) -> tuple:
        """(offset, visit) of the root-frame instruction a graph break or an exception raised now belongs to."""
        if self.ctx.handling:
            return self.ctx.handling[0]
        root = self
        while root.parent is not None:
            root = root.parent
        offset = root.current.offset
        return offset, self.ctx.visits.get(offset, 1)

    def raise_traced(self, value):
        if not isinstance(value, ExceptionValue):
            # a real exception object (a resume function entered at a re-raise): raised by Python, not traced
            raise GraphBreak("user_exception", f"re-raising a {value.kind_name} that the traced code did not make")
        if value.origin is None:
            value.origin = self.origin()
        raise TracedException(value, value.origin)

    def throw_in(self, value) -> None:
        """generator.throw(): raise `value` at the suspended YIELD_VALUE (CPython unwinds from the instruction it
        stopped at), so this frame's own handlers see it first; run() then goes on from the handler."""
        if value.origin is None:
            value.origin = self.origin()
        if not self.unwind(value):
            self.done = True
            raise TracedException(value, value.origin)

    def has_handler(self) -> bool:
        """Whether a traced try/with region, in this frame or a caller's, covers the current instruction: an
        exception raised here would be caught by traced code (capture/write_order.py asks it)."""
        frame = self
        while frame is not None:
            if exception_handler(frame.code, frame.current.offset) is not None:
                return True
            frame = frame.parent
        return False

    def unwind(self, value) -> bool:
        """Jump to this frame's handler for the current instruction, as CPython does: trim the stack to the
        handler's depth, push the instruction offset if asked, push the exception. False: no handler here."""
        entry = exception_handler(self.code, self.current.offset)
        if entry is None:
            return False
        del self.stack[entry.depth:]
        if entry.lasti:
            self.stack.append(const(self.current.offset))
        self.stack.append(value)
        self.ip = self.index_of[entry.target]
        self.ctx.pending_origin = value.origin
        return True

    # -- helpers for handlers ---------------------------------------------------------------------------------
    def jump(self, inst) -> None:
        self.ip = self.index_of[inst.argval]
        self.jumped = True

    def do_return(self, value) -> None:
        self.result = value
        self.done = True

    def load_local(self, name: str):
        value = self.locals.get(name, _UNBOUND)
        if value is _UNBOUND:
            raise GraphBreak.raises(UnboundLocalError, f"local variable '{name}' referenced before "
                                                       f"assignment")
        return self.load_local_value(name, value)

    def load_local_value(self, name: str, value):
        """Realize a lazily wrapped argument (guards are installed now, when the code first reads it)."""
        if type(value) is _Lazy:
            value = wrap(self, value.value, value.source)
            self.locals[name] = value
        return value

    def load_global(self, name: str):
        fn_globals = self.globals
        source = self._global_source(name)
        assigned = self.ctx.side_effects.load_source(source) if source is not None else None
        if assigned is not None and assigned is not DELETED:
            return assigned
        if name in fn_globals and assigned is None:
            return wrap(self, fn_globals[name], source)
        builtins = self.ctx.builtins if fn_globals is self.ctx.globals else _builtins_of(fn_globals)
        if name in builtins:
            if fn_globals is self.ctx.globals:
                self.ctx.guard_not_global(fn_globals, name, "G")
                return wrap(self, builtins[name], BuiltinSource(name))
            module = fn_globals.get("__name__")
            if builtins is not self.ctx.builtins or is_trusted_module(module):
                # torch's and the standard library's own code: their names are not rebound by user code
                return wrap(self, builtins[name], None)
            self.ctx.guard_not_global(fn_globals, name, str(module))
            return wrap(self, builtins[name], BuiltinSource(name))
        raise GraphBreak.raises(NameError, f"name '{name}' is not defined")

    def store_global(self, name: str, value) -> None:
        source = self._global_source(name)
        if source is None:
            raise GraphBreak("side_effect", f"assigning the global {name!r} of a module jitcore cannot reload")
        self.ctx.side_effects.store_source(source, value)

    def delete_global(self, name: str) -> None:
        """`del name` of a global: replayed after the graph; later reads raise NameError (or find the builtin)."""
        source = self._global_source(name)
        if source is None:
            raise GraphBreak("side_effect", f"deleting the global {name!r} of a module jitcore cannot reload")
        assigned = self.ctx.side_effects.load_source(source)
        if assigned is DELETED or (assigned is None and name not in self.globals):
            raise GraphBreak.raises(NameError, f"name '{name}' is not defined")
        if assigned is None:
            # the replayed `del` relies on the name being there: a guard that reads it fails (a miss) without it
            self.ctx.guard(source, TypeMatch(type(self.globals[name])))
        self.ctx.side_effects.delete_source(source)

    def _global_source(self, name):
        if self.globals is self.ctx.globals:
            return GlobalSource(name)
        module = self.globals.get("__name__")
        if module in sys.modules and vars(sys.modules[module]) is self.globals:
            return ModuleGlobalSource(module, name)
        return None

    # -- inlining ---------------------------------------------------------------------------------------------
    def inline_call(self, fn, args: list, kwargs: dict, fn_source=None, machinery=False):
        """Trace a call to an existing Python function by running its code in a child frame. `machinery`: fn is
        traced even where it is torch's own machinery (a mode's __torch_function__ is the dispatch itself)."""
        standin = self.ctx.standin_value(fn)
        if standin is not None:
            # a method of a class made inside (values/class_statement.py): the function value it stands for
            return standin.call(self, args, kwargs)
        if not isinstance(fn, types.FunctionType):
            # a Cython function (NumPy's) has a __code__ of placeholder bytes: only a Python function's is bytecode
            name = getattr(fn, "__qualname__", fn)
            raise GraphBreak("unsupported_call", f"{name} is not a Python function ({type(fn).__name__})")
        code = fn.__code__
        if is_torch_runtime(fn) and not machinery:
            raise GraphBreak("torch_runtime", f"{fn.__module__}.{fn.__qualname__}()")
        if is_disabled(fn):
            raise GraphBreak("disabled_function", f"{fn.__qualname__} is marked with jit.disable")
        if code.co_flags & (inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
            raise GraphBreak("generator", f"calling coroutine function {fn.__qualname__}")
        if fn_source is not None:
            # `helper.__code__ = other.__code__` between calls: the graph inlined this code
            self.ctx.guard(AttrSource(fn_source, "__code__"), CodeMatch(code, unwrapped))
        elif isinstance(fn, types.FunctionType) and not is_trusted_module(fn.__module__):
            # found without a source (a method in a class dict, a property's getter): the function object is
            # guarded where it was found; its code and defaults here
            self.ctx.guard_function(fn, unwrapped)
        # a function intercepted in place runs its own body behind the dispatcher: inline that body
        code = unwrapped(code)
        defaults = self._wrap_defaults(fn, fn_source)
        kwdefaults = self._wrap_kwdefaults(fn, fn_source)
        bound = bind_arguments(self, fn.__qualname__, code, defaults, kwdefaults, args, kwargs)
        cells = {}
        closure = fn.__closure__ or ()
        for index, name in enumerate(code.co_freevars):
            if fn_source is not None:
                cell_source = ItemSource(AttrSource(fn_source, "__closure__"), index)
                source = AttrSource(cell_source, "cell_contents")
            else:
                # a function found without a source (a method on its class, guarded there by identity): its cells
                # are that function's own, reached through the cell itself
                cell_source = None
                source = AttrSource(HeldSource(Held(closure[index]), f"{fn.__qualname__}.<{name}>"),
                                    "cell_contents")
            cells[name] = root_cell(self.ctx, closure[index], source, cell_source)
        return self._run_child(code, fn.__globals__, bound, cells, fn)

    def inline_nested(self, nested, args: list, kwargs: dict):
        """Trace a call to a function made inside the captured code (its closure cells are CellBoxes)."""
        code = nested.code
        if code.co_flags & (inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
            raise GraphBreak("generator", f"calling coroutine function {nested.qualname}")
        bound = bind_arguments(self, nested.qualname, code, nested.defaults, nested.kwdefaults, args, kwargs)
        cells = dict(zip(code.co_freevars, nested.closure))
        return self._run_child(code, nested.globals, bound, cells, None)

    def run_class_body(self, nested, namespace: dict):
        """Trace a class body (the function a class statement hands __build_class__) over `namespace`; returns
        what the body returns (its `__class__` cell, or None)."""
        if self.depth + 1 > self.ctx.max_inline_depth:
            raise GraphBreak("recursion_limit", f"inlining deeper than {self.ctx.max_inline_depth} calls")
        child = FrameState(self.ctx, nested.code, nested.globals, {}, dict(zip(nested.code.co_freevars,
                                                                             nested.closure)), parent=self)
        child.namespace = namespace
        saved = self.graph.current_location
        try:
            return child.run()
        finally:
            self.graph.current_location = saved

    def _run_child(self, code, fn_globals, bound, cells, fn):
        if self.depth + 1 > self.ctx.max_inline_depth:
            raise GraphBreak("recursion_limit", f"inlining deeper than {self.ctx.max_inline_depth} calls")
        self.ctx.frames_made += 1
        child = FrameState(self.ctx, code, fn_globals, bound, cells, parent=self, fn=fn)
        if code.co_flags & inspect.CO_GENERATOR:
            # not run now: each next() resumes it up to its next yield, when Python would
            child.is_generator = True
            generator = GeneratorValue(child)
            self.ctx.generators.append(generator)
            return generator
        saved = self.graph.current_location
        try:
            return child.run()
        finally:
            self.graph.current_location = saved

    def _wrap_defaults(self, fn, fn_source):
        defaults = fn.__defaults__ or ()
        if fn_source is None or not defaults:
            return [wrap(self, d, None) for d in defaults]
        base = AttrSource(fn_source, "__defaults__")
        # Defaults bind to the last parameters, so their number is relied on too: `f.__defaults__ = (1, 2)` on
        # `def f(a, b=1)` gives b the default 2 while item 0 still equals 1.
        if all(map(immutable_constant, defaults)):
            # one check on the whole tuple: a tuple of constants cannot change, so while it is the same object
            # (or an equal one) nothing about its items needs checking (Note [Facts implied by other checks])
            self.ctx.guard(base, EqualsMatch(defaults))
            return [wrap(self, d, None) for d in defaults]
        self.ctx.guard(base, LengthMatch(len(defaults)))
        return [wrap(self, d, ItemSource(base, i)) for i, d in enumerate(defaults)]

    def _wrap_kwdefaults(self, fn, fn_source):
        kwdefaults = fn.__kwdefaults__ or {}
        base = AttrSource(fn_source, "__kwdefaults__") if fn_source is not None else None
        return {k: wrap(self, v, ItemSource(base, k) if base is not None else None) for k, v in kwdefaults.items()}


class _Unbound:
    __slots__ = ()


_UNBOUND = _Unbound()


def _builtins_of(fn_globals):
    b = fn_globals.get("__builtins__", __builtins__)
    return b if isinstance(b, dict) else vars(b)
