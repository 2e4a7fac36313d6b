"""What a captured graph tells the torch compiler stack about its inputs, in the form Dynamo's graphs use.

AOTAutograd (torch._functorch) reads two facts from a graph Dynamo made: that it came from a front end
(`gm.meta["dynamo_compile_id"]`), and, per placeholder, its source and whether it is a *static input* (a module
parameter or buffer whose storage stays put between calls). Inductor skips the per-call alignment check of
static inputs (one `data_ptr()` test per input per call: ~200 for a torchvision model), and cudagraphs neither
copies them into graph-owned buffers nor re-records for them. Without these marks every input is treated as a
fresh activation. The marks are plain metadata: backends that do not look for them are unaffected.
"""
from __future__ import annotations

from jitcore.capture.sources import ModuleDictSource

__all__ = ["mark_inputs"]


class InputSource:
    """A placeholder's origin as torch's compiler logs want it: hashable (by identity) with a `name`."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return self.name


def is_module_state(source) -> bool:
    return isinstance(source, ModuleDictSource) and source.dict_name in ("_parameters", "_buffers")


def mark_inputs(gm, input_sources) -> bool:
    """Mark gm's placeholders with their sources, and parameters/buffers read from modules as static.
    True when it marked the graph."""
    if "dynamo_compile_id" in gm.meta:
        return False
    placeholders = [node for node in gm.graph.nodes if node.op == "placeholder"]
    if len(placeholders) != len(input_sources):
        return False
    for node, source in zip(placeholders, input_sources):
        node._dynamo_source = InputSource(source.user_name)
        if is_module_state(source):
            node.meta.setdefault("tensor_dict", {})["_dynamo_static_input_type"] = "unguarded"
    gm._param_name_to_source = {}
    gm.meta["dynamo_compile_id"] = None
    return True
