"""Name opcodes of a class body traced inside the captured code (values/class_statement.py): LOAD_NAME,
STORE_NAME, DELETE_NAME, LOAD_LOCALS, LOAD_FROM_DICT_OR_DEREF, SETUP_ANNOTATIONS read and write the body frame's
`namespace`, a dict of values that becomes the class dict. Anywhere else (module-level code) they break as
before."""
from __future__ import annotations

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.opcodes.registry import opcode
from jitcore.capture.values.class_statement import ClassNamespaceValue
from jitcore.capture.values.mapping import DictValue


def _namespace(state, inst, kind):
    if state.namespace is None:
        raise GraphBreak(kind, f"opcode {inst.opname} outside a class body")
    return state.namespace


@opcode("STORE_NAME", signature="value --")
def store_name(state, inst, value):
    _namespace(state, inst, "side_effect")[inst.argval] = value


@opcode("DELETE_NAME", signature="--")
def delete_name(state, inst):
    namespace = _namespace(state, inst, "side_effect")
    if namespace.pop(inst.argval, None) is None:
        raise GraphBreak.raises(NameError, f"name '{inst.argval}' is not defined")


@opcode("LOAD_NAME", signature="-- value")
def load_name(state, inst):
    found = _namespace(state, inst, "unsupported_opcode").get(inst.argval)
    return found if found is not None else state.load_global(inst.argval)


@opcode("LOAD_LOCALS", signature="-- locals")
def load_locals(state, inst):
    return ClassNamespaceValue(_namespace(state, inst, "unsupported_opcode"))


@opcode("LOAD_FROM_DICT_OR_DEREF", signature="mapping -- value")
def load_from_dict_or_deref(state, inst, mapping):
    """A class body reading a variable of the enclosing function: the namespace first, then the cell."""
    if not isinstance(mapping, ClassNamespaceValue):
        raise GraphBreak("unsupported_opcode", f"opcode {inst.opname} on a mapping that is not a class body's")
    found = mapping.namespace.get(inst.argval)
    return found if found is not None else state.cells[inst.argval].get(state)


@opcode("SETUP_ANNOTATIONS", signature="--")
def setup_annotations(state, inst):
    """A class body with annotated names (`a: int`) gets an `__annotations__` dict, filled by STORE_SUBSCR."""
    namespace = _namespace(state, inst, "side_effect")
    if "__annotations__" not in namespace:
        namespace["__annotations__"] = DictValue({})
