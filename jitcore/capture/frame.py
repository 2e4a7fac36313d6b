"""Capture one frame: interpret its code on live arguments and return what codegen needs.

`capture_frame(...)` -> `Captured`: the FX graph and its input sources, the guards, and either the value the frame
returns or, when capture had to stop, a `Continuation` (capture/continuation.py: the root frame's stack and live
locals just before the instruction that broke, and where control goes from there). A break is found by a first
attempt; a second attempt replays capture up to that instruction and stops there, so nothing the breaking
instruction (or a call it inlined) did leaks into the prefix; a break an instruction raised before doing anything
stops the first attempt itself (Note [A break at an untouched instruction]). Raises GraphBreak when the frame cannot be resumed at
all, CaptureInternalError on a fault in jitcore.
"""
from __future__ import annotations

import dataclasses
import time

import torch
import torch.fx

from jitcore.guards import MemoryDisjointMatch, StorageOverlapMatch
from jitcore.guards.torch_checks import storage_pattern
from jitcore.capture.breaks import GraphBreak
from jitcore.capture.graph import quiet_fake_failures
from jitcore.capture.context import CaptureContext
from jitcore.capture.continuation import Continuation, continuation_at
from jitcore.capture.interpreter import FrameState, StopCapture
from jitcore.capture.shapes import DYNAMIC_DIMS
from jitcore.capture.sources import ArrayTensorSource, ModuleDictSource
from jitcore.capture.values.base import Value
from jitcore.capture.values.context_vars import escaping_token
from jitcore.capture.values.function_modes import relocate
from jitcore.capture.values.symint import SymIntValue
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
    #: the value the frame returns (None when it stopped at a break point)
    result: object
    #: tensor values the graph returns, in output order
    outputs: list
    guards: list
    op_count: int
    capture_seconds: float
    ctx: CaptureContext
    #: where the frame continues when capture stopped at a graph break
    break_point: Continuation | None = None


def capture_frame(code, fn_globals, closure, args: dict, fn_name: str, dynamic_paths=frozenset(),
                  shape_choice=None, structural_paths=frozenset(), autograd_backend=False) -> Captured:
    """`dynamic_paths`: guard paths of numbers captured as graph inputs; `shape_choice` (capture/shapes.py): which
    tensor dims get symbolic sizes; `structural_paths`: guard paths of modules and functions captured by type and
    structure instead of identity (Note [Instances shared by structure]); `autograd_backend`: the graph goes to
    AOTAutograd (Note [Input writes under AOTAutograd] in capture/write_order.py)."""
    start = time.perf_counter()
    attempt = (code, fn_globals, closure, args, fn_name, start, (dynamic_paths, structural_paths), shape_choice,
               autograd_backend)
    with quiet_fake_failures():
        return _capture(attempt, code)


# Note [Torch function modes]
# Under a TorchFunctionMode every torch call (functions, Tensor methods, operators, factories) goes through the
# mode's __torch_function__, which may do anything (TransformGetItemToIndex turns indexing into another op, a
# DeviceContext moves factories to its device). Capture does not dispatch through modes, so it never traces while
# one is active: a frame that starts under a mode (a call inside the user's `with mode:`, or the resume function
# of a `with mode:` block entered at a break) runs natively, and GlobalStateMatch guards the depth of the mode
# stack, so an entry made outside a mode is never run inside one, nor the reverse.
# A mode entered inside the capture is traced instead (Note [Torch function modes traced],
# capture/values/function_modes.py); a break under it moves to where it was entered, so from there the block
# runs natively under the real mode, and the code after the block is captured again once the mode is popped.


# Note [A break at an untouched instruction]
# A capture that breaks is run twice: the first attempt finds where, the second replays up to that instruction and
# stops before it, so nothing the breaking instruction did (nodes, guards, side effects, a call it inlined,
# a container it changed) leaks into the prefix. Most breaks are raised by an instruction that did nothing first:
# a call that is a break as such (print, logging, an opaque object's method, .item(), an optimizer's step) or a
# Python branch on a tensor. There the first attempt's state at the break *is* the state the replay would reach,
# and the first attempt stops there itself (a function with a break every few lines then interprets each part
# once, not twice). It does so only when all of these hold:
# - the operation raised the break as its first step and says so (`GraphBreak.untouched`: the value, or the real
#   callable, whose operation it was; set at those raise sites only);
# - that is the operand the root frame's instruction hands over directly (`interpreter._DIRECT_OPERAND`: CALL's
#   callee, a conditional jump's condition), so no other operation ran inside the instruction; the handler's
#   inputs are back on the stack (FrameState._step) and the kw_names register is put back;
# - the instruction is the root frame's own, not inside an except handler (the break point is that instruction),
#   and the capture's counts of graph nodes, guards, side effects, inlined frames and state switches are as they
#   were before it (`CaptureContext.progress`).
# A frame with cell variables stops so too: its cells at the break are its state as its locals are (Note [Resume
# functions share the frame's cells], codegen/resume.py). Anything else replays as before.


