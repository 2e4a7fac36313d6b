"""Resume codes: new code objects that continue a frame at an instruction, given its stack and live locals.

`resume_code(code, target, kinds, names)` returns the original body with a prologue in front:
`[COPY_FREE_VARS] RESUME 0; LOAD_FAST_AND_CLEAR ___stack_i | PUSH_NULL ...; JUMP_FORWARD target`. Its parameters
are the non-NULL stack slots (`___stack0`, ...) and then the live locals by their own names. The body keeps the original
exception table, so a with/try region around the target still catches what the resumed code raises. A resume
function is a stub that capture runs from the original code (Note [Resume functions are stubs],
runtime/lazy_resume.py): its resume code is the body it runs natively, assembled only when it first runs so; a
step code (`tails`) is assembled when its step function is made.
Note [Resume pitfalls] (DESIGN §4, research/runtime.md Q3): jumping into a try region makes `bytecode` write
depth 32768 into the exception table, so the original depths are copied back and exception depths are not
recomputed; `LOAD_FAST` of an unset local crashes 3.12, so every load becomes `LOAD_FAST_CHECK`; the original
RESUME/MAKE_CELL/COPY_FREE_VARS become NOPs. `OFFSETS` maps a resume code's instruction offsets back to the
original's, and names its target, for tracebacks and reports (`resume_origin`, `resume_target`, which answer for
stubs too); it holds resume codes and originals weakly (resume functions live in a cache keyed by their original:
a strong reference back would keep both alive for good), and `clear()` empties it.
"""
from __future__ import annotations

import bisect
import dis
import weakref

from bytecode import Bytecode, CellVar, FreeVar, Instr, Label, TryBegin, TryEnd, CompilerFlags

from jitcore.capture.code_cache import CodeCache
from jitcore.capture.resume_points import resume_point

__all__ = ["resume_code", "resume_origin", "resume_target", "real_offset", "restore_try_depths", "clear",
           "closure_names"]

_CO_VARARGS, _CO_VARKEYWORDS = 0x04, 0x08

#: resume code -> (weak reference to the original code, {resume offset: original offset}, original target offset)
OFFSETS = CodeCache()


#: code -> its instructions without EXTENDED_ARG/CACHE (an original is read once however many breaks it has)
_REAL = CodeCache()


def _real(code):
    found = _REAL.get(code)
    if found is None:
        found = _REAL[code] = [i for i in dis.get_instructions(code) if i.opname not in ("EXTENDED_ARG", "CACHE")]
    return found


def _tail_block(tail, line: int, freevars=()) -> list:
    """`return callable(stack_tuple, *live_locals)` for the tail (kinds, names, callable): the stack described by
    `kinds` (NULLs are dropped with Dynamo's trick: SWAP the NULL to the top, then call a no-op function on it,
    which consumes it), then the locals `names`. With `freevars` (a frame with cells), `callable` is a resume
    maker, handed the step code's own cells first."""
    kinds, names, callee = tail
    out = []
    current = list(kinds)
    while "null" in current:
        depth = len(current) - max(i for i, k in enumerate(current) if k == "null")
        for j in range(2, depth + 1):
            out.append(Instr("SWAP", j, lineno=line))
            current[-1], current[-j] = current[-j], current[-1]
        out += [Instr("LOAD_CONST", _nothing, lineno=line), Instr("CALL", 0, lineno=line),
                Instr("POP_TOP", lineno=line)]
        current.pop()
    out.append(Instr("BUILD_TUPLE", len(current), lineno=line))
    out.append(Instr("STORE_FAST", "___jit_stack", lineno=line))
    out.append(Instr("PUSH_NULL", lineno=line))
    out.append(Instr("LOAD_CONST", _Tail(callee, kinds, bool(freevars)), lineno=line))
    if freevars:
        out += [Instr("LOAD_CLOSURE", FreeVar(name), lineno=line) for name in freevars]
        out.append(Instr("BUILD_TUPLE", len(freevars), lineno=line))
    out.append(Instr("LOAD_FAST", "___jit_stack", lineno=line))
    out += [Instr("LOAD_FAST_CHECK", name, lineno=line) for name in names]
    out += [Instr("CALL", 1 + bool(freevars) + len(names), lineno=line), Instr("RETURN_VALUE", lineno=line)]
    return out


