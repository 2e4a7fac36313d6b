"""Tensors: an FX node plus the fake tensor that describes it.

Every operation on a tensor becomes a graph node (`graph_call`). Metadata (shape, dtype, device, requires_grad)
is read from the fake tensor as Python constants: the guard on the tensor's source pins it. Reading the *data* of a
tensor (`.item()`, `bool(t)`, `.tolist()`) is a graph break.
"""
from __future__ import annotations

import numbers
import operator

import torch
from torch.fx.experimental.symbolic_shapes import free_symbols, free_unbacked_symbols, is_concrete_int

from jitcore.guards import HasAttrMatch, StorageOffsetMatch, UnitStrideMatch
from jitcore.guards.torch_checks import MEMORY_FORMAT_NDIMS
from jitcore.capture.breaks import GraphBreak
from jitcore.capture.sources import AttrSource
from jitcore.capture.graph import fx_args, fake_args, is_symbolic
from jitcore.capture.write_order import check_input_write, check_may_raise, note_writes
from jitcore.capture.values.base import Value, NOT_CONSTANT
from jitcore.capture.values.constant import ConstantValue, const
from jitcore.capture.values.wrapping import wrap
from jitcore.capture.values.sequence import TupleValue, ListValue
from jitcore.capture.values.symint import SizeBoolValue, SizeValue
from jitcore.capture.values.function_modes import dispatch, operator_func, property_getter
from jitcore.guards.identity import address

__all__ = ["TensorValue", "OWNED_METHODS", "graph_call", "graph_call_side_effect", "wrap_fake_result"]

#: attributes answered from the fake tensor as constants (pinned by the tensor's guard)
_METADATA = frozenset({"shape", "dtype", "device", "ndim", "requires_grad", "is_cuda", "is_cpu", "layout",
                       "is_sparse", "is_quantized", "is_meta", "is_leaf", "is_floating_point", "is_complex",
                       "is_contiguous", "size", "dim", "numel", "stride", "element_size", "nelement",
                       "ndimension", "get_device", "is_nested", "itemsize", "nbytes", "storage_offset"})
#: attributes that are themselves tensors computed from the tensor: graph nodes through getattr
_TENSOR_ATTRS = frozenset({"T", "mT", "H", "mH", "real", "imag"})
#: methods that hand tensor data to Python
_DATA_METHODS = frozenset({"item", "tolist", "numpy", "__bool__", "__int__", "__float__", "__index__",
                           "data_ptr", "untyped_storage", "storage"})
#: attributes we refuse to model: they expose autograd state or storage that the graph cannot represent
_UNSUPPORTED_ATTRS = frozenset({"grad", "grad_fn", "_base", "data", "_version", "__dict__"})
#: Tensor methods whose meaning the module of another kind owns: name -> handler(state, tensor, args, kwargs)
#: (`numpy()`: values/numpy_rules.py)
OWNED_METHODS: dict = {}
#: methods that run autograd: the break comes at the call, which runs natively (never traced into autograd's Python)
_AUTOGRAD_METHODS = frozenset({"backward", "register_hook", "retain_grad", "register_post_accumulate_grad_hook"})


