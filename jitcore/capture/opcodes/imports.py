"""Imports inside the captured code: a module that is already imported is just looked up (no side effects);
importing a new module runs module code, so it is a graph break."""
from __future__ import annotations

import sys

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.opcodes.registry import opcode
from jitcore.capture.values import wrap


@opcode("IMPORT_NAME", signature="level, fromlist -- module")
def import_name(state, inst, level, fromlist):
    name = inst.argval
    if level.constant() != 0:
        raise GraphBreak("side_effect", f"relative import of {name!r} inside a compiled function")
    # `import a.b` binds `a`; `from a.b import c` works on `a.b`
    top = name if fromlist.constant() else name.split(".", 1)[0]
    if name not in sys.modules or top not in sys.modules:
        raise GraphBreak("side_effect", f"importing {name!r} runs module code")
    return wrap(state, sys.modules[top], None)


@opcode("IMPORT_FROM", signature="module -- module, attr")
def import_from(state, inst, module):
    return module, module.getattr(state, inst.argval)