def _nothing():
    return None


def _swap_order(kinds) -> list:
    """The stack positions (bottom first) of the values _tail_block packs, in tuple order."""
    order = list(range(len(kinds)))
    current = list(kinds)
    while "null" in current:
        depth = len(current) - max(i for i, k in enumerate(current) if k == "null")
        for j in range(2, depth + 1):
            order[-1], order[-j] = order[-j], order[-1]
            current[-1], current[-j] = current[-j], current[-1]
        order.pop()
        current.pop()
    return order


class _Tail:
    """Calls the continuation with the packed stack put back in bottom-first order, then the live locals."""

    __slots__ = ("callee", "positions", "with_cells")

    def __init__(self, callee, kinds, with_cells=False):
        self.callee = callee
        order = _swap_order(kinds)
        values = [i for i, k in enumerate(kinds) if k == "value"]
        self.positions = [order.index(i) for i in values]
        self.with_cells = with_cells

    def __call__(self, *args):
        if self.with_cells:
            cells, stack, *local_values = args
            return self.callee(cells)(*[stack[p] for p in self.positions], *local_values)
        stack, *local_values = args
        return self.callee(*[stack[p] for p in self.positions], *local_values)


_EXTENDED_ARG = dis.opmap["EXTENDED_ARG"]
_CACHES = dis._inline_cache_entries


def _starts(code) -> list:
    """The offsets of `_real(code)`'s instructions, read straight from the bytes (dis builds far more)."""
    raw = code.co_code
    out = []
    i = 0
    while i < len(raw):
        op = raw[i]
        if op == _EXTENDED_ARG:
            i += 2
            continue
        out.append(i)
        i += 2 + 2 * _CACHES[op]
    return out


#: code -> `_starts(code)` (a break inside a resume code maps offsets of a code that is never disassembled)
_STARTS = CodeCache()


def real_offset(code, offset: int) -> int:
    """The offset of the instruction that starts at `offset`, skipping EXTENDED_ARG prefixes."""
    starts = _STARTS.get(code)
    if starts is None:
        starts = _STARTS[code] = _starts(code)
    index = bisect.bisect_left(starts, offset)
    if index < len(starts):
        return starts[index]
    raise ValueError(f"no instruction at or after offset {offset} in {code.co_qualname}")


def resume_origin(code):
    """(original code, offset map) for a resume or step code, (original, {}) for a resume stub (it holds none of
    the original's instructions), or (code, None) for an original one (or an orphan)."""
    found = OFFSETS.get(code)
    original = found[0]() if found is not None else None
    if original is not None:
        return original, found[1]
    point = resume_point(code)
    return (code, None) if point is None else (point.original, {})


def resume_target(code) -> int | None:
    """The offset of the original code where a resume stub or resume code continues, or None."""
    found = OFFSETS.get(code)
    if found is not None:
        return found[2]
    point = resume_point(code)
    return None if point is None else point.target


def clear() -> None:
    OFFSETS.clear()
    _REAL.clear()
    _STARTS.clear()
    _PARSED.clear()


def closure_names(code) -> list:
    """The free variables of `code`'s resume codes: its cell variables, then its own free variables.

    Note [Resume functions share the frame's cells]: a cell variable of the frame (a local an inner function or
    class captured) may already be held by a closure made before the break, so the resume function must read and
    write that very cell, not a copy: its cell variables become free variables, and the resume function is made
    per call over the frame's cells (`___cells` of a resume frame already are them)."""
    return [*code.co_cellvars, *code.co_freevars]


