"""Capture one frame: interpret its code on live arguments and return what codegen needs.

`capture_frame(...)` -> `Captured` (the FX graph and its input sources, the returned value tree, the guards, and
timing), or raises GraphBreak / CaptureInternalError. The runtime decides what to do with either.
"""
from __future__ import annotations

import dataclasses
import time

import torch
import torch.fx

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.context import CaptureContext
from jitcore.capture.interpreter import FrameState
from jitcore.capture.values.tensor import TensorValue

__all__ = ["Captured", "capture_frame", "arg_names"]


def arg_names(code) -> tuple:
    """The names of a code object's parameters, in the order its frame stores them (co_varnames)."""
    n = code.co_argcount + code.co_kwonlyargcount
    n += bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)
    return code.co_varnames[:n]


@dataclasses.dataclass
class Captured:
    gm: torch.fx.GraphModule | None
    #: sources of the graph's inputs, in placeholder order
    input_sources: list
    #: the real example inputs' fake versions, for the backend
    example_inputs: list
    #: the value the frame returns (a tree of values)
    result: object
    #: tensor values the graph returns, in output order
    outputs: list
    guards: list
    op_count: int
    capture_seconds: float
    ctx: CaptureContext


def capture_frame(code, fn_globals, closure, args: dict, fn_name: str) -> Captured:
    start = time.perf_counter()
    ctx = CaptureContext(code, fn_globals, fn_name, closure)
    state = FrameState.root(ctx, args)
    try:
        result = state.run()
    except GraphBreak as brk:
        # the guards gathered so far decide when the same break would happen again (a native cache entry)
        brk.guards = list(ctx.guards)
        raise
    finally:
        ctx.run_cleanups()
    outputs = _graph_outputs([result, *ctx.side_effects.values()])
    graph = ctx.graph
    graph.prune_inputs(set())
    gm = None
    example_inputs = []
    input_sources = []
    if graph.node_count:
        graph.output([tv.node for tv in outputs])
        gm = torch.fx.GraphModule(torch.nn.Module(), graph.graph)
        by_node = {tv.node: (source, tv) for source, tv in graph.inputs.items()}
        for node in graph.graph.nodes:
            if node.op == "placeholder":
                source, tv = by_node[node]
                input_sources.append(source)
                example_inputs.append(tv.fake)
    return Captured(gm, input_sources, example_inputs, result, outputs if gm is not None else [], ctx.guards,
                    graph.node_count, time.perf_counter() - start, ctx)


def _graph_outputs(result) -> list:
    """Tensor values in the result that the graph computes (inputs returned as-is are reloaded from their source)."""
    found, seen = [], set()

    def visit(value):
        if isinstance(value, TensorValue):
            if value.node.op != "placeholder" and id(value.node) not in seen:
                seen.add(id(value.node))
                found.append(value)
            return
        for child in _children(value):
            visit(child)

    visit(result)
    return found


def _children(value):
    if isinstance(value, list):
        return value
    attrs = getattr(value, "attrs", None)
    if isinstance(attrs, dict):
        return list(attrs.values())
    items = getattr(value, "items", None)
    if isinstance(items, list):
        return items
    if isinstance(items, dict):
        return list(items.values())
    return []
