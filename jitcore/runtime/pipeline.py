"""The compile pipeline of one frame: capture -> backend -> entry.

`CompilePipeline.compile(args, cells)` makes the entry for one call's live arguments:
1. Capture (`capture.frame.capture_frame`), treating as dynamic what the recompile policy says. A frame that
   cannot be captured gets a native entry under the guards gathered so far; under `fullgraph=True` a graph break
   raises `GraphBreakError` here, before any backend call.
2. Backend. Backends tagged `backends.AOT_AUTOGRAD` get a graph with static-input marks (runtime/graph_meta.py). A
   failure on a marked graph is retried once with graphs that carry none; a failure on a graph with dynamic floats
   is retried once with floats static (policy). Any other failure runs the frame natively.
3. Entry. At a graph break, the break wiring (runtime/break_wiring.py) hands codegen the resume functions; codegen
   writes the entry function; entry assembly (runtime/entry.py) batches the module-state guards and compiles the
   guard function.
Every stage is contained (runtime/containment.py), the compiled graph's first run included.
"""
from __future__ import annotations

import itertools
import time
import types

import torch

from jitcore import backends
from jitcore.guards import TensorMatch
from jitcore import events
from jitcore.capture.breaks import GraphBreak
from jitcore.capture.frame import capture_frame
from jitcore.capture.interpreter import CaptureInternalError
from jitcore.capture.loop_breaks import runs_natively
from jitcore.capture.resume_points import resume_point
from jitcore.capture.sources import LocalSource
from jitcore.capture.shapes import Relation
from jitcore.codegen.transform import build_entry, graph_is_pure, graph_uses_rng
from jitcore.config import config
from jitcore.errors import GraphBreakError, JitError
from jitcore.runtime.break_wiring import break_steps
from jitcore.runtime.ddp_split import active_ddp, ddp_split
from jitcore.runtime.containment import CAPTURE, CODEGEN, GRAPH_MODULE, GUARD_CODEGEN, Containment, FirstRun
from jitcore.runtime.entry import ALWAYS, Entry, EntryAssembly
from jitcore.runtime.graph_meta import mark_inputs
from jitcore.runtime.loop_native import loop_native_run
from jitcore.runtime.prologue import FALLTHROUGH
from jitcore.runtime.stats import STATS

__all__ = ["CompilePipeline"]

#: a number per graph compiled, so that each is reported once (an id() may be reused after a graph dies)
_GRAPH_NUMBERS = itertools.count()

#: after this many calls whose graph raised, an entry runs natively (each such call ran the graph for nothing)
GRAPH_RAISE_LIMIT = 4

#: the name an entry function reads its compiled graph under (codegen.transform.build_entry)
_GRAPH_SLOT = "___graph"