class TensorValue(Value):
    __slots__ = ("node", "fake", "tensor_type", "instance_dict")

    def __init__(self, node, fake, source=None, tensor_type=torch.Tensor, instance_dict=None):
        super().__init__(source)
        self.node = node
        self.fake = fake
        #: the real tensor's exact type (Parameter, a subclass) as the user's isinstance/type() would see it
        self.tensor_type = tensor_type
        #: a tensor input's own Python attributes (`param.tag = ...`: its __dict__, which the fake lacks); a
        #: tensor made in the graph has none
        self.instance_dict = instance_dict

    def is_tensor(self):
        return True

    def python_type(self):
        return self.tensor_type

    def identity(self):
        return self.fake

    # -- Python protocol --------------------------------------------------------------------------------------
    def truth(self, state):
        _python_protocol_under_modes(state, "__bool__")
        numel = self.fake.numel()
        if is_concrete_int(numel) and numel != 1:
            # never data: Python raises whatever the values (a traced `except` may catch it)
            message = f"Boolean value of Tensor with {'no values' if numel == 0 else 'more than one value'} is ambiguous"
            raise GraphBreak.raises(RuntimeError, message, args=(message,))
        raise GraphBreak("tensor_branch", "a tensor's value decides a Python branch", untouched=self)

    def enter(self, state):
        raise GraphBreak.raises(TypeError, "a tensor is not a context manager")

    def length(self, state):
        """An int, or a SizeValue when dim 0 is symbolic."""
        _python_protocol_under_modes(state, "__len__")
        if self.fake.dim() == 0:
            raise GraphBreak.raises(TypeError, "len() of a 0-d tensor")
        n = metadata_value(state, self, self.fake.shape[0], "len()", "size", (0,))
        return n.constant() if isinstance(n, ConstantValue) else n

    def iterate(self, state):
        _python_protocol_under_modes(state, "__iter__")
        n = self.length(state)
        count = n.constant() if isinstance(n, Value) else n  # unrolling needs the count: it is specialised
        return [self.getitem(state, const(i)) for i in range(count)]

    def getattr(self, state, name):
        if state.ctx.function_modes:
            # a C property read shows the active TorchFunctionMode `Tensor.<name>.__get__` (Note [Torch function
            # modes traced], values/function_modes.py)
            getter = property_getter(name)
            through = dispatch(state, getter, [self], {}) if getter is not None else None
            if through is not None:
                return through
        if name in _UNSUPPORTED_ATTRS:
            raise GraphBreak("unsupported_value", f"tensor attribute .{name}")
        if name in _DATA_METHODS or name in _AUTOGRAD_METHODS:
            # the break comes at the call, so the call itself can run natively between two graphs
            return TensorMethodValue(self, name)
        if name in _TENSOR_ATTRS:
            return graph_call(state, "call_function", getattr, [self, const(name)], {})
        if name in _METADATA:
            attr = getattr(self.fake, name)
            if callable(attr):
                return TensorMethodValue(self, name)
            return metadata_value(state, self, attr, name, "size" if name == "shape" else name, ())
        attr = getattr(self.tensor_type, name, None)
        own = self._own_attribute(state, name, attr)
        if own is not None:
            return own
        if attr is None:
            message = f"'{self.tensor_type.__name__}' object has no attribute '{name}'"
            raise GraphBreak.raises(AttributeError, message, args=(message,))
        if callable(attr):
            return TensorMethodValue(self, name)
        raise GraphBreak("unsupported_value", f"tensor attribute .{name}")

    def _own_attribute(self, state, name, class_attr):
        """An attribute the tensor holds in its own __dict__ (read through its source, which guards it), or None;
        its absence is guarded where the answer relies on it (the class has no such attribute)."""
        if self.instance_dict is None or hasattr(class_attr, "__set__"):
            return None
        if name in self.instance_dict:
            return wrap(state, self.instance_dict[name], AttrSource(self.source, name))
        if class_attr is None:
            state.ctx.guard(self.source, HasAttrMatch(name, False))
        return None

    def has_attr(self, state, name):
        attr = getattr(self.tensor_type, name, None)
        if self.instance_dict is not None and not hasattr(attr, "__set__"):
            present = name in self.instance_dict or attr is not None
            if attr is None:
                state.ctx.guard(self.source, HasAttrMatch(name, present))
            return present
        return hasattr(self.fake, name)

    def getitem(self, state, key):
        through = dispatch(state, torch.Tensor.__getitem__, [self, key], {})
        if through is not None:
            return through
        if key.is_symbolic_number() and key.python_type() is int and self.fake.dim() >= 1:
            # `x[n - 1]` with a symbolic size: Tensor.__getitem__ turns an int-like index into a Python int
            # (`__index__`), which would pin the size; `select` on dim 0 is the same view and keeps it symbolic
            return graph_call(state, "call_function", torch.select, [self, const(0), key], {})
        return graph_call(state, "call_function", operator.getitem, [self, key], {})

    def setitem(self, state, key, value):
        if dispatch(state, torch.Tensor.__setitem__, [self, key, value], {}) is None:
            graph_call(state, "call_function", operator.setitem, [self, key, value], {})

    def binary_op(self, state, op, other, reflected):
        if not _tensor_operand(other):
            return NotImplemented
        args = [other, self] if reflected else [self, other]
        if state.ctx.function_modes:
            through = _operator_through_modes(state, op, not reflected, args)
            if through is not None:
                return through
        return graph_call(state, "call_function", getattr(operator, op), args, {})

    def unary_op(self, state, op):
        if op == "not_":
            return self.truth(state)
        if state.ctx.function_modes:
            through = _operator_through_modes(state, op, True, [self])
            if through is not None:
                return through
        return graph_call(state, "call_function", getattr(operator, op), [self], {})

    def contains(self, state, item):
        raise GraphBreak("data_dependent", "`in` on a tensor compares tensor data")

    def as_fx_arg(self, state):
        return self.node

    def as_fake(self, state):
        return self.fake

    def reconstruct(self, codegen):
        return codegen.tensor_output(self)

    def __repr__(self):
        return f"Tensor({self.node.name}: {tuple(self.fake.shape)} {self.fake.dtype})"


