"""MAKE_FUNCTION: functions and lambdas defined inside the captured code, with their closure cells."""
from __future__ import annotations

import builtins

from jitcore.capture.opcodes.registry import opcode
from jitcore.capture.values.opaque import NativeFunctionValue
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
    """A class statement: calling __build_class__ is a break, so the class is made natively, a new one each call
    as in Python (its body is user code run once per call), and the code after the statement is compiled."""
    return NativeFunctionValue(builtins.__build_class__, kind="class_statement")