class CompilePipeline:
    """Makes the entries of one frame compiled with one set of options."""

    def __init__(self, code, fn_globals, params: tuple, options, where: str, policy, retire):
        self.code = code
        self.globals = fn_globals
        self.params = params
        self.name = code.co_qualname
        self.options = options
        self.policy = policy
        #: retire(entry): the entry runs natively from now on (the cache swaps it under its lock)
        self.retire = retire
        #: the frame as messages name it
        self.where = where
        self.assembly = EntryAssembly(params, fn_globals)
        self.contain = Containment(code, self.where, options)
        #: the backend runs AOTAutograd, which reads the static-input marks
        tags = backends.tags_of(options.backend)
        self.reads_marks = backends.AOT_AUTOGRAD in tags
        #: the backend may run AOTAutograd: a callable we know nothing about may (Note [Input writes under
        #: AOTAutograd], capture/write_order.py)
        self.may_run_aot = self.reads_marks or not tags
        #: graphs go to the backend without static-input marks (set after a backend failed on a marked graph)
        self.plain_graphs = False

    def compile(self, args: tuple, cells) -> Entry:
        """A new entry for these live arguments: compiled, or native when the frame cannot be captured."""
        STATS.captures += 1
        try:
            dynamic = self.policy.dynamic()
            captured = capture_frame(self.code, self.globals, cells, dict(zip(self.params, args)), self.name,
                                     dynamic.numbers, dynamic.shapes, dynamic.structural,
                                     autograd_backend=self.may_run_aot)
        except GraphBreak as brk:
            return self._unresumable(brk)
        except CaptureInternalError as exc:
            return self._fault(CAPTURE, exc, args)
        except JitError:
            raise
        except Exception as exc:
            # the interpreter wraps its own faults: what is left failed while making the GraphModule from them
            return self._fault(GRAPH_MODULE, exc, args)
        if captured.break_point is not None and self.options.fullgraph:
            raise _fullgraph_error(captured.break_point.reason, self.code, self.name)
        if captured.break_point is not None and config.loop_breaks == "native" \
                and runs_natively(captured.break_point, self._container(args)):
            return self._loop_native(captured, args)
        timings = {"capture": captured.capture_seconds}
        compiled = None
        if captured.gm is not None:
            started = time.perf_counter()
            marked = False
            try:
                # a callable we know nothing about may run AOTAutograd or Inductor itself (a counting or logging
                # wrapper around compile_fx): it gets the marks Dynamo's graphs carry, or its inputs lose them
                marked = (self.may_run_aot and not self.plain_graphs
                          and mark_inputs(captured.gm, captured.input_sources))
                with events.compiling(self.code, self.options.backend_name):
                    if self.reads_marks and _enters_inference_mode(captured.gm):
                        # AOTAutograd returns plain tensors where eager makes inference tensors (is_inference(),
                        # in-place errors later): such a graph runs as captured
                        compiled = captured.gm.forward
                    elif _sizes_only(captured.gm):
                        # Note [Graphs of sizes only]
                        compiled = captured.gm.forward
                    else:
                        compiled = self._backend_compile(captured)
            except Exception as exc:
                if self._falls_back(marked):
                    return self.compile(args, cells)
                self.contain.backend_failed(exc)
                return self._native(captured.guards)
            if not callable(compiled):
                # a backend must hand back what to call instead of the graph; None or 5 is the backend's bug
                self.contain.backend_returned(compiled)
                return self._native(captured.guards)
            timings["backend"] = time.perf_counter() - started
            STATS.graphs += 1
        try:
            self._shape_guards(captured)
        except Exception as exc:
            return self._fault(GUARD_CODEGEN, exc)
        return self._entry(captured, compiled, args, cells, timings)

    def _backend_compile(self, captured):
        """The backend's compiled graph; under a running DDP forward, one compiled graph per gradient bucket
        (runtime/ddp_split.py) so that each bucket's all-reduce overlaps the rest of backward."""
        ddp = active_ddp()
        if ddp is None:
            return self.options.backend(captured.gm, list(captured.example_inputs))
        split = ddp_split(captured.gm, list(captured.example_inputs), captured.input_sources, ddp,
                          self.options.backend)
        if split.parts:
            STATS.graphs += len(split.parts) - 1
            message = (f"graph of {self.where} split for DDP into {len(split.parts)} graphs, one per gradient "
                       f"bucket: {split.reason}")
        else:
            message = f"graph of {self.where} not split for DDP: {split.reason}"
        events.emit("distributed", message, key=("ddp split", id(captured.gm)), code=self.code, gm=captured.gm,
                    parts=split.parts, buckets=split.buckets, reason=split.reason)
        return split.compiled

    def _shape_guards(self, captured) -> None:
        """The guards on symbolic sizes, taken from the ShapeEnv after the backend compiled (backends add facts
        of their own): each dynamic tensor's TensorMatch as its final fake has it, and the relation check."""
        shapes = captured.ctx.graph.finish_shapes()
        if shapes is None:
            return
        guards = captured.guards
        for i, (source, check) in enumerate(guards):
            if isinstance(check, TensorMatch) and source in shapes.tensor_matches:
                guards[i] = (source, shapes.tensor_matches[source])
        if shapes.relation is not None:
            guards.append((Relation(shapes.relation_sources), shapes.relation))
        self.policy.note_shapes(captured, shapes)

    # -- stages -----------------------------------------------------------------------------------------------
    def _falls_back(self, marked: bool) -> bool:
        """The backend failed: does a fallback change what the next capture hands it (then capture again)?"""
        if marked and self.reads_marks:
            # the static-input marks follow Dynamo's metadata, which another torch may read otherwise: try once
            # more with a graph that carries none before calling the backend broken (a user's callable is not
            # called twice for one capture: its failure is its own, as under torch.compile)
            self.plain_graphs = True
            return True
        return self.policy.refuse_dynamic_floats()

    def _entry(self, captured, compiled, args, cells, timings) -> Entry:
        started = time.perf_counter()
        made = []  # the entry, for the callbacks of its generated code
        try:
            state = self.assembly.module_state(captured.guards, args, cells, captured.ctx.structural_paths)
            steps = None
            if captured.break_point is not None:
                steps = break_steps(self.globals, captured, self.options)
            graph = self._first_run(captured, compiled, made)
            try:
                run = build_entry(captured, graph, self.params, self.globals, captured.ctx.builtins, self.name,
                                  steps, state.pinned, on_fault=lambda exc: self._rebuild_failed(made[0], exc),
                                  on_raise=lambda exc: self._graph_raised(made[0], exc))
            except GraphBreak as brk:
                # the stack or a local at the break cannot be rebuilt as Python objects: run the frame natively.
                # One report, of the break itself, at its place: why it could not resume is a detail of it.
                reason = captured.break_point.reason if captured.break_point is not None else brk
                if brk.location is None:
                    brk.location = reason.location
                self._report_break(reason, resumed=False, unresumable=brk if reason is not brk else None)
                return self._native(captured.guards, reason)
            if captured.break_point is not None:
                self._report_break(captured.break_point.reason, resumed=True)
            if isinstance(graph, FirstRun):
                graph.settle_in(run.__globals__, _GRAPH_SLOT)
        except JitError:
            raise
        except Exception as exc:
            return self._fault(CODEGEN, exc, args)
        timings["codegen"] = time.perf_counter() - started
        if captured.gm is not None:
            events.emit("graphs", f"graph of {self.where} with {captured.op_count} ops:\n{captured.gm.code}",
                        key=("graph", next(_GRAPH_NUMBERS)), code=self.code, gm=captured.gm,
                        op_count=captured.op_count, guards=captured.guards)
        try:
            guard_fn = self.assembly.guards(state.guards, args)
        except Exception as exc:
            return self._fault(GUARD_CODEGEN, exc)
        entry = self.assembly.compiled(captured, run, guard_fn, state.owners, timings)
        made.append(entry)
        return entry

    def _first_run(self, captured, compiled, made):
        """What the entry calls as its graph: the compiled graph, watched over its first run where that is safe."""
        if compiled is None or _runs_as_is(compiled, captured.gm) or not graph_is_pure(captured.gm):
            # a graph run as it is has no backend of its own to fail; a graph that mutates its inputs cannot run
            # twice to tell a backend's fault from the program's
            # (a GraphModule itself is called through its forward: its __call__ prints the graph's code to stderr
            # when the graph raises, which Python would not)
            return compiled.forward if compiled is not None and compiled is captured.gm else compiled
        return FirstRun(compiled, captured.gm, lambda exc: self._first_run_failed(made[0], exc),
                        graph_uses_rng(captured.gm))

    # -- outcomes ---------------------------------------------------------------------------------------------
    def _unresumable(self, brk: GraphBreak) -> Entry:
        if self.options.fullgraph:
            raise _fullgraph_error(brk, self.code, self.name)
        self._report_break(brk, resumed=False)
        # capture attaches the guards gathered up to the break: the same break would happen again under them
        return self._native(brk.guards, brk)

    def _container(self, args):
        """The module a torch.nn container's forward was called on (Note [Breaks inside loops]); None for any other
        frame, a resume function's included."""
        if args and isinstance(args[0], torch.nn.Module) and resume_point(self.code) is None:
            return args[0]
        return None

    def _loop_native(self, captured, args) -> Entry:
        """Note [Breaks inside loops] (capture/loop_breaks.py): the frame runs natively under the guards gathered
        up to the break (the same break would happen again under them), the functions it calls compiled."""
        reason = captured.break_point.reason
        try:
            run = loop_native_run(self.code, self.globals, self.options)
            guard_fn = self.assembly.guards(captured.guards)
        except Exception as exc:
            return self._fault(CODEGEN, exc, args)
        reason.in_loop = True
        self._report_break(reason, resumed=False)
        return self.assembly.native(guard_fn, reason, run)

    def _native(self, collected, reason: GraphBreak | None = None) -> Entry:
        try:
            guard_fn = self.assembly.guards(collected)
        except Exception as exc:
            return self._fault(GUARD_CODEGEN, exc)
        return self.assembly.native(guard_fn, reason)

    def _fault(self, stage: str, exc: Exception, args=None) -> Entry:
        self.contain.internal(stage, exc)
        # the call's variant (torch global state such as inference mode, its tensors' metadata) runs natively;
        # other variants are still captured. A catch-all only where guards cannot be built (what may have failed).
        if args is not None:
            try:
                return self.assembly.native(self.assembly.guards(_variant_guards(self.params, args)))
            except Exception:
                pass
        return self.assembly.native(ALWAYS)

    def _rebuild_failed(self, entry, exc):
        """An entry's result could not be rebuilt (a fault in jitcore): it runs natively from now on."""
        self.contain.rebuild_failed(exc)
        self.retire(entry)
        return FALLTHROUGH

    def _graph_raised(self, entry, exc):
        """The entry's graph raised (the program's error, or a backend's after its first run): the frame runs
        natively from its start (Note [A graph that raises], codegen/transform.py), which raises the error where
        Python does. An entry whose graph raised `GRAPH_RAISE_LIMIT` times runs natively from then on. jitcore's
        own errors (a first-run fault raised under strict mode) go on to the caller."""
        if isinstance(exc, JitError):
            raise exc
        entry.raises += 1
        if entry.raises == GRAPH_RAISE_LIMIT:
            events.emit("fallbacks", f"a graph of {self.where} raised {GRAPH_RAISE_LIMIT} times "
                        f"({type(exc).__name__}: {exc}); this entry runs natively from now on",
                        key=("graph raised", self.code), code=self.code, error=exc)
            self.retire(entry)
        return FALLTHROUGH

    def _first_run_failed(self, entry, exc) -> None:
        self.contain.first_run_failed(exc)
        self.retire(entry)

    def _report_break(self, brk: GraphBreak, resumed: bool, unresumable: GraphBreak | None = None) -> None:
        outcome = "compiled up to here, continuing in Python" if resumed else "the frame runs natively"
        if brk.in_loop:
            outcome = "the break is inside a loop: the frame runs natively, the functions it calls are compiled"
        if unresumable is not None:
            outcome += f" (it cannot resume there: {unresumable.info.explanation}"
            outcome += f", {unresumable.detail})" if unresumable.detail else ")"
        events.emit("breaks", f"{self.name}: {brk.describe()}; {outcome}", key=("break", brk.location, brk.kind),
                    code=self.code, brk=brk, resumed=resumed, unresumable=unresumable)


