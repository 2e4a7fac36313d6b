"""Operators: BINARY_OP, COMPARE_OP, UNARY_*, IS_OP, CONTAINS_OP, subscripts and slices.

The operator tables map 3.12 opargs to `operator` names; the values decide what an operator means.
"""
from __future__ import annotations

import dis

from jitcore.capture.opcodes.containers import build_slice_value
from jitcore.capture.opcodes.registry import opcode
from jitcore.capture.values import const
from jitcore.capture.values.builtins import apply_binary
from jitcore.capture.values.builtins import _is as identity_test

#: BINARY_OP oparg -> operator function name (3.12 Include/opcode.h NB_* order)
_NB_NAMES = {"NB_ADD": "add", "NB_AND": "and_", "NB_FLOOR_DIVIDE": "floordiv", "NB_LSHIFT": "lshift",
             "NB_MATRIX_MULTIPLY": "matmul", "NB_MULTIPLY": "mul", "NB_REMAINDER": "mod", "NB_OR": "or_",
             "NB_POWER": "pow", "NB_RSHIFT": "rshift", "NB_SUBTRACT": "sub", "NB_TRUE_DIVIDE": "truediv",
             "NB_XOR": "xor"}
BINARY_OPS = []
for _name, _symbol in dis._nb_ops:
    if _name.startswith("NB_INPLACE_"):
        base = _NB_NAMES["NB_" + _name[len("NB_INPLACE_"):]]
        BINARY_OPS.append("i" + base.rstrip("_"))
    else:
        BINARY_OPS.append(_NB_NAMES[_name])

COMPARE_OPS = {"<": "lt", "<=": "le", "==": "eq", "!=": "ne", ">": "gt", ">=": "ge"}


@opcode("BINARY_OP", signature="lhs, rhs -- res")
def binary_op(state, inst, lhs, rhs):
    return apply_binary(state, BINARY_OPS[inst.arg], lhs, rhs)


@opcode("COMPARE_OP", signature="left, right -- res")
def compare_op(state, inst, left, right):
    return apply_binary(state, COMPARE_OPS[inst.argval], left, right)


@opcode("UNARY_NEGATIVE", signature="value -- res")
def unary_negative(state, inst, value):
    return value.unary_op(state, "neg")


@opcode("UNARY_INVERT", signature="value -- res")
def unary_invert(state, inst, value):
    return value.unary_op(state, "invert")


@opcode("UNARY_NOT", signature="value -- res")
def unary_not(state, inst, value):
    return const(not value.truth(state))


@opcode("IS_OP", signature="left, right -- res")
def is_op(state, inst, left, right):
    same = identity_test(state, left, right).constant()
    return const(same != bool(inst.arg))


@opcode("CONTAINS_OP", signature="left, right -- res")
def contains_op(state, inst, left, right):
    found = right.contains(state, left)
    return const(found.truth(state) != bool(inst.arg))


@opcode("BINARY_SUBSCR", signature="container, sub -- res")
def binary_subscr(state, inst, container, sub):
    return container.getitem(state, sub)


@opcode("STORE_SUBSCR", signature="value, container, sub --")
def store_subscr(state, inst, value, container, sub):
    container.setitem(state, sub, value)


@opcode("DELETE_SUBSCR", signature="container, sub --")
def delete_subscr(state, inst, container, sub):
    container.delitem(state, sub)


@opcode("BINARY_SLICE", signature="container, start, stop -- res")
def binary_slice(state, inst, container, start, stop):
    return container.getitem(state, _slice(state, start, stop))


@opcode("STORE_SLICE", signature="value, container, start, stop --")
def store_slice(state, inst, value, container, start, stop):
    container.setitem(state, _slice(state, start, stop), value)


def _slice(state, start, stop, step=None):
    return build_slice_value(state, [start, stop] + ([step] if step is not None else []))