def resume_code(code, target: int, kinds: tuple, names: tuple, tails=None):
    """The resume code continuing `code` at offset `target`; kinds[i] is "null" or "value" per stack slot, `names`
    the locals it receives after the stack (the live ones: any other is unbound, and read with LOAD_FAST_CHECK).

    `tails` makes a *step code* instead: {offset: (kinds there, live names there, callable)}. Before each of those
    offsets the code packs its stack and those locals and returns `callable(stack_tuple, *locals)`, outside every
    exception region (DESIGN §4: an exception from the callee must not run this code's handlers a second time). A
    step code runs just the instruction at `target` inside its original try/with regions, then hands over.
    """
    target = real_offset(code, target)

    stack_names = tuple(f"___stack{i}" for i, kind in enumerate(k for k in kinds if k == "value"))
    line = code.co_firstlineno
    jump_to = Label()
    prologue = []
    freevars = closure_names(code)
    if freevars:
        prologue.append(Instr("COPY_FREE_VARS", len(freevars), lineno=line))
    prologue.append(Instr("RESUME", 0, lineno=line))
    values = iter(stack_names)
    for kind in kinds:
        # cleared as they are pushed: `locals()` in the resumed code shows the user's names only
        prologue.append(Instr("PUSH_NULL", lineno=line) if kind == "null"
                        else Instr("LOAD_FAST_AND_CLEAR", next(values), lineno=line))
    prologue.append(Instr("JUMP_FORWARD", jump_to, lineno=line))

    # Note [Resume bodies hold what is reachable]: a resume code continues at `target`, so the code no path from
    # there reaches is left out: the code before it, and in a step code what lies behind its tails (each ends in a
    # return), so a step code holds the instruction, its tails and the handlers around it with what follows them.
    # The walk and the body run over the original's instructions as parsed once (`_parsed`), touching only what
    # is kept: a resume code is assembled only to run natively (Note [Resume functions are stubs],
    # runtime/lazy_resume.py), a step code whenever a break inside a try region makes one, and either costs what
    # it can still run, not the function's whole length at every break. Try regions are written anew around the
    # kept instructions (a run of them in one region of the original is one region, depth and handler kept).
    parsed = _parsed(code)
    start = parsed.index_of.get(target)
    if start is None:
        raise ValueError(f"offset {target} is not an instruction of {code.co_qualname}")
    tails = {parsed.index_of[real_offset(code, o)]: t for o, t in (tails or {}).items()}
    body = []
    #: id(instruction put in the body) -> the original offset it came from
    origin_of = {}
    region = copy = None
    for k in parsed.reachable(start, tails):
        instr = parsed.instrs[k]
        body.extend(parsed.labels_before[k])
        if k in tails:
            # hand the stack and locals over, outside every region (the tail returns)
            if copy is not None:
                body.append(TryEnd(copy))
                region = copy = None
            body.extend(_tail_block(tails[k], instr.lineno or line, freevars))
            if k != start:
                continue
        if parsed.regions[k] is not region:
            if copy is not None:
                body.append(TryEnd(copy))
            region = parsed.regions[k]
            copy = region.copy() if region is not None else None
            if copy is not None:
                body.append(copy)
        if k == start:
            body.append(jump_to)
        body.append(instr)
        origin_of[id(instr)] = parsed.offsets[k]
    if copy is not None:
        body.append(TryEnd(copy))

    out = Bytecode()
    # Note [Resume codes carry the user's names]: a resume or step code is the user's function continued, so it
    # has the function's name, qualified name, file and line table: tracebacks, pdb and profilers show the user's
    # function and line. Which resume point it is lives in OFFSETS (resume_origin), never in the name.
    out.name = code.co_name
    out.qualname = code.co_qualname
    out.filename = code.co_filename
    out.first_lineno = code.co_firstlineno
    out.argnames = [*stack_names, *names]
    out.argcount = len(out.argnames)
    out.posonlyargcount = 0
    out.kwonlyargcount = 0
    out.flags = CompilerFlags(code.co_flags & ~(_CO_VARARGS | _CO_VARKEYWORDS))
    out.cellvars = []
    out.freevars = freevars
    out.extend(prologue + body)
    # exception depths are not recomputed (see the Note), so the stack size must cover what was inserted: the
    # prologue's pushes, and each tail's stack plus [NULL, callable, tuple, live locals...]
    needed = len(kinds) + 1
    for after, passed, _ in tails.values():
        needed = max(needed, len(after) + 2, 3 + len(passed) + len(freevars))
    new = out.to_code(stacksize=max(code.co_stacksize, needed), compute_exception_stack_depths=False)

    # one start per instruction after the prologue; a tail's instructions have no original offset
    new_starts = _starts(new)[len(prologue):]
    placed = [item for item in body if isinstance(item, Instr)]
    offsets = {at: origin_of[id(item)] for at, item in zip(new_starts, placed) if id(item) in origin_of}
    OFFSETS[new] = (weakref.ref(code), offsets, target)
    return new


