"""The FX graph under construction, with fake-tensor propagation.

`GraphBuilder` owns the torch.fx.Graph, the FakeTensorMode, the graph inputs (one placeholder per tensor source) and
the node creation path: every tensor operation runs once on fake tensors to learn its result's metadata, and the
result is wrapped back into values. Nothing here runs real compute or mutates real objects. `nested_graph` sends
operations to the body of a higher-order call for a while (Note [vmap as a nested graph], values/vmap.py).
"""
from __future__ import annotations

import contextlib
import enum
import logging
import operator
import threading

import sympy
import torch
import torch.fx
from torch._subclasses.fake_tensor import FakeTensorMode, DataDependentOutputException, DynamicOutputShapeException
from torch.fx.experimental.symbolic_shapes import (GuardOnDataDependentSymNode, ShapeEnv, compute_unbacked_bindings,
                                                   free_symbols, free_unbacked_symbols)
from torch._dispatch.python import enable_python_dispatcher

from jitcore.guards.arrays import memory_range, overlaps
from jitcore.capture.breaks import GraphBreak
from jitcore.capture import shapes
from jitcore.capture.sources import ArrayTensorSource, TensorSizeSource

__all__ = ["GraphBuilder", "SIZE_SOURCE", "fx_args", "fake_args", "is_symbolic", "quiet_fake_failures"]

#: meta key of a SymInt placeholder: its TensorSizeSource (a size the graph returns is reloaded from it)
SIZE_SOURCE = "jitcore_size_source"

_DATA_DEPENDENT = (DataDependentOutputException, DynamicOutputShapeException)


# Note [A tensor used as a number]
# Eager torch reads a one-element integer tensor inside a size or padding list as its number (`__index__`, so
# `F.interpolate(x, size=(h, w))` and `F.pad(x, (0, width - w))` with 0-d tensors h, w run). A fake tensor has no
# number to give, so the op fails on fakes: that is the op needing tensor data, as `.item()` does, and torch.compile
# breaks there too. When an op fails on fakes and a list or tuple argument holds a 0-d integer tensor, the break is
# reported as `data_dependent` (the call runs in Python at the break either way); a 0-d tensor in a list is
# ordinary elsewhere (`torch.stack([a, b])`), so only a failure is classified so, never a call in advance.


# Note [A data-dependent size read in Python]
# An op whose result's size depends on tensor data (nonzero, x[mask], masked_select, unique) is captured with an
# unbacked symbol as that size, so a graph that only computes with it needs no break (torch.compile, whose
# capture_dynamic_output_shape_ops is off, breaks at the op itself). When Python then needs the size (read as an
# int, or a decision the ShapeEnv cannot make) the break moves back to the root-frame instruction whose op made
# the symbol, as torch.compile's would be: that instruction runs in Python, and the resume function receives the
# result as an ordinary tensor whose size is backed (automatic dynamic after one change). Breaking at the read
# instead would hand the resume function the size itself (a torch.Size or an int on the stack) as a number of
# the prefix graph's making, and the prefix would end with an op whose output size no guard can see.


def _tensor_as_number(args) -> bool:
    """Whether a list or tuple among `args` (nested) holds a 0-d integer tensor."""
    stack = [a for a in args if isinstance(a, (list, tuple))]
    while stack:
        for item in stack.pop():
            if isinstance(item, (list, tuple)):
                stack.append(item)
            elif isinstance(item, torch.Tensor) and item.dim() == 0 and not item.is_floating_point() \
                    and not item.is_complex():
                return True
    return False


def _map(values, fn):
    """Apply fn to Values inside the (nested) containers of plain Python args."""
    if isinstance(values, (list, tuple)):
        return type(values)(_map(v, fn) for v in values)
    if isinstance(values, dict):
        return {k: _map(v, fn) for k, v in values.items()}
    return fn(values)


def fx_args(state, values):
    return _map(values, lambda v: v.as_fx_arg(state))


def fake_args(state, values):
    return _map(values, lambda v: v.as_fake(state))