# Note [is_compiling() when the traced code raises]
# Traced code sees torch.compiler.is_compiling() (and transformers' is_torchdynamo_compiling over it) answer True,
# as under torch.compile, so libraries take the paths they wrote for compilers. Some of those paths are only
# correct while the whole function is compiled: LongT5 and SwitchTransformers skip building the default attention
# mask when compiling and then index it. Under torch.compile such code raises inside the trace and Dynamo runs the
# frame eagerly, where the answer is False. Here a capture that asked and then ends at an exception (a
# user_exception break, resumed or not) is captured again with the answer False: the code then runs as eager
# Python runs it, so whatever it still raises is the program's own error, and where it no longer raises the
# frame is captured whole. The second capture is kept either way; one that never asked is kept as it is.


# Note [is_compiling() in a capture with no graph]
# A frame captured on its own whose capture holds no tensor op answers is_compiling() as eager Python does (False).
# torch.compile gives such a frame up and runs it natively, so code around it sees False: transformers'
# `is_torchdynamo_compiling()`, called from a frame run natively (a break inside its loop, Note [Breaks inside
# loops]), is compiled as a frame of its own; answering True there made SwitchTransformers' encoder skip building
# its default attention mask in native code and then index it.


def _capture(attempt, code) -> Captured:
    try:
        captured = _find_and_replay(attempt, True)
    except GraphBreak as brk:
        if brk.kind != "user_exception" or not brk.asked_compiling:
            raise
        return _find_and_replay(attempt, False)
    if captured.ctx.asked_compiling and captured.op_count == 0:
        # no tensor work: torch.compile gives such a frame up, and it runs natively, where the answer is False
        # (Note [is_compiling() in a capture with no graph])
        return _find_and_replay(attempt, False)
    reason = captured.break_point.reason if captured.break_point is not None else None
    if reason is None or reason.kind != "user_exception" or not (reason.asked_compiling
                                                                  or captured.ctx.asked_compiling):
        return captured
    return _find_and_replay(attempt, False)


def _find_and_replay(attempt, compiling: bool) -> Captured:
    """The first attempt finds the break; a second replays up to it (Note [A break at an untouched instruction]).
    A replay may ask to stop earlier still (`GraphBreak.earlier`: a ContextVar token needed after the graph),
    always at an instruction before the last stop, so the attempts end."""
    try:
        return _attempt(*attempt, compiling, None)
    except GraphBreak as brk:
        found = brk
    if found.root_offset is None:
        raise found
    stop = found
    while True:
        try:
            return _attempt(*attempt, compiling, (stop.root_offset, stop.root_visit, stop))
        except GraphBreak as again:
            if not again.earlier or (again.root_offset, again.root_visit) == (stop.root_offset, stop.root_visit):
                raise found from None
            stop = again