#: original code -> its _Parsed form
_PARSED = CodeCache()


def _parsed(code):
    found = _PARSED.get(code)
    if found is None:
        found = _PARSED[code] = _Parsed(code)
    return found


class _Parsed:
    """An original code as resume codes are made from it, parsed once: its instructions as a resume code runs them
    (RESUME/MAKE_CELL/COPY_FREE_VARS as NOPs, every LOAD_FAST a LOAD_FAST_CHECK: Note [Resume pitfalls]; a cell
    variable read as a free one: Note [Resume functions share the frame's cells]), each
    one's offset, the labels just before it, the try region (TryBegin, depth restored) it is in, and where each
    label leads. Instructions and labels are shared by every resume code of the original, never mutated."""

    def __init__(self, code):
        src = Bytecode.from_code(code)
        real = _real(code)
        instrs = [x for x in src if isinstance(x, Instr)]
        if len(real) != len(instrs) or any(r.opname != i.name for r, i in zip(real, instrs)):
            raise ValueError(f"bytecode and dis disagree on {code.co_qualname}")
        restore_try_depths(src, code)
        self.instrs, self.offsets, self.labels_before, self.regions = [], [], [], []
        #: id(label) -> the index of the instruction it stands before
        self.label_at = {}
        labels, region = [], None
        for item in src:
            if isinstance(item, Label):
                labels.append(item)
            elif isinstance(item, TryBegin):
                region = item
            elif isinstance(item, TryEnd):
                region = None
            elif isinstance(item, Instr):
                for label in labels:
                    self.label_at[id(label)] = len(self.instrs)
                self.labels_before.append(labels)
                labels = []
                self.regions.append(region)
                self.offsets.append(real[len(self.instrs)].offset)
                if item.name in ("RESUME", "MAKE_CELL", "COPY_FREE_VARS"):
                    item = Instr("NOP", location=item.location)
                elif item.name == "LOAD_FAST":
                    item = Instr("LOAD_FAST_CHECK", item.arg, location=item.location)
                elif isinstance(item.arg, CellVar):
                    # the frame's cells are a resume code's free variables (`closure_names`)
                    item = Instr(item.name, FreeVar(item.arg.name), location=item.location)
                self.instrs.append(item)
        #: original offset -> instruction index
        self.index_of = {offset: k for k, offset in enumerate(self.offsets)}

    def reachable(self, start: int, stops) -> list:
        """The indices of the instructions some path from `start` reaches, in order: paths follow fall-through,
        jumps and the handler of the region around each instruction, and end at a stop (a tail's offset, where
        the tail returns; the stop itself is listed)."""
        kept = set()
        work = [start]
        instrs, regions, label_at = self.instrs, self.regions, self.label_at
        while work:
            k = work.pop()
            while k < len(instrs) and k not in kept:
                kept.add(k)
                if k in stops and k != start:
                    break
                instr = instrs[k]
                if regions[k] is not None:
                    work.append(label_at[id(regions[k].target)])
                if isinstance(instr.arg, Label):
                    work.append(label_at[id(instr.arg)])
                if instr.name in _NO_FALL_THROUGH:
                    break
                k += 1
        return sorted(kept)


def restore_try_depths(items, code) -> None:
    """Give the TryBegins of `items` (code's abstract form, from `Bytecode.from_code`, which leaves every one at
    depth 0) the depths of code's exception table, start-ordered: they are kept, never recomputed (Note [Resume
    pitfalls])."""
    tries = [x for x in items if isinstance(x, TryBegin)]
    table = sorted(dis._parse_exception_table(code), key=lambda e: e.start)
    if len(tries) != len(table):
        raise ValueError(f"exception table of {code.co_qualname} does not match its try blocks")
    for begin, entry in zip(tries, table):
        begin.stack_depth = entry.depth


#: instructions after which control does not fall through to the next one
_NO_FALL_THROUGH = frozenset({"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP",
                              "RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE"})
