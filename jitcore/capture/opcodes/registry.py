"""The opcode handler registry: each handler declares its opname(s) and its stack signature in CPython's notation.

`@opcode("BINARY_SUBSCR", "container, key -- item")`: the names left of `--` are popped (bottom first) and passed
to the handler as positional parameters after (state, inst); `name[expr]` pops a list of `expr` items (expr may use
`oparg`); `name if (expr)` exists only when expr holds. The handler returns the outputs: None for none, a value for
one, a tuple for several. The loop pops and pushes; handlers never touch the stack. An instruction whose jump
leaves the stack otherwise declares `jump=` too (same inputs: the loop pops before the handler decides).

`Handler.effect(oparg, jumped)` is the declared depth change, the one source of truth for the interpreter's
per-step check (config.debug_checks) and for codegen. `checked_effect` also holds it against CPython's
`dis.stack_effect` once per (handler, oparg, jumped), allowing only the differences listed in `DIS_DIFFERENCES`.
"""
from __future__ import annotations

import dataclasses
import dis
import inspect
import re

from jitcore.errors import InternalError

__all__ = ["opcode", "HANDLERS", "Signature", "Handler", "UNSUPPORTED", "DIS_DIFFERENCES", "StackEffectError"]

_ITEM = re.compile(r"^(?P<name>\w+)(?:\[(?P<count>[^\]]+)\])?(?:\s+if\s+\((?P<cond>.+)\))?$")


@dataclasses.dataclass(frozen=True)
class _Item:
    name: str
    count: object  # None for one slot, else a function of oparg
    cond: object   # None when always present, else a function of oparg

    def size(self, oparg: int) -> int:
        if self.cond is not None and not self.cond(oparg):
            return 0
        return 1 if self.count is None else self.count(oparg)


def _expr(text: str):
    code = compile(text, "<signature>", "eval")
    return lambda oparg: eval(code, {}, {"oparg": oparg or 0})


def _parse_side(text: str) -> tuple:
    items = []
    for raw in filter(None, (part.strip() for part in text.split(","))):
        m = _ITEM.match(raw)
        if not m:
            raise ValueError(f"bad stack item {raw!r}")
        count = _expr(m["count"]) if m["count"] else None
        cond = _expr(m["cond"]) if m["cond"] else None
        items.append(_Item(m["name"], count, cond))
    return tuple(items)


@dataclasses.dataclass(frozen=True)
class Signature:
    text: str
    inputs: tuple
    outputs: tuple
    #: oparg -> its input layout (`input_layout`), made on first use: the interpreter asks it at every step
    _layouts: dict = dataclasses.field(default_factory=dict, init=False, repr=False, compare=False)

    @classmethod
    def parse(cls, text: str) -> "Signature":
        if "--" not in text:
            raise ValueError(f"stack signature {text!r} needs '--' between inputs and outputs")
        left, right = text.split("--")
        return cls(text, _parse_side(left), _parse_side(right))

    def input_layout(self, oparg) -> tuple:
        """(slots, all_single) for one oparg: per input (bottom first) its slot count, and whether every input is
        one slot that is present (the common case, popped as one slice). Cached: the counts are pure functions
        of oparg, and evaluating them per step costs more than the step's own work."""
        layout = self._layouts.get(oparg)
        if layout is None:
            slots = tuple(item.size(oparg) for item in self.inputs)
            single = all(item.count is None for item in self.inputs) and all(n == 1 for n in slots)
            layout = self._layouts[oparg] = (slots, single)
        return layout

    def pops(self, oparg) -> int:
        return sum(item.size(oparg) for item in self.inputs)

    def pushes(self, oparg) -> int:
        return sum(item.size(oparg) for item in self.outputs)

    def take(self, stack, oparg) -> tuple:
        """(what stays below the inputs, {input name: its item, a list for an array input, None when absent})
        for a stack (bottom first) the instruction is about to run on; the stack itself is not changed."""
        depth = len(stack) - self.pops(oparg)
        inputs, position = {}, depth
        for item in self.inputs:
            n = item.size(oparg)
            chunk = list(stack[position:position + n])
            inputs[item.name] = chunk if item.count is not None else (chunk[0] if chunk else None)
            position += n
        return list(stack[:depth]), inputs


