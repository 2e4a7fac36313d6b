"""Loads and stores of locals, constants, globals, attributes and cells."""
from __future__ import annotations

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.opcodes.registry import opcode
from jitcore.capture.values import NULL, const
from jitcore.capture.values.cells import CellBox
from jitcore.capture.values.dunders import attribute
from jitcore.capture.values.super_lookup import super_attribute


@opcode("LOAD_FAST", "LOAD_FAST_CHECK", signature="-- value")
def load_fast(state, inst):
    return state.load_local(inst.argval)


@opcode("LOAD_FAST_AND_CLEAR", signature="-- value")
def load_fast_and_clear(state, inst):
    """Inlined comprehensions save the outer variable (maybe unbound: NULL) and restore it after the loop."""
    value = state.locals.pop(inst.argval, None)
    if value is None:
        return NULL
    return state.load_local_value(inst.argval, value)


@opcode("STORE_FAST", signature="value --")
def store_fast(state, inst, value):
    if value is NULL:
        state.locals.pop(inst.argval, None)
    else:
        state.locals[inst.argval] = value


@opcode("DELETE_FAST", signature="--")
def delete_fast(state, inst):
    if state.locals.pop(inst.argval, None) is None:
        raise GraphBreak.raises(UnboundLocalError, f"'{inst.argval}' referenced before assignment")


@opcode("LOAD_CONST", signature="-- value")
def load_const(state, inst):
    return const(inst.argval)


@opcode("LOAD_GLOBAL", signature="-- null if (oparg & 1), value")
def load_global(state, inst):
    value = state.load_global(inst.argval)
    return (NULL, value) if inst.arg & 1 else value


@opcode("STORE_GLOBAL", signature="value --")
def store_global(state, inst, value):
    state.store_global(inst.argval, value)


@opcode("DELETE_GLOBAL", signature="--")
def delete_global(state, inst):
    state.delete_global(inst.argval)


@opcode("LOAD_ATTR", signature="owner -- method if (oparg & 1), attr")
def load_attr(state, inst, owner):
    """The method form (oparg & 1) pushes NULL and the bound attribute, which CALL treats like [meth, self]."""
    attr = attribute(state, owner, inst.argval)
    return (NULL, attr) if inst.arg & 1 else attr


@opcode("STORE_ATTR", signature="value, owner --")
def store_attr(state, inst, value, owner):
    owner.setattr(state, inst.argval, value)


@opcode("DELETE_ATTR", signature="owner --")
def delete_attr(state, inst, owner):
    owner.delattr(state, inst.argval)


@opcode("MAKE_CELL", signature="--")
def make_cell(state, inst):
    name = inst.argval
    initial = state.locals.pop(name, None)
    if initial is not None:
        initial = state.load_local_value(name, initial)
    state.cells[name] = CellBox(initial, name)


@opcode("COPY_FREE_VARS", signature="--")
def copy_free_vars(state, inst):
    """The frame's free cells are set up when the frame is made (FrameState.root / inline calls)."""


@opcode("LOAD_DEREF", signature="-- value")
def load_deref(state, inst):
    return state.cells[inst.argval].get(state)


@opcode("STORE_DEREF", signature="value --")
def store_deref(state, inst, value):
    state.cells[inst.argval].set(state, value)


@opcode("LOAD_CLOSURE", signature="-- cell")
def load_closure(state, inst):
    return state.cells[inst.argval]


@opcode("LOAD_SUPER_ATTR", signature="global_super, cls, self_value -- method if (oparg & 1), attr")
def load_super_attr(state, inst, global_super, cls, self_value):
    """`super().name` (zero-argument form): the attribute after `cls` in type(self)'s MRO, bound to self."""
    if global_super.constant() is not super:
        raise GraphBreak("unsupported_value", "`super` is shadowed")
    attr = super_attribute(state, cls, self_value, inst.argval)
    return (NULL, attr) if inst.arg & 1 else attr