def _attempt(code, fn_globals, closure, args, fn_name, start, paths, shape_choice, autograd_backend,
             compiling, stop) -> Captured:
    if torch._C._len_torch_function_stack():
        # before anything of capture's own runs: the mode would see its torch calls (grad mode put back)
        raise GraphBreak("torch_function_mode", f"{torch.overrides._get_current_function_mode().__class__.__name__} "
                         "is active where the call starts")
    ctx = CaptureContext(code, fn_globals, fn_name, closure)
    ctx.compiling = compiling
    ctx.dynamic_paths, ctx.structural_paths = paths
    ctx.graph.shape_choice = shape_choice
    ctx.graph.autograd_backend = autograd_backend
    if stop is not None:
        ctx.stop_at = stop[:2]
    else:
        ctx.stop_untouched = True
    break_point = None
    result = None
    try:
        # inside the try: a resume stub's frame wraps its stack values as it starts (FrameState.root)
        state = FrameState.root(ctx, args)
        result = state.run()
        if ctx.function_modes:
            raise relocate(ctx, GraphBreak("torch_function_mode", "returning with a TorchFunctionMode entered"))
    except StopCapture as stopped:
        if ctx.function_modes:
            # a replay asked to stop inside a traced mode (an earlier break's point): stop where it was entered
            inside = relocate(ctx, GraphBreak("torch_function_mode", "a break point inside a TorchFunctionMode"))
            inside.earlier = True
            inside.guards = list(ctx.guards)
            raise inside from None
        frame = stopped.state
        frame.check_suspended_generators()
        break_point = continuation_at(frame, stopped.inst, stop[2] if stop is not None else stopped.reason)
    except GraphBreak as brk:
        # the guards gathered so far decide when the same break would happen again (a native cache entry)
        brk.guards = list(ctx.guards)
        brk.asked_compiling = ctx.asked_compiling
        raise
    finally:
        ctx.run_cleanups()
    if break_point is None:
        roots = [result]
    else:
        # an argument never read is still its source (not a value): it reaches no graph output
        roots = [*break_point.stack, *[v for v in break_point.locals.values() if isinstance(v, Value)],
                 *break_point.cells.values()]
    token = escaping_token([*roots, *ctx.side_effects.values()])
    if token is not None:
        earlier = GraphBreak("context_var", f"ContextVar {token.var.obj.name!r}")
        earlier.root_offset, earlier.root_visit = token.origin
        earlier.earlier = True
        earlier.location = token.location
        raise earlier
    outputs = _graph_outputs([*roots, *ctx.side_effects.values()])
    graph = ctx.graph
    graph.prune_inputs(set())
    gm = None
    example_inputs, input_sources = [], []
    if graph.node_count:
        graph.output([tv.node for tv in outputs])
        gm = torch.fx.GraphModule(graph.root, graph.graph)
        if graph.dynamic_dims:
            gm.meta[DYNAMIC_DIMS] = graph.describe_dynamic_dims()
        by_node = {value.node: (source, value) for source, value in graph.inputs.items()}
        for node in graph.graph.nodes:
            if node.op == "placeholder":
                source, tv = by_node[node]
                input_sources.append(source)
                example_inputs.append(tv.fake)
        _guard_storage_overlaps(ctx, graph, by_node)
    return Captured(gm, input_sources, example_inputs, result, outputs if gm is not None else [], ctx.guards,
                    graph.node_count, time.perf_counter() - start, ctx, break_point)


def _guard_storage_overlaps(ctx, graph, by_node) -> None:
    """A graph that writes a tensor input in place relies on which of its tensor inputs share storage, and where
    (StorageOverlapMatch); the parameters and buffers of modules are pinned by identity and left out."""
    # written_inputs holds every placeholder a write was computed from, dynamic numbers included: only tensors
    # have storage
    written = [node for node in graph.graph.nodes
               if node in graph.written_inputs and node in by_node and "storage" in node.meta]
    if not written:
        return
    tensor_sources = [source for node, (source, _) in by_node.items() if "memory" in node.meta]
    for source in tensor_sources:
        if isinstance(source, ArrayTensorSource):
            others = [s for s in tensor_sources if s != source and not isinstance(s, ModuleDictSource)]
            if others:
                ctx.guard(source, MemoryDisjointMatch([s.path for s in others], [s.user_name for s in others]))
    tensors = [(source, node.meta["storage"]) for node, (source, _) in by_node.items()
               if "storage" in node.meta and not isinstance(source, ModuleDictSource)]
    own_source = by_node[written[-1]][0]
    if len(tensors) < 2 or isinstance(own_source, ModuleDictSource):
        return
    others = [(s, place) for s, place in tensors if s != own_source]
    own = next(place for s, place in tensors if s == own_source)
    written_sources = {by_node[node][0] for node in written}
    indices = {i for i, (s, _) in enumerate(others) if s in written_sources} | {len(others)}
    pattern = storage_pattern([*(place for _, place in others), own], indices)
    ctx.guard(own_source, StorageOverlapMatch([s.path for s, _ in others], [s.user_name for s, _ in others],
                                              pattern, indices))


def _graph_outputs(roots) -> list:
    """Tensor values reachable from roots that the graph computes (inputs are reloaded from their source)."""
    found, seen = [], set()
    visited = set()

    def visit(value):
        if id(value) in visited:
            return
        visited.add(id(value))
        if isinstance(value, TensorValue) or (isinstance(value, SymIntValue) and value.is_symbolic_number()):
            if value.node.op != "placeholder" and id(value.node) not in seen:
                seen.add(id(value.node))
                found.append(value)
            return
        for child in _children(value):
            visit(child)

    for root in roots:
        visit(root)
    return found


def _children(value):
    return value if isinstance(value, list) else value.children()
