"""capture/code_reader.py reads every code object as dis.get_instructions does: dis is the oracle."""
import asyncio
import collections
import dis
import inspect
import json
import types

import torch

from jitcore.capture import interpreter
from jitcore.capture.code_reader import read_instructions


#: more than 256 names and constants: their indexes need EXTENDED_ARG
_MANY_NAMES = compile("".join(f"x{i} = {i}\n" for i in range(300)), "<many names>", "exec")


def _codes(*roots) -> list:
    """Every code object of the functions and methods in `roots` (modules or classes), nested ones included."""
    found, pending = {}, []
    for root in roots:
        for value in vars(root).values():
            value = getattr(value, "__func__", value)
            if isinstance(value, types.FunctionType):
                pending.append(value.__code__)
    while pending:
        code = pending.pop()
        if code not in found:
            found[code] = None
            pending.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return list(found)


def _every_construct(x, *args, key=None, **kwargs):
    """Loads of every kind, jumps both ways, comparisons, f-strings, closures, try/with, comprehensions,
    a huge constant index (EXTENDED_ARG), async and generator code."""
    total = 0
    for i in range(x):
        if i % 2 == 0 and i is not None or i in args:
            continue
        total += i ** 2 // 3 - (i << 1)
    try:
        with open(__file__) as handle:
            text = handle.readline()
    except (OSError, ValueError) as exc:
        text = f"{exc!r:>10} {x!s} {total:{key}}"
    finally:
        total -= 1

    def inner(y=total, *, z=(1, 2)):
        nonlocal total
        total += y
        return [a for a in z if a > y]

    async def waiting():
        async with asyncio.timeout(1):
            await asyncio.sleep(0)
        yield x
    lookup = {i: str(i) for i in range(300)}
    return (inner, waiting, lookup[299], text, {**kwargs}, [*args], -x, +x, not x, ~x, x @ x if False else None,
            dict(a=1).fromkeys, super)


def test_read_instructions_equals_dis_on_torch_and_the_standard_library():
    codes = _codes(torch.nn.functional, torch.nn.Module, json.decoder, collections, inspect)
    codes += _codes(types.SimpleNamespace(f=_every_construct)) + [_MANY_NAMES]
    assert len(codes) > 300
    for code in codes:
        assert read_instructions(code) == list(dis.get_instructions(code)), code


def test_the_oracle_sees_extended_args_and_jumps_both_ways():
    ops = {inst.opname for inst in read_instructions(_every_construct.__code__)}
    ops |= {inst.opname for inst in read_instructions(_MANY_NAMES)}
    assert {"EXTENDED_ARG", "JUMP_BACKWARD", "POP_JUMP_IF_FALSE", "FORMAT_VALUE", "BINARY_OP", "COMPARE_OP",
            "LOAD_DEREF", "MAKE_FUNCTION", "CALL_INTRINSIC_1", "LOAD_ATTR"} <= ops


def test_the_interpreter_reads_instructions_through_the_reader():
    def f(x):
        return x + 1
    insts, index_of = interpreter.instructions_of(f.__code__)
    assert insts == list(dis.get_instructions(f.__code__))
    assert all(index_of[inst.offset] == i for i, inst in enumerate(insts))