def _metadata_constant(state, value, what: str):
    """Metadata as a Python constant; a size that depends on tensor data (after x[mask]) is not one."""
    if is_symbolic(value):
        raise _data_dependent(state, value, what)
    return const(value)


def _data_dependent(state, value, what: str) -> GraphBreak:
    # Note [A data-dependent size read in Python] in capture/graph.py
    return state.graph.data_dependent_break(free_unbacked_symbols(value),
                                            f"{what} depends on tensor data (a data-dependent size)")


#: how the graph computes one symbolic size read by a tensor method: (aten op, whether it takes the dim)
_SIZE_OPS = {"size": (torch.ops.aten.sym_size.int, True), "stride": (torch.ops.aten.sym_stride.int, True),
             "numel": (torch.ops.aten.sym_numel.default, False), "nelement": (torch.ops.aten.sym_numel.default, False),
             "storage_offset": (torch.ops.aten.sym_storage_offset.default, False)}


def metadata_value(state, tensor, value, what: str, method: str, args: tuple):
    """A tensor's metadata read in Python: constants as constants, symbolic sizes as SizeValues (graph nodes made
    when used: `aten.sym_size.int(x, d)`). A size that depends on tensor data breaks the graph."""
    if isinstance(value, torch.SymInt):
        if is_concrete_int(value):
            return const(int(value))
        if free_unbacked_symbols(value):
            raise _data_dependent(state, value, what)
        op, takes_dim = _SIZE_OPS.get(method, (None, False))
        if op is None:
            return const(SizeValue(value, state.ctx, None).constant())
        op_args = (args[0] % max(tensor.fake.dim(), 1),) if takes_dim else ()
        graph = state.graph

        def make():
            # the input's SymInt placeholder where the size is one (Note [SymInt inputs] in capture/graph.py)
            bound = graph.symbol_node(value)
            return bound if bound is not None else graph.create_node("call_function", op, (tensor.node, *op_args),
                                                                     {}, value)
        return SizeValue(value, state.ctx, make)
    if isinstance(value, torch.SymBool):
        return const(SizeBoolValue(value).constant())
    if isinstance(value, (torch.SymFloat,)):
        return _metadata_constant(state, value, what)
    if isinstance(value, tuple) and is_symbolic(value) and not args:
        items = [metadata_value(state, tensor, item, what, method, (i,)) for i, item in enumerate(value)]
        return TupleValue(items, tuple_type=None if type(value) is tuple else type(value))
    return _metadata_constant(state, value, what)


def _tensor_operand(value) -> bool:
    """Python's operators on tensors accept tensors, numbers, and (for some ops) sequences of numbers."""
    if value.is_tensor():
        return True
    if value.is_symbolic_number():
        return True
    c = value.constant()
    # a NumPy scalar (np.float32(0.5)) is passed to the op as it is, which then treats it as eager does
    return c is not NOT_CONSTANT and (isinstance(c, (int, float, bool, complex)) or c is None or (
        isinstance(c, numbers.Number) and type(c).__module__ == "numpy"))


def _python_protocol_under_modes(state, dunder: str) -> None:
    """bool(x), len(x), iter(x) show an active TorchFunctionMode `Tensor.<dunder>` and then what it calls (unbind
    for iter), which capture does not model as eager orders them: under a traced mode they break."""
    if state.ctx.function_modes:
        raise GraphBreak("torch_function_mode", f"Tensor.{dunder} under a TorchFunctionMode")


def _operator_through_modes(state, op: str, tensor_left: bool, args: list):
    """An operator under a traced TorchFunctionMode: the func eager hands the mode, with the tensor first where
    eager puts it first (`1 - x` is `Tensor.__rsub__(x, 1)`)."""
    learnt = operator_func(op, tensor_left)
    if learnt is None:
        raise GraphBreak("torch_function_mode", f"operator.{op} on a tensor under a TorchFunctionMode")
    func, tensor_first = learnt
    if len(args) == 2 and tensor_first != tensor_left:
        args = args[::-1]
    return dispatch(state, func, args, {})