class GraphBuilder:
    """One graph being captured. Inputs are deduplicated by source; outputs are chosen at the end."""

    def __init__(self, shape_choice=None):
        #: where operations go: the frame's graph, or the body of a higher-order call being traced (`nested_graph`)
        self.graph = torch.fx.Graph()
        #: the frame's graph, which holds every input and constant
        self.frame_graph = self.graph
        # one ShapeEnv per capture: symbolic input dims (shape_choice), dynamic ints, data-dependent sizes.
        # duck shaping applies to DUCK dims only (dynamic=True: Note [Duck shapes under dynamic=True], shapes.py);
        # a DYNAMIC dim (automatic dynamic, a mark) shares no symbol unless tracing relates it to another
        self.shape_env = ShapeEnv(duck_shape=True, specialize_zero_one=True)
        self.fake_mode = FakeTensorMode(shape_env=self.shape_env, static_shapes=True)
        self.shape_choice = shape_choice
        #: the inputs the ShapeEnv knows (shapes.ShapeInput), in the order they were read
        self.shape_inputs: list = []
        #: the storages of the inputs, alive while capturing (see add_input)
        self._held_storages: list = []
        #: whether a NumPy array is an input (read through a storage of its own: add_input checks overlaps)
        self.has_array_inputs = False
        #: source -> TensorValue of the placeholder (insertion order = graph input order)
        self.inputs: dict = {}
        #: symbol of a dynamic input dim -> its SymInt placeholder (Note [SymInt inputs])
        self.symbol_inputs: dict = {}
        #: (source, dim, SymInt, why) of every dynamic input dim, for reports (`describe_dynamic_dims`)
        self.dynamic_dims: list = []
        self.node_count = 0
        #: (code, line) of the instruction being traced, stored on each node for reports as "file:line in name"
        #: (formatted per node, not per line traced); None before the first line
        self.current_location: tuple | None = None
        #: unbacked symbol -> ((offset, visit) of the root-frame instruction whose op made it, the user's location
        #: there): Note [A data-dependent size read in Python]
        self.unbacked_origins: dict = {}
        #: the graph module's root: holds the constants FX cannot write as code (`_embed`), read by get_attr nodes
        self.root = torch.nn.Module()
        #: id(constant) -> its get_attr node (the root keeps the constant alive)
        self._constants: dict = {}
        #: placeholders an in-place op may have written, and what made them impossible to put back by copying
        #: (None while they can be): Note [Raising after a write that cannot be undone] in write_order.py
        self.written_inputs: set = set()
        self.unrestorable_write: str | None = None
        #: the graph goes to AOTAutograd (Note [Input writes under AOTAutograd], write_order.py)
        self.autograd_backend = False
        #: in-place writes traced so far (write_order.note_writes), so a nested body can tell it wrote nothing
        self.write_count = 0

    # -- inputs -----------------------------------------------------------------------------------------------
    def to_fake(self, tensor: torch.Tensor):
        return self.fake_mode.from_tensor(tensor, static_shapes=True)

    def add_input(self, source, real: torch.Tensor):
        """A placeholder for a tensor read from `source`; returns (node, fake). Its dims are symbolic where the
        shape policy says so (shapes.dims_for)."""
        dims = shapes.dims_for(self.shape_choice, source, real)
        try:
            if dims is None:
                fake = self.to_fake(real)
            else:
                token = self.shape_token()
                context = shapes.symbolic_context(real, dims)
                fake = self.fake_mode.from_tensor(real, static_shapes=False, source=token, symbolic_context=context)
                self.shape_inputs.append(shapes.ShapeInput(source, token, fake, context, real))
                self._bind_symbols(source, fake)
                self.dynamic_dims += [(source, dim, fake.size(dim), shapes.why_dynamic(self.shape_choice, source,
                                                                                        real, dim))
                                      for dim, kind in enumerate(dims) if shapes.is_dynamic_kind(kind)]
        except AssertionError:
            # a view read for the first time after the graph wrote its base through another view (`vb.copy_(t)`
            # gives the base autograd history): the fake base is already past that write, the real view is not.
            # Break before the read: the next graph reads the view before any write.
            raise GraphBreak("unsupported_value", f"{source.user_name}, a view of a tensor this graph has already "
                             f"written in place") from None
        memory = memory_range(real)
        storage = real.untyped_storage()
        # held for the capture, so that no other storage made meanwhile takes its address (`_cdata`)
        self._held_storages.append(storage)
        storage = storage._cdata
        self.has_array_inputs = self.has_array_inputs or isinstance(source, ArrayTensorSource)
        for other in self.inputs.values() if self.has_array_inputs else ():
            known = other.node.meta.get("memory")
            if known is not None and overlaps(memory, known[0]) and known[1] != storage:
                # one memory through two storages (a NumPy array and a tensor over its data): fake tensors, and
                # the backends that functionalize, would take them for disjoint inputs
                raise GraphBreak("unsupported_value", f"{source.user_name} shares memory with "
                                 f"{other.source.user_name} through another storage (a NumPy array over its data)")
        node = self._placeholder(source, fake)
        # where its data lives, for the storage-overlap guard of a graph that writes inputs (no reference kept)
        node.meta["storage"] = (real.untyped_storage().data_ptr(), real.storage_offset())
        node.meta["memory"] = (memory, storage)
        return node, fake

    def _bind_symbols(self, source, fake) -> None:
        """A SymInt placeholder for each new symbol among `fake`'s sizes, before the tensor's own placeholder."""
        for dim, size in enumerate(fake.size()):
            if isinstance(size, torch.SymInt) and isinstance(size.node.expr, sympy.Symbol) \
                    and size.node.expr not in self.symbol_inputs:
                size_source = TensorSizeSource(source, dim)
                node = self._placeholder(size_source, size, name=str(size.node.expr))
                node.type = torch.SymInt
                node.meta[SIZE_SOURCE] = size_source
                self.symbol_inputs[size.node.expr] = node
                self.inputs[size_source] = SymbolInput(node, size)

    def symbol_node(self, size):
        """The placeholder that carries `size` when it is one input dim's symbol (after what tracing learnt:
        a symbol replaced by an equal one reads that one's input), else None."""
        expr = size.node.expr
        return self.symbol_inputs.get(expr) if isinstance(expr, sympy.Symbol) else None

    def describe_dynamic_dims(self) -> list[str]:
        """`x.shape[0] = s50: jit.mark_dynamic` for each dynamic dim of an input the graph takes, in the user's
        names; a dim tracing made a constant says so."""
        lines = []
        first = {}  # symbol -> the first dim that has it, in the user's names
        for source, dim, size, why in self.dynamic_dims:
            if source not in self.inputs and TensorSizeSource(source, dim) not in self.inputs:
                continue
            if not isinstance(size, torch.SymInt):
                lines.append(f"{source.user_name}.shape[{dim}] = {size}: asked dynamic ({why}), but sizes 0 and 1 "
                             f"are always specialised (broadcasting)")
                continue
            expr = size.node.expr
            if isinstance(expr, sympy.Integer):
                lines.append(f"{source.user_name}.shape[{dim}] = {int(expr)}: asked dynamic ({why}), made a "
                             f"constant while tracing")
            elif expr in first:
                # duck shaping (Note [Duck shapes under dynamic=True], shapes.py) or a relation tracing learnt
                lines.append(f"{source.user_name}.shape[{dim}] = {expr}: {why}, the same symbol as {first[expr]} "
                             f"(equal sizes; the entry is guarded on their equality)")
            else:
                first[expr] = f"{source.user_name}.shape[{dim}]"
                lines.append(f"{source.user_name}.shape[{dim}] = {expr}: {why}")
        return lines

    def shape_token(self):
        """The name the ShapeEnv gives the next input it learns about."""
        return shapes.token(len(self.shape_inputs))

    def add_scalar_input(self, source, sym, token):
        """A placeholder for a Python int or float passed as a graph input (a dynamic number)."""
        self.shape_inputs.append(shapes.ShapeInput(source, token, sym))
        return self._placeholder(source, sym)

    def finish_shapes(self):
        """The guards on symbolic sizes (shapes.finish_shapes); None when the capture had none."""
        return shapes.finish_shapes(self.shape_env, self.shape_inputs)

    def _placeholder(self, source, example, name=None):
        """A placeholder after the existing ones (graph inputs keep the order they were read in)."""
        name = name or _placeholder_name(source.user_name, len(self.inputs))
        first = self._first_non_placeholder()
        if first is None:
            node = self.frame_graph.placeholder(name)
        else:
            with self.frame_graph.inserting_before(first):
                node = self.frame_graph.placeholder(name)
        node.meta["example_value"] = example
        node.meta["val"] = example
        node.meta["source"] = source.user_name
        return node

    def _first_non_placeholder(self):
        for node in self.frame_graph.nodes:
            if node.op != "placeholder":
                return node
        return None

    @contextlib.contextmanager
    def nested_graph(self):
        """Operations go to a new graph until the block ends (the body a higher-order call such as torch.vmap
        runs); inputs and constants still go to the frame's graph, so the body reaches them as nodes of another
        graph, which its owner lifts into inputs of its own. Nodes made in the body do not count as the frame's."""
        outer, count = self.graph, self.node_count
        self.graph = torch.fx.Graph()
        try:
            yield self.graph
        finally:
            self.graph, self.node_count = outer, count

    # -- data-dependent sizes -----------------------------------------------------------------------------------
    def note_unbacked(self, node, origin, location) -> None:
        """The op of `node` (at the root-frame instruction `origin`) made new data-dependent sizes."""
        for symbol in (node.meta.get("unbacked_bindings") or {}):
            self.unbacked_origins.setdefault(symbol, (origin, location))

    def data_dependent_break(self, symbols, detail: str) -> GraphBreak:
        """The break for Python needing one of these data-dependent sizes: at the instruction whose op made the
        last of them, where it is known (Note [A data-dependent size read in Python])."""
        brk = GraphBreak("data_dependent", detail)
        made = [origin for symbol, origin in self.unbacked_origins.items() if symbol in symbols]
        if made:
            (brk.root_offset, brk.root_visit), brk.location = made[-1]
            brk.detail = f"{detail}: the op that made it runs in Python"
        return brk

    # -- operations -------------------------------------------------------------------------------------------
    def run_fake(self, fn, args, kwargs):
        """Run `fn` on fake tensors; data-dependent results and errors become graph breaks."""
        try:
            # With symbolic sizes about, the Python dispatcher is on, as Dynamo runs fake ops: composite ops
            # (matmul, ...) then decompose through their Python implementations, which read symbolic sizes; some
            # torch releases' C++ kernels read plain sizes instead, which would specialise every dim they touch
            shape_env = self.fake_mode.shape_env
            symbolic = shape_env is not None and bool(shape_env.var_to_range)  # backed and unbacked symbols
            with self.fake_mode, (enable_python_dispatcher() if symbolic else contextlib.nullcontext()):
                return fn(*args, **kwargs)
        except _DATA_DEPENDENT as exc:
            raise GraphBreak("data_dependent", f"{_name(fn)} needs tensor data ({type(exc).__name__})") from None
        except GuardOnDataDependentSymNode as exc:
            # a decision on a size that depends on tensor data (after nonzero, x[mask])
            raise self.data_dependent_break(free_unbacked_symbols(exc.cond),
                                            f"{_name(fn)} decides on a data-dependent size") from None
        except GraphBreak:
            raise
        except Exception as exc:
            if _tensor_as_number(args) or _tensor_as_number(list(kwargs.values())):
                # Note [A tensor used as a number]
                raise GraphBreak("data_dependent", f"{_name(fn)} takes a one-element tensor where it needs a "
                                                   "number (a size, a padding): its value", hint="call",
                                 hint_fields={"call": f"{_name(fn)}()"}) from None
            raise GraphBreak("fake_tensor_error", f"{_name(fn)}: {type(exc).__name__}: {exc}") from None

    def create_node(self, op: str, target, args: tuple, kwargs: dict, fake_result):
        node = self.graph.create_node(op, target, self._embed(args), self._embed(kwargs))
        if self.graph is self.frame_graph and any(arg.graph is not self.graph for arg in node.all_input_nodes):
            # a tensor made inside a nested body (a vmapped function's) that reached the frame another way than
            # the body's result: the body's graph is gone (Note [vmap as a nested graph], values/vmap.py)
            self.graph.erase_node(node)
            raise GraphBreak("vmap", f"{_name(target)} of a tensor made inside a vmapped function, outside it")
        node.meta["example_value"] = fake_result
        if isinstance(fake_result, (torch.Tensor, torch.SymInt, torch.SymFloat, torch.SymBool)):
            node.meta["val"] = fake_result
        try:
            bindings = compute_unbacked_bindings(self.shape_env, fake_result)
        except Exception:
            # data-dependent values used inside the op only (x[i] with a 0-d index tensor): nothing to bind
            self.shape_env.pending_fresh_unbacked_symbols.clear()
            bindings = None
        if bindings:
            # where each new data-dependent size is read from the result (aot_autograd needs it)
            node.meta["unbacked_bindings"] = bindings
        if self.current_location is not None:
            code, line = self.current_location
            node.meta["stack_trace"] = f"{code.co_filename}:{line} in {code.co_name}"
        self.node_count += 1
        return node

    def _embed(self, arg):
        """`arg` as FX can write it into the graph's code: nodes, and constants whose repr is their source, as they
        are; containers item by item; any other object (a class, a function, a NumPy scalar, an object) as a
        get_attr node reading an attribute of the root the graph module is built on."""
        kind = type(arg)
        if kind in _SOURCE_FORM or isinstance(arg, _SOURCE_FORM_BASES):
            return arg
        if kind in (tuple, list):
            return kind(self._embed(item) for item in arg)
        if kind is slice:
            return slice(self._embed(arg.start), self._embed(arg.stop), self._embed(arg.step))
        if kind is dict and all(type(key) in _SOURCE_FORM for key in arg):
            return {key: self._embed(value) for key, value in arg.items()}
        if isinstance(arg, tuple) and hasattr(arg, "_fields") and all(type(item) in _SOURCE_FORM for item in arg):
            return arg  # a named tuple of plain constants: FX writes its class as a global
        return self._constant_node(arg)

    def _constant_node(self, obj):
        node = self._constants.get(id(obj))
        if node is None:
            name = f"_const{len(self._constants)}"
            setattr(self.root, name, obj)
            node = self.frame_graph.get_attr(name)
            node.meta["example_value"] = obj
            self._constants[id(obj)] = node
        return node

    def getitem_node(self, node, index: int, fake):
        return self.create_node("call_function", operator.getitem, (node, index), {}, fake)

    def erase(self, node):
        self.graph.erase_node(node)
        self.node_count -= 1

    def output(self, nodes: list):
        if any(node.graph is not self.graph for node in nodes):
            raise RuntimeError("the frame's graph would return a tensor made inside a vmapped function")
        self.graph.output(tuple(nodes))

    def prune_inputs(self, needed: set) -> None:
        """Drop placeholders no node uses and no output returns, so the graph takes only what it reads. An unused
        SymInt placeholder stays while a tensor input kept has its symbol among its sizes (Note [SymInt inputs])."""
        unused_symbols = []
        for source, value in list(self.inputs.items()):
            node = value.node
            if node.users or node in needed:
                continue
            if isinstance(value, SymbolInput):
                unused_symbols.append((source, value))
                continue
            self.graph.erase_node(node)
            del self.inputs[source]
        if not unused_symbols:
            return
        in_sizes, bound = set(), set()
        for value in self.inputs.values():
            if isinstance(value, SymbolInput):
                if value.node.users:
                    bound.add(value.fake.node.expr)
            elif isinstance(value.fake, torch.Tensor):
                in_sizes |= free_symbols(value.fake)
        # a symbol another SymInt input already carries (tracing proved two dims equal) needs no second one: as
        # torch.compile's graphs, whose duck-shaped symbols share one input from the start
        in_sizes -= bound
        for source, value in unused_symbols:
            expr = value.fake.node.expr
            if isinstance(expr, sympy.Symbol) and expr in in_sizes:
                in_sizes.discard(expr)  # one placeholder per symbol
                continue
            self.graph.erase_node(value.node)
            del self.inputs[source]


