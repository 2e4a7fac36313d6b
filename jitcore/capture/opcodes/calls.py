"""Calls: KW_NAMES, CALL, CALL_FUNCTION_EX. The callee value decides what a call means (inline, node, fold)."""
from __future__ import annotations

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.opcodes.registry import opcode
from jitcore.capture.values import NULL
from jitcore.capture.values.mapping import DictValue


@opcode("KW_NAMES", signature="--")
def kw_names(state, inst):
    """Names for the keyword arguments of the CALL that follows (3.12 keeps them in a frame register)."""
    state.kw_names = inst.argval


@opcode("CALL", signature="method, callable, args[oparg] -- res")
def call(state, inst, method, callable, args):
    if method is not NULL:
        callable, args = method, [callable, *args]
    names = state.kw_names
    state.kw_names = ()
    if names:
        kwargs = dict(zip(names, args[len(args) - len(names):]))
        args = args[:len(args) - len(names)]
    else:
        kwargs = {}
    return callable.call(state, args, kwargs)


@opcode("CALL_FUNCTION_EX", signature="null, func, callargs, kwargs if (oparg & 1) -- result")
def call_function_ex(state, inst, null, func, callargs, kwargs):
    args = callargs.iterate(state)
    if kwargs is None:
        kw = {}
    elif isinstance(kwargs, DictValue):
        if not all(isinstance(k, str) for k in kwargs.items):
            raise GraphBreak.raises(TypeError, "keywords must be strings")
        kw = dict(kwargs.items)
    else:
        raise GraphBreak("unsupported_value", f"** of a {kwargs.kind_name}")
    return func.call(state, args, kw)