class TensorMethodValue(Value):
    """`x.method` before it is called: calling it makes a call_method node (or folds metadata)."""

    __slots__ = ("tensor", "name")

    def __init__(self, tensor, name):
        super().__init__(None)
        self.tensor = tensor
        self.name = name

    def python_type(self):
        return type(getattr(torch.Tensor, self.name))

    def children(self):
        return [self.tensor]

    def reconstruct(self, codegen):
        return f"{codegen.load(self.tensor)}.{self.name}"

    def call(self, state, args, kwargs):
        if state.ctx.function_modes:
            func = getattr(self.tensor.tensor_type, self.name, None) or getattr(torch.Tensor, self.name)
            through = dispatch(state, func, [self.tensor, *args], kwargs)
            if through is not None:
                return through
        owner = OWNED_METHODS.get(self.name)
        if owner is not None:
            return owner(state, self.tensor, args, kwargs)
        if self.name in _DATA_METHODS:
            raise GraphBreak("data_dependent", f"Tensor.{self.name}() reads tensor data into Python", untouched=self)
        if self.name == "is_inference" and self.tensor.source is None and state.ctx.entered_inference_mode:
            # fake tensors are never inference tensors: only eager knows for one made since
            raise GraphBreak("unsupported_value", "is_inference() of a tensor made after entering inference_mode")
        if self.name in _AUTOGRAD_METHODS:
            raise GraphBreak("autograd", f"Tensor.{self.name}()", untouched=self)
        if self.name in _METADATA:
            if self.name == "storage_offset":
                _guard_storage_offsets(state, self.tensor)
            elif self.name == "stride":
                _guard_unit_strides(state, self.tensor)
            fake_a = fake_args(state, args)
            fake_k = fake_args(state, kwargs)
            result = state.graph.run_fake(getattr(self.tensor.fake, self.name), fake_a, fake_k)
            dims = tuple(a.constant() for a in args) if not kwargs else ()
            if NOT_CONSTANT in dims or not all(type(d) is int for d in dims):
                return _metadata_constant(state, result, self.name)
            return metadata_value(state, self.tensor, result, f"{self.name}()", self.name, dims)
        return graph_call(state, "call_method", self.name, [self.tensor, *args], kwargs)


#: the one metadata read TensorMatch does not pin (see _guard_storage_offsets)
_STORAGE_OFFSET = torch.Tensor.storage_offset
#: the metadata read TensorMatch pins only where a dim's size is not 1 (see _guard_unit_strides)
_STRIDE = torch.Tensor.stride


def _guard_storage_offsets(state, tensor) -> None:
    """`x.storage_offset()` becomes a constant, and TensorMatch leaves offsets free: guard the offsets it came from.
    A graph input's offset is its own; a view made in the graph starts where its inputs do, so then every tensor
    input read so far is pinned."""
    for value in _inputs_behind(state, tensor):
        state.ctx.guard(value.source, StorageOffsetMatch(value.fake.storage_offset()))


def _inputs_behind(state, tensor) -> list:
    """The graph inputs a tensor's metadata comes from: itself where it is one, else every tensor input so far."""
    inputs = state.graph.inputs
    if tensor.source is not None and inputs.get(tensor.source) is tensor:
        return [tensor]
    return [v for v in inputs.values() if isinstance(v, TensorValue)]


def _guard_unit_strides(state, tensor) -> None:
    """`x.stride()` becomes Python numbers, and TensorMatch leaves the strides of size-1 dims free (Note [Strides of
    size-1 dims], guards/torch_checks.py): pin those of the tensor read, or of every tensor input read so far for
    a tensor the graph made (its strides come from theirs)."""
    for value in _inputs_behind(state, tensor):
        fake = value.fake
        if fake.layout is not torch.strided or fake.dim() in MEMORY_FORMAT_NDIMS:
            continue  # TensorMatch pins these strides itself
        unit = {dim: int(stride) for dim, (size, stride) in enumerate(zip(fake.size(), fake.stride()))
                if is_concrete_int(size) and size == 1 and is_concrete_int(stride)}
        if unit:
            state.ctx.guard(value.source, UnitStrideMatch(unit))


def _contains_tensor(obj) -> bool:
    if isinstance(obj, torch.Tensor):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_contains_tensor(o) for o in obj)
    if isinstance(obj, dict):
        return any(_contains_tensor(o) for o in obj.values())
    return False