def _variant_guards(params, args) -> list:
    """The guards that tell one call's variant apart without capture: its tensor arguments' metadata (the
    global torch state is every guard function's root check)."""
    return [(LocalSource(name), TensorMatch(value)) for name, value in zip(params, args)
            if type(value) is torch.Tensor]


def _fullgraph_error(brk: GraphBreak, code, name: str) -> GraphBreakError:
    filename, lineno, line, func = brk.location or (code.co_filename, 0, "", name)
    return GraphBreakError(
        f"graph break in {func}() at {filename}:{lineno}: {brk.info.explanation}"
        + (f" ({brk.detail})" if brk.detail else "")
        + (f"\n    {line.strip()}" if line else "") + f"\n  hint: {brk.info.hint}",
        kind=brk.kind, filename=filename, lineno=lineno, source_line=line.strip() if line else "")


def _runs_as_is(compiled, gm) -> bool:
    """The backend returned the graph module itself, or its forward (the eager backend, a recording backend)."""
    return compiled is gm or (isinstance(compiled, types.MethodType) and compiled.__self__ is gm)


# Note [Graphs of sizes only]
# A graph whose every operation computes a number (int arithmetic on symbolic sizes: `x.shape[0] * 2` returned or
# handed to a resume function) has nothing for a backend to compile: it runs as captured, a few Python operations,
# and no backend is called (torch.compile hands no such graph to its backend either). So does a graph that also,
# or only, switches grad mode (`with torch.no_grad():` entered before a break with no tensor work before it): the
# switch runs as the Python call it records. Its guards are made as for any graph.
_NUMBERS = (torch.SymInt, torch.SymFloat, torch.SymBool, int, float, bool)


def _sizes_only(gm) -> bool:
    """Every call node of the graph computes a number or switches grad mode; none makes a tensor."""
    return all(node.op in ("placeholder", "output")
               or (node.op == "call_function" and (isinstance(node.meta.get("example_value"), _NUMBERS)
                                                   or node.target is torch._C._set_grad_enabled))
               for node in gm.graph.nodes)


def _enters_inference_mode(gm) -> bool:
    """The graph switches inference mode on (`with torch.inference_mode():` captured inside the function)."""
    enter = torch.autograd.grad_mode._enter_inference_mode
    return any(node.op == "call_function" and node.target is enter and node.args[:1] != (False,)
               for node in gm.graph.nodes)
