"""The opcode handler registry: each handler declares its opname(s) and its stack signature in CPython's notation.

`@opcode("BINARY_SUBSCR", "container, key -- item")`: the names left of `--` are popped (bottom first) and passed
to the handler as positional parameters after (state, inst); `name[expr]` pops a list of `expr` items (expr may use
`oparg`); `name if (expr)` exists only when expr holds. The handler returns the outputs: None for none, a value for
one, a tuple for several. The loop pops and pushes; handlers never touch the stack (except those registered with
`edits_stack=True`, whose real depth change the loop checks instead).
"""
from __future__ import annotations

import dataclasses
import dis
import inspect
import re

__all__ = ["opcode", "HANDLERS", "Signature", "Handler", "UNSUPPORTED"]

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

    @classmethod
    def parse(cls, text: str) -> "Signature":
        if "--" not in text:
            raise ValueError(f"stack signature {text!r} needs '--' between inputs and outputs")
        left, right = text.split("--")
        return cls(text, _parse_side(left), _parse_side(right))

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


@dataclasses.dataclass(frozen=True)
class Handler:
    opname: str
    fn: object
    signature: Signature
    #: signature when the instruction jumps, if it differs
    jump_signature: Signature | None
    edits_stack: bool


HANDLERS: dict[str, Handler] = {}

#: opnames the interpreter refuses on purpose, with the graph-break kind it raises (a test keeps this complete)
UNSUPPORTED: dict[str, str] = {}


def opcode(*opnames: str, signature: str, jump: str | None = None, edits_stack: bool = False):
    """Register a handler for opnames with the given stack signature."""
    sig = Signature.parse(signature)
    jump_sig = Signature.parse(jump) if jump else None

    def register(fn):
        params = list(inspect.signature(fn).parameters)[2:]
        if not edits_stack:
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
            HANDLERS[name] = Handler(name, fn, sig, jump_sig, edits_stack)
        return fn

    return register


def unsupported(kind: str, *opnames: str) -> None:
    for name in opnames:
        if name not in dis.opmap:
            raise ValueError(f"{name} is not an opcode of this Python")
        UNSUPPORTED[name] = kind