class StackEffectError(InternalError):
    """A handler's stack effect disagrees with its declared signature, or the declaration with CPython's.

    An InternalError that is never contained: under config.debug_checks it reaches the caller instead of a native
    fallback (the interpreter and the runtime let every JitError through)."""


#: where the interpreter's stack model differs from dis.stack_effect on purpose:
#: opname -> (difference when it falls through, difference when it jumps, why)
DIS_DIFFERENCES = {
    "FOR_ITER": (0, -2, "an exhausted FOR_ITER pops its iterator and jumps past the END_FOR at its target (3.12 "
                        "bytecodes.c); dis counts the next item pushed and that END_FOR's two pops"),
    "RETURN_GENERATOR": (1, 1, "the value the first next() sends is on the generator frame's stack when it resumes "
                               "after this instruction; dis counts it nowhere"),
}


@dataclasses.dataclass(frozen=True)
class Handler:
    opname: str
    fn: object
    signature: Signature
    #: signature when the instruction jumps, if it differs
    jump_signature: Signature | None
    #: (oparg, jumped) -> declared effect, filled by checked_effect once it agrees with dis
    _checked: dict = dataclasses.field(default_factory=dict, init=False, repr=False, compare=False)

    def effect(self, oparg, jumped: bool) -> int:
        """The declared depth change of one execution (`jumped`: it took its jump)."""
        sig = self.jump_signature if jumped and self.jump_signature is not None else self.signature
        return sig.pushes(oparg) - sig.pops(oparg)

    def checked_effect(self, oparg, jumped: bool) -> int:
        """`effect`, first held against dis.stack_effect (StackEffectError when they disagree); cached."""
        key = (oparg, jumped)
        found = self._checked.get(key)
        if found is None:
            declared = self.effect(oparg, jumped)
            expected = dis_effect(self.opname, oparg, jumped)
            if declared != expected:
                raise StackEffectError(f"{self.opname} (arg {oparg}{', jumping' if jumped else ''}) declares a stack "
                                       f"effect of {declared}, dis says {expected} (signature "
                                       f"{self.signature.text!r}, jump {self.jump_signature and self.jump_signature.text!r})")
            found = self._checked[key] = declared
        return found


def dis_effect(opname: str, oparg, jumped: bool) -> int:
    """dis.stack_effect of one execution, with the interpreter's DIS_DIFFERENCES applied."""
    op = dis.opmap[opname]
    effect = dis.stack_effect(op, oparg if op >= dis.HAVE_ARGUMENT else None, jump=jumped)
    difference = DIS_DIFFERENCES.get(opname)
    if difference is not None:
        effect += difference[1 if jumped else 0]
    return effect


HANDLERS: dict[str, Handler] = {}

#: opnames the interpreter refuses on purpose, with the graph-break kind it raises (a test keeps this complete)
UNSUPPORTED: dict[str, str] = {}


def opcode(*opnames: str, signature: str, jump: str | None = None):
    """Register a handler for opnames with the given stack signature (and the one of its jump, if it differs)."""
    sig = Signature.parse(signature)
    jump_sig = Signature.parse(jump) if jump else None
    if jump_sig is not None and "".join(jump.split("--")[0].split()) != "".join(signature.split("--")[0].split()):
        raise ValueError(f"{opnames}: a jump signature pops what the signature pops (the loop pops first)")

    def register(fn):
        params = list(inspect.signature(fn).parameters)[2:]
        expected = [item.name for item in sig.inputs]
        if params != expected:
            raise TypeError(f"handler {fn.__name__} takes {params}, but its signature pops {expected}")
        for name in opnames:
            if name not in dis.opmap:
                raise ValueError(f"{name} is not an opcode of this Python")
            if name in HANDLERS:
                raise ValueError(f"{name} already has a handler ({HANDLERS[name].fn.__name__})")
            if name.lower() != fn.__name__ and len(opnames) == 1:
                raise ValueError(f"handler for {name} must be named {name.lower()}, not {fn.__name__}")
            HANDLERS[name] = Handler(name, fn, sig, jump_sig)
        return fn

    return register


def unsupported(kind: str, *opnames: str) -> None:
    for name in opnames:
        if name not in dis.opmap:
            raise ValueError(f"{name} is not an opcode of this Python")
        UNSUPPORTED[name] = kind