def graph_call(state, op: str, target, args: list, kwargs: dict) -> Value:
    """Record `target(*args, **kwargs)` as an FX node, learn its result on fake tensors, wrap the result."""
    graph = state.graph
    fa, fk = fake_args(state, args), fake_args(state, kwargs)
    if op == "call_method":
        fn = getattr(type(fa[0]), target, None) or getattr(torch.Tensor, target)
    else:
        fn = target
    tensors = [v for v in [*args, *kwargs.values()] if v.is_tensor()]
    check_may_raise(state, target, fa, fk)
    versions = [_version(v.fake) for v in tensors]
    fake = graph.run_fake(fn, fa, fk)
    if _symbolic_shape(fake) and _specialize_dynamic_ints([*args, *kwargs.values()], free_symbols(fake)):
        # a dynamic float decided a size (interpolate's scale_factor): sizes are ints of the ShapeEnv, so the
        # float becomes a guarded constant here; one that only scales values (`x * a`) stays a graph input
        return graph_call(state, op, target, args, kwargs)
    # an inference tensor keeps no version counter: an op on one that returns nothing ran for its effect
    written = [v for v, before in zip(tensors, versions)
               if _version(v.fake) != before or (before is None and fake is None)]
    check_input_write(graph, target, written)
    note_writes(graph, target, written)
    mutated = bool(written)
    if mutated and not _contains_tensor(fake):
        # an in-place operation run for its effect (x[i] = v returns None): keep the node
        graph.create_node(op, target, tuple(fx_args(state, args)), fx_args(state, kwargs), fake)
        return const(fake)
    if not _contains_tensor(fake):
        # sizes, dtypes, booleans about metadata: pinned by the inputs' guards, no node needed
        if fn is _STORAGE_OFFSET and tensors:
            _guard_storage_offsets(state, tensors[0])
        elif fn is _STRIDE and tensors:
            _guard_unit_strides(state, tensors[0])
        if isinstance(fake, torch.SymInt) and not is_concrete_int(fake) and not free_unbacked_symbols(fake):
            # a size computed by a torch function (torch.numel(x)): the graph computes it where it is used
            fx_a, fx_k = tuple(fx_args(state, args)), fx_args(state, kwargs)
            return SizeValue(fake, state.ctx, lambda: graph.create_node(op, target, fx_a, fx_k, fake))
        return metadata_value(state, None, fake, getattr(target, "__name__", str(target)), "", ())
    node = graph.create_node(op, target, tuple(fx_args(state, args)), fx_args(state, kwargs), fake)
    inputs = {address(v.fake): v for v in [*args, *kwargs.values()] if v.is_tensor()}
    return wrap_fake_result(state, node, fake, inputs)


def _version(fake):
    """The tensor's version counter (bumped by in-place ops); None for an inference tensor, which has none."""
    return None if fake.is_inference() else fake._version


def _symbolic_shape(fake) -> bool:
    if isinstance(fake, torch.Tensor):
        return any(is_symbolic(d) for d in fake.shape)
    if isinstance(fake, (list, tuple)):
        return any(_symbolic_shape(f) for f in fake)
    return False


def _specialize_dynamic_ints(values, in_sizes) -> bool:
    """Pin the dynamic floats among `values` whose symbols are among `in_sizes` (the result's size symbols)."""
    found = False
    for value in values:
        if value.is_symbolic_number() and not value.pinned_by_shape_env() \
                and free_symbols(value.fake) & in_sizes:
            # a dynamic Python float (not a size or a number computed from sizes, which stay symbolic)
            value.constant()
            found = True
        items = value.sequence_items()
        if items is not None:
            found = _specialize_dynamic_ints(items, in_sizes) or found
    return found


def graph_call_side_effect(state, fn, args: tuple):
    """A node for a call run for its effect on global state (grad mode, autocast); returns the node."""
    graph = state.graph
    return graph.create_node("call_function", fn, args, {}, None)


def wrap_fake_result(state, node, fake, inputs: dict) -> Value:
    """Turn an op's fake result into values; an op that returns one of its inputs (in-place) returns that value."""
    if node.meta.get("unbacked_bindings"):
        state.graph.note_unbacked(node, state.origin(), state.location())
    if isinstance(fake, torch.Tensor):
        same = inputs.get(address(fake))
        return same if same is not None else TensorValue(node, fake)
    if isinstance(fake, (tuple, list)):
        items = []
        for i, item in enumerate(fake):
            if isinstance(item, torch.Tensor) or _contains_tensor(item):
                items.append(wrap_fake_result(state, state.graph.getitem_node(node, i, item), item, inputs))
            else:
                items.append(const(item))
        if type(fake) is list:
            return ListValue(items)
        return TupleValue(items, tuple_type=None if type(fake) is tuple else type(fake))
    raise GraphBreak("unsupported_value", f"a tensor operation returned {type(fake).__name__}")


def is_constant_value(v) -> bool:
    return isinstance(v, ConstantValue)