class SymbolInput:
    """A SymInt placeholder: the size of an input tensor's dynamic dim (its source a TensorSizeSource)."""

    __slots__ = ("node", "fake")

    def __init__(self, node, fake):
        self.node = node
        self.fake = fake


# Note [SymInt inputs]
# A dynamic dim's symbol reaches the graph as torch.compile's graphs hand it: a placeholder of its own
# (`s50: Sym(s50)`, example value the SymInt) just before the first tensor input that has it among its sizes,
# filled per call by the entry with `x.size(d)` (sources.TensorSizeSource). A size read in Python
# (`x.shape[0]`) whose expression is such a symbol is that placeholder; anything else (`x.numel()`, a stride, a
# symbol of a tensor made inside the graph) is still computed in the graph (`aten.sym_size.int`, `sym_numel`).
# Placeholders no node uses are kept while a kept tensor input carries the symbol (one per symbol), so every
# backend sees the same inputs for the same program as under torch.compile; AOTAutograd and Inductor then read
# the size from the SymInt input instead of calling `.size()` inside the compiled code.


#: constants FX writes as code that rebuilds them (their repr, or a global FX's code has)
_SOURCE_FORM = frozenset({int, float, bool, complex, str, bytes, type(None), type(...), type(NotImplemented),
                          torch.dtype, torch.device, torch.layout, torch.memory_format, torch.Size})
