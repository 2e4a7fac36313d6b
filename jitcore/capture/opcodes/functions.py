"""MAKE_FUNCTION: functions and lambdas defined inside the captured code, with their closure cells; LOAD_BUILD_CLASS."""
from __future__ import annotations

from jitcore.capture.opcodes.registry import opcode
from jitcore.capture.values.class_statement import BuildClassValue
from jitcore.capture.values.function import NestedFunctionValue
from jitcore.capture.values.mapping import DictValue


@opcode("MAKE_FUNCTION", signature="defaults if (oparg & 0x01), kwdefaults if (oparg & 0x02), "
                                   "annotations if (oparg & 0x04), closure if (oparg & 0x08), codeobj -- func")
def make_function(state, inst, defaults, kwdefaults, annotations, closure, codeobj):
    code = codeobj.constant()
    return NestedFunctionValue(
        code, state.globals,
        defaults=defaults.iterate(state) if defaults is not None else [],
        kwdefaults=dict(kwdefaults.items) if kwdefaults is not None else {},
        closure=list(closure.items) if closure is not None else [],
        qualname=code.co_qualname,
        annotations=None if annotations is None else _annotations(state, annotations))


def _annotations(state, pairs):
    """MAKE_FUNCTION's annotations tuple (name, value, name, value ...) as the function's __annotations__."""
    flat = pairs.iterate(state)
    return DictValue({flat[i].constant(): flat[i + 1] for i in range(0, len(flat), 2)})


@opcode("LOAD_BUILD_CLASS", signature="-- build_class")
def load_build_class(state, inst):
    """A class statement: its body is traced and the class made per call by the entry (Note [Classes made
    inside], values/class_statement.py); one it cannot model is a break where the class is made natively."""
    return BuildClassValue()
