"""Codes that run a frame natively while the Python functions it calls run compiled (Note [Breaks inside loops]).

`calls_through(code, hook, params=None)` -> a copy of `code` in which the callable of every call passes through
`hook(callable)` first (the runtime's hook hands back a compiled copy of a user function, or the callable as it
is). `params`: flatten the signature to these names, all positional (the dispatcher hands a frame's parameters
over in co_varnames order). Made codes are remembered (`made_here`) so auto-enable never treats one as user code.
Imports only `bytecode` and capture's code cache.
"""
from __future__ import annotations

from bytecode import Bytecode, CompilerFlags, Instr, Label, TryBegin, TryEnd

from jitcore.capture.code_cache import CodeCache

__all__ = ["calls_through", "made_here"]

_CO_VARARGS, _CO_VARKEYWORDS = 0x04, 0x08

#: codes made here -> True, weakly
_MADE = CodeCache()


def made_here(code) -> bool:
    return _MADE.get(code, False)


# Note [Calls through a hook]
# CPython 3.12's CALL n finds `method, callable, args[n]` on the stack (bytecodes.c): when `method` is NULL the
# callable is the slot above it, otherwise `method` is called with the other slot as its first argument. A hook
# may only replace the callable where the slot below it is known to be NULL, never `self`. So:
# - LOAD_ATTR and LOAD_SUPER_ATTR in their method form (which push `function, self` or `NULL, bound`, decided
#   at run time) become the plain attribute read followed by PUSH_NULL; SWAP 2: always `NULL, bound method`;
# - a small dataflow over the code tells at each CALL whether the slot below the callable is NULL on every path
#   (PUSH_NULL, LOAD_GLOBAL's null, the rewritten reads; moved by SWAP and COPY); a call where it may not be (a
#   resume code's stack handed over holding a method) runs its callee as it is;
# - before such a CALL (before its KW_NAMES, whose names the next CALL takes) the callable is brought to the top
#   (SWAP n+1), replaced by `hook(callable)`, and put back (SWAP n+1). `LOAD_CONST hook; SWAP 2; CALL 0` calls
#   hook(top) in place: CALL 0 with a non-NULL `method` slot calls it with the slot above as its argument.
# CALL_FUNCTION_EX ignores the slot below its callable, so its callable is always replaced.


def calls_through(code, hook, params=None):
    """`code` with every call's callable passed through `hook` (Note [Calls through a hook])."""
    body = Bytecode.from_code(code, conserve_exception_block_stackdepth=True)
    items = list(body)
    null_below = _null_below_callee(items)
    out = []
    for index, item in enumerate(items):
        if isinstance(item, Instr) and item.name in ("LOAD_ATTR", "LOAD_SUPER_ATTR") and item.arg[0]:
            arg = (False, *item.arg[1:])
            out += [Instr(item.name, arg, location=item.location),
                    Instr("PUSH_NULL", location=item.location), Instr("SWAP", 2, location=item.location)]
            continue
        if isinstance(item, Instr) and (item.name == "CALL_FUNCTION_EX" or null_below.get(index)):
            depth = item.arg + 1 if item.name == "CALL" else 2 + (item.arg & 1)
            at = len(out) - 1 if out and isinstance(out[-1], Instr) and out[-1].name == "KW_NAMES" else len(out)
            out[at:at] = _hooked(hook, depth, item.location)
        out.append(item)
    made = Bytecode(out)
    made._copy_attr_from(body)
    if params is not None:
        made.argnames = list(params)
        made.argcount = len(params)
        made.posonlyargcount = 0
        made.kwonlyargcount = 0
        made.flags = CompilerFlags(code.co_flags & ~(_CO_VARARGS | _CO_VARKEYWORDS))
    result = made.to_code()
    _MADE[result] = True
    return result


def _hooked(hook, depth: int, location) -> list:
    """Replace the stack slot `depth` from the top (1 is the top) by hook(slot), the rest in place."""
    call = [Instr("LOAD_CONST", hook, location=location), Instr("SWAP", 2, location=location),
            Instr("CALL", 0, location=location)]
    if depth == 1:
        return call
    swap = Instr("SWAP", depth, location=location)
    return [swap, *call, Instr("SWAP", depth, location=location)]


def _null_below_callee(items: list) -> dict:
    """index of each CALL -> whether the slot below its callable is NULL on every path that reaches it."""
    labels = {item: i for i, item in enumerate(items) if isinstance(item, Label)}
    stacks: dict = {0: ()}
    work = [0]
    found: dict = {}

    def reach(index: int, stack: tuple) -> None:
        known = stacks.get(index)
        if known is not None:
            if len(known) != len(stack):
                raise ValueError(f"stack depths disagree at a join: {index} {items[index]} {known} {stack}")
            stack = tuple(a and b for a, b in zip(known, stack))
            if stack == known:
                return
        stacks[index] = stack
        work.append(index)

    while work:
        index = work.pop()
        stack = stacks[index]
        if index >= len(items):
            continue
        item = items[index]
        if isinstance(item, TryBegin):
            # a handler starts from the region's depth plus what unwinding pushes: nothing known NULL there
            reach(labels[item.target], (False,) * (item.stack_depth + item.push_lasti + 1))
            reach(index + 1, stack)
            continue
        if not isinstance(item, Instr):
            reach(index + 1, stack)
            continue
        if item.name == "CALL":
            below = stack[-(item.arg + 2)]
            found[index] = found.get(index, True) and below
        if item.has_jump():
            reach(labels[item.arg], _effect(item, stack, True))
        if not item.is_final() and not item.is_uncond_jump():
            reach(index + 1, _effect(item, stack, False))
    return {index: known for index, known in found.items() if known}


def _effect(item: Instr, stack: tuple, jump: bool) -> tuple:
    """The stack of NULL-known flags after `item`."""
    name = item.name
    if name == "PUSH_NULL":
        return stack + (True,)
    if name == "SWAP":
        listed = list(stack)
        listed[-1], listed[-item.arg] = listed[-item.arg], listed[-1]
        return tuple(listed)
    if name == "COPY":
        return stack + (stack[-item.arg],)
    if name == "LOAD_GLOBAL" and item.arg[0]:
        return stack + (True, False)
    if name == "LOAD_ATTR" and item.arg[0]:
        return stack[:-1] + (True, False)  # rewritten: NULL, bound method
    if name == "LOAD_SUPER_ATTR" and item.arg[0]:
        return stack[:-3] + (True, False)
    # bytecode's split of the net effect is (net, 0) for instructions outside its tables: pure pushes or pops
    pre, _ = item.pre_and_post_stack_effect(jump)
    pops = -pre if pre < 0 else 0
    return stack[:len(stack) - pops] + (False,) * (item.stack_effect(jump) + pops)