#: kinds FX writes through a global of their own: nodes, operator overloads, enum members
_SOURCE_FORM_BASES = (torch.fx.Node, torch._ops.OpOverload, torch._ops.HigherOrderOperator, enum.Enum)


def is_symbolic(obj) -> bool:
    """True when a fake result holds sizes known only at run time (SymInt/SymFloat/SymBool)."""
    if isinstance(obj, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return True
    if isinstance(obj, (list, tuple)):
        return any(is_symbolic(o) for o in obj)
    return False


def _name(fn) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


def _placeholder_name(user_name: str, index: int) -> str:
    cleaned = "".join(ch if ch.isalnum() else "_" for ch in user_name).strip("_") or f"input{index}"
    if cleaned[0].isdigit():
        cleaned = "l_" + cleaned
    return cleaned


# Note [Quiet fake failures]: an op that raises on its fake inputs (a shape error in the user's program) is a
# fact capture uses (the op raises: a graph break that runs it natively, where the user sees Python's error).
# FakeTensorMode logs each such failure at ERROR level with a traceback ("failed while attempting to run meta
# for aten.mm.default", ~18 lines) before raising; while jitcore captures, that record says nothing the user's
# own exception will not, so this thread drops it. Other threads, and torch outside capture, log as before.
_capturing = threading.local()
_META_FAILURE = "failed while attempting to run meta"


class _DropMetaFailuresWhileCapturing(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not getattr(_capturing, "depth", 0):
            return True
        return not (isinstance(record.msg, str) and record.msg.startswith(_META_FAILURE))


logging.getLogger("torch._subclasses.fake_tensor").addFilter(_DropMetaFailuresWhileCapturing())


@contextlib.contextmanager
def quiet_fake_failures():
    """Inside the block this thread's fake-tensor failure records are dropped (Note [Quiet fake failures])."""
    _capturing.depth = getattr(_capturing, "depth", 0) + 1
    try:
        yield
    finally:
        _capturing.depth -= 1
