"""The code that runs a captured frame: load the graph's inputs, call the compiled graph, rebuild the result.

`build_entry(...)` writes one Python function as source text, with the frame's parameter names, and execs it once.
Sources emit the expressions that reload inputs; values emit the expressions that rebuild outputs. Keeping it as
source keeps it readable (`entry.source`) and costs one Python frame per call.
"""
from __future__ import annotations

import keyword
import math
import operator
import sys

from jitcore.capture.values.base import Value

__all__ = ["EntryCodegen", "build_entry", "graph_is_pure", "safe_names"]

_LITERAL_TYPES = (int, bool, str, bytes, type(None))


def safe_names(params) -> list:
    """Identifiers for a frame's parameter names in generated source (co_varnames may hold any string, such as
    pytest's `@py_assert1`, and must not collide with the `___` names jitcore generates)."""
    out = []
    for index, name in enumerate(params):
        ok = name.isidentifier() and not keyword.iskeyword(name) and not name.startswith("___")
        out.append(name if ok else f"___arg{index}")
    return out


class EntryCodegen:
    """Names and constants of one generated entry function; the `codegen` that sources and values emit into."""

    def __init__(self, params: tuple, fn_globals: dict, builtins: dict):
        self.params = params
        #: parameter name -> the identifier generated code uses for it
        self.param_names = dict(zip(params, safe_names(params)))
        self.namespace: dict = {"___G": fn_globals, "___B": builtins}
        self._constants: dict = {}
        self._memo: dict = {}
        self._temp = 0
        self.outputs: dict = {}

    # -- names for sources ------------------------------------------------------------------------------------
    def local(self, name: str) -> str:
        return self.param_names[name]

    def globals_name(self) -> str:
        return "___G"

    def builtins_name(self) -> str:
        return "___B"

    def cells_name(self) -> str:
        return "___cells"

    def module_globals(self, module: str) -> str:
        return self.constant_object(vars(sys.modules[module]), f"mod_{module}")

    # -- constants --------------------------------------------------------------------------------------------
    def constant(self, value) -> str:
        if type(value) in _LITERAL_TYPES or (type(value) is float and math.isfinite(value)):
            return repr(value)
        if type(value) is tuple and all(type(v) in _LITERAL_TYPES for v in value):
            return repr(value)
        return self.constant_object(value, "k")

    def constant_object(self, value, hint: str) -> str:
        key = id(value)
        name = self._constants.get(key)
        if name is None:
            safe = "".join(ch if ch.isalnum() else "_" for ch in hint)
            name = f"___{safe}{len(self._constants)}"
            self._constants[key] = name
            self.namespace[name] = value
        return name

    # -- values -----------------------------------------------------------------------------------------------
    def load(self, value: Value) -> str:
        """An expression for value; a mutable container used twice is built once (identity is preserved).

        A value read from a source (and not replaced) is that same object: it is reloaded from the source.
        """
        key = id(value)
        if key in self._memo:
            return self._memo[key]
        if value.source is not None and not value.is_tensor():
            return value.source.emit(self)
        expr = value.reconstruct(self)
        if value.needs_identity and value.source is None:
            name = f"___t{self._temp}"
            self._temp += 1
            self._memo[key] = name
            return f"({name} := {expr})"
        return expr

    def tensor_output(self, tensor_value) -> str:
        if tensor_value.node.op == "placeholder":
            return tensor_value.source.emit(self)
        return f"___out[{self.outputs[id(tensor_value.node)]}]"

    def build_typed_tuple(self, tuple_type, items_expr: str) -> str:
        name = self.constant_object(tuple_type, "type")
        if hasattr(tuple_type, "_fields"):
            return f"{name}(*{items_expr})"
        return f"{name}({items_expr})"

    def build_typed_dict(self, dict_type, body: str) -> str:
        return f"{self.constant_object(dict_type, 'type')}({{{body}}})"


def build_entry(captured, compiled_graph, params: tuple, fn_globals: dict, builtins: dict, name: str,
                steps=None, pinned=None, on_fault=None):
    """The entry function `(*params, ___cells) -> result` for one cache entry.

    For a frame that stopped at a break point, `steps` (codegen/steps.py) turns the break into Python: rebuild
    the stack and live locals, run the breaking instruction natively where it can be written as Python, and
    return what the resume function computes.
    """
    cg = EntryCodegen(params, fn_globals, builtins)
    lines = []
    if compiled_graph is not None:
        cg.namespace["___graph"] = compiled_graph
        cg.outputs = {id(tv.node): i for i, tv in enumerate(captured.outputs)}
        # inputs the guards pin by identity (module parameters and buffers) are passed as the objects themselves
        pinned = pinned or {}
        inputs = ", ".join(cg.constant_object(pinned[source], "param") if source in pinned else source.emit(cg)
                           for source in captured.input_sources)
        lines.append(f"    ___out = ___graph({inputs})")
    replay = captured.ctx.side_effects.emit(cg) if captured.ctx.side_effects else []
    if captured.break_point is None:
        rebuild = cg.load(captured.result)
        if on_fault is not None and not replay and graph_is_pure(captured.gm):
            # rebuilding the result is jitcore's work: a fault there runs the frame natively instead, which is
            # safe because nothing observable has happened yet (the graph mutates no input)
            cg.namespace["___on_fault"] = on_fault
            lines.append("    try:")
            lines.append(f"        return {rebuild}")
            lines.append("    except Exception as ___e:")
            lines.append("        return ___on_fault(___e)")
        elif replay:
            # the result is computed before any write-back, which may change what its sources read
            lines.append(f"    ___result = {rebuild}")
            lines.extend(f"    {line}" for line in replay)
            lines.append("    return ___result")
        else:
            lines.append(f"    return {rebuild}")
    else:
        lines.extend("    " + line for line in steps.emit(cg, captured.break_point, replay))
    signature = ", ".join([*cg.param_names.values(), "___cells"])
    source = f"def ___entry_{_ident(name)}({signature}):\n" + "\n".join(lines) + "\n"
    exec(compile(source, f"<jitcore entry for {name}>", "exec"), cg.namespace)
    entry = cg.namespace[f"___entry_{_ident(name)}"]
    entry.source = source
    return entry


def graph_is_pure(gm) -> bool:
    """No node of the graph mutates a tensor in place (so running the frame again natively repeats nothing)."""
    if gm is None:
        return True
    for node in gm.graph.nodes:
        target = node.target
        name = target if isinstance(target, str) else getattr(target, "__name__", "")
        if target is operator.setitem or (name.endswith("_") and not name.endswith("__")):
            return False
    return True


def _ident(name: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in name)
