"""NumPy arrays and NumPy scalars traced as tensors: `NdarrayValue`, and `numpy_call`, the graph node that runs one
NumPy operation on torch._numpy (Note [NumPy in graphs]).

Imports numpy when it is installed (without it no value is an array and values/numpy_rules.py registers nothing).
Entry points: NdarrayValue, numpy_call, tensor_as_array (`t.numpy()`), array_input (an array passed in), np.
"""
from __future__ import annotations

import operator
import warnings

import torch
from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols

from jitcore.guards import ArrayMatch, TensorMatch
from jitcore.capture.breaks import GraphBreak
from jitcore.capture.sources import ArrayTensorSource
from jitcore.capture.write_order import RAISES_ON_DATA
from jitcore.capture.values.base import Value, NOT_CONSTANT
from jitcore.capture.values.constant import ConstantValue, const
from jitcore.capture.values.sequence import TupleValue, ListValue
from jitcore.capture.values.tensor import TensorValue, graph_call

try:
    import numpy as np
    import torch._numpy as tnp
except ImportError:  # numpy is optional: without it nothing here is ever reached
    np = tnp = None

__all__ = ["NdarrayValue", "numpy_call", "numpy_target", "immutable", "tensor_as_array", "array_input", "np", "tnp"]

# Note [NumPy in graphs]
# As torch.compile does, an ndarray is traced as the tensor that holds its data (`x.numpy()` shares x's memory,
# an array passed in is read as `torch.from_numpy(a)`, which shares the user's memory, so in-place writes reach it),
# and each NumPy operation is one graph node whose target (`NumpyCall`) runs the same operation of torch._numpy, a
# NumPy-compatible API over tensors: tensors in, tensors out. torch._numpy is not NumPy (default dtypes, type
# promotion, scalars, views versus copies), so every operation is also run once at capture time by real NumPy on
# example arrays of the same dtypes and shapes (zeros): NumPy's own answer decides the result's kind (an ndarray,
# a NumPy scalar such as np.float64, the very input array as `a += 1` and `np.asarray(a)` return, a tuple of
# them), dtype and shape, whether it shares memory with an input, and (asked first on read-only examples) which
# input arrays it writes in place, which the graph must write too. Where torch._numpy's result differs in
# dtype or shape, or shares memory where NumPy's does not share it, or NumPy's answer is of a kind not modelled
# (a Python number read from the data), the operation is a graph break: it runs in NumPy itself. Where NumPy
# makes a copy and torch._numpy a view, the node's result is copied. Only what a result's kind and metadata
# depend on is taken from the examples; the data is always computed by the graph. Operations on constants alone
# whose result is immutable (np.sqrt(2.0), np.float32(0.5), np.finfo) are folded with real NumPy. np.random is
# never traced: a call to it breaks, so the generator's stream stays NumPy's own. At the exit an ndarray becomes `tensor.numpy()` again (a NumPy scalar: `tensor.numpy()[()]`).


class NumpyCall:
    """The target of a graph node that runs one NumPy operation with torch._numpy: its tensor arguments become
    torch._numpy arrays, its array results tensors again."""

    def __init__(self, fn, name: str):
        self.fn = fn
        self.__name__ = f"numpy_{name}"
        self.__qualname__ = self.__name__
        #: true division of integers makes torch's default float (float32); NumPy's is float64, so the integer
        #: operands are made float64 first (never by switching torch's default dtype: it is process-wide)
        self.divides = name in _DIVISIONS

    def __call__(self, *args, **kwargs):
        if self.divides:
            args = tuple(_float64(arg) for arg in args)
        return _from_tnp(self.fn(*_to_tnp(args), **_to_tnp(kwargs)))

    def __repr__(self):
        return f"<NumPy {self.__name__.removeprefix('numpy_')} on torch._numpy>"


_DIVISIONS = frozenset({"truediv", "numpy.true_divide", "numpy.divide"})


def _float64(arg):
    if isinstance(arg, torch.Tensor) and not (arg.is_floating_point() or arg.is_complex()):
        return arg.to(torch.float64)
    return arg


def _to_tnp(obj):
    if isinstance(obj, torch.Tensor):
        return tnp.ndarray(obj)
    if type(obj) in (list, tuple):
        return type(obj)(_to_tnp(item) for item in obj)
    if type(obj) is dict:
        return {key: _to_tnp(item) for key, item in obj.items()}
    return obj


def _from_tnp(obj):
    if isinstance(obj, tnp.ndarray):
        return obj.tensor
    if type(obj) in (list, tuple):
        return type(obj)(_from_tnp(item) for item in obj)
    return obj


#: (what, name) -> NumpyCall, so one operation is one object in every graph
_TARGETS: dict = {}


def numpy_target(what: str, name: str, fn) -> NumpyCall:
    key = (what, name)
    target = _TARGETS.get(key)
    if target is None:
        target = _TARGETS[key] = NumpyCall(fn, name)
        RAISES_ON_DATA.add(id(target))
    return target


def _method(name):
    def call_method(array, *args, **kwargs):
        return getattr(array, name)(*args, **kwargs)
    return call_method


def _attribute(name):
    def read_attribute(array):
        return getattr(array, name)
    return read_attribute


#: methods that hand the data to Python, or change the array's shape or type in place: graph breaks
_DATA_METHODS = frozenset({"item", "tolist", "tobytes", "tofile", "dump", "dumps", "__bool__", "__int__",
                           "__float__", "__index__", "__array__", "__dlpack__"})
_NOT_MODELLED = frozenset({"resize", "view", "setflags", "byteswap", "getfield", "setfield", "ctypes", "data",
                           "base", "flags", "strides", "flat", "device", "to_device", "__array_interface__"})


class NdarrayValue(Value):
    """A NumPy array, or a NumPy scalar (`scalar`: np.float64 ...), made while tracing or passed in: the tensor that
    holds its data, and its NumPy dtype (what NumPy reported for the operation that made it)."""

    __slots__ = ("tensor", "dtype", "scalar")
    needs_identity = True

    def __init__(self, tensor, dtype, scalar=False, source=None):
        super().__init__(source)
        self.tensor = tensor
        self.dtype = dtype
        self.scalar = scalar

    def python_type(self):
        return self.dtype.type if self.scalar else np.ndarray

    def children(self):
        return [self.tensor]

    def example(self):
        """A real NumPy object of this value's type, dtype and shape (zeros): what NumPy is asked about."""
        if self.scalar:
            return self.dtype.type(0)
        fake = self.tensor.fake
        shape, strides = _hints(fake.shape), _hints(fake.stride())
        # the tensor's layout is NumPy's (Note [NumPy in graphs]): so NumPy's views and copies are the real ones
        span = 1 + sum((n - 1) * st for n, st in zip(shape, strides)) if all(shape) else 0
        buffer = np.zeros(max(span, 1), dtype=self.dtype)
        # a view whose base is the buffer itself, so its writeable flag can be set back (_ask_numpy)
        return np.ndarray(shape, self.dtype, buffer=buffer, strides=[st * self.dtype.itemsize for st in strides])

    # -- attributes and methods ---------------------------------------------------------------------------
    def getattr(self, state, name):
        if name == "shape":
            # a plain tuple (NumPy's), of the tensor's sizes (constants, or symbolic where the dims are dynamic)
            shape = self.tensor.getattr(state, "shape")
            if isinstance(shape, ConstantValue):
                return const(tuple(shape.constant()))
            return TupleValue(list(shape.sequence_items()))  # (asking constant() would specialise the sizes)
        if name == "ndim":
            return self.tensor.getattr(state, name)
        if name == "size":
            return self.tensor.getattr(state, "numel").call(state, [], {})
        if name == "dtype":
            return const(self.dtype)
        if name == "itemsize":
            return const(self.dtype.itemsize)
        if name in _DATA_METHODS:
            return DataMethodValue(self, name)
        private = name.startswith("_") and not (name.startswith("__") and name.endswith("__"))
        if name in _NOT_MODELLED or private or not hasattr(tnp.ndarray, name):
            if not hasattr(self.python_type(), name):
                raise GraphBreak.raises(AttributeError, f"{self.python_type().__name__!r} object has no "
                                        f"attribute {name!r}")
            raise GraphBreak("numpy", f"ndarray.{name} is not modelled")
        if not callable(getattr(self.python_type(), name, None)):
            # a property (a.T, a.real, a.nbytes): an operation like any other, whose kind NumPy's answer gives
            read = _attribute(name)
            return numpy_call(state, name, numpy_target("attr", name, read), read, [self], {})
        return ArrayMethodValue(self, name)

    def getitem(self, state, key):
        return numpy_call(state, "getitem", numpy_target("op", "getitem", operator.getitem), operator.getitem,
                          [self, key], {})

    def setitem(self, state, key, value):
        numpy_call(state, "setitem", numpy_target("op", "setitem", operator.setitem), operator.setitem,
                   [self, key, value], {})

    def binary_op(self, state, op, other, reflected):
        if other.is_tensor():
            raise GraphBreak("numpy", "an operator between a NumPy array and a torch tensor")
        fn = getattr(operator, op)
        args = [other, self] if reflected else [self, other]
        return numpy_call(state, op, numpy_target("op", op, fn), fn, args, {})

    def unary_op(self, state, op):
        if op == "not_":
            return self.truth(state)
        fn = getattr(operator, op)
        return numpy_call(state, op, numpy_target("op", op, fn), fn, [self], {})

    # -- Python protocols that read the data ----------------------------------------------------------------
    def truth(self, state):
        raise GraphBreak("data_dependent", "the truth of a NumPy array or scalar decides a Python branch")

    def contains(self, state, item):
        raise GraphBreak("data_dependent", "`in` on a NumPy array compares its data")

    def length(self, state):
        if self.scalar or self.tensor.fake.dim() == 0:
            message = "len() of unsized object" if not self.scalar else \
                f"object of type '{self.dtype.type.__name__}' has no len()"
            raise GraphBreak.raises(TypeError, message)
        return self.tensor.length(state)

    def iterate(self, state):
        n = self.length(state)
        count = n.constant() if isinstance(n, Value) else n
        return [self.getitem(state, const(i)) for i in range(count)]

    # -- reconstruction -------------------------------------------------------------------------------------
    def reconstruct(self, codegen):
        to_numpy = codegen.constant_object(torch.Tensor.numpy, "to_numpy")
        expr = f"{to_numpy}({codegen.load(self.tensor)})"
        return f"{expr}[()]" if self.scalar else expr

    def __repr__(self):
        kind = self.dtype.type.__name__ if self.scalar else f"ndarray {self.dtype}"
        return f"Ndarray({kind}: {self.tensor!r})"


class ArrayMethodValue(Value):
    """`a.name` of an array before it is called: calling it is one NumPy operation."""

    __slots__ = ("array", "name")

    def __init__(self, array, name):
        super().__init__(None)
        self.array = array
        self.name = name

    def children(self):
        return [self.array]

    def call(self, state, args, kwargs):
        fn = _method(self.name)
        return numpy_call(state, self.name, numpy_target("method", self.name, fn), fn, [self.array, *args], kwargs)


class DataMethodValue(ArrayMethodValue):
    """`a.item`, `a.tolist` ...: the call hands the data to Python, so it runs there (a graph break at the call)."""

    __slots__ = ()

    def call(self, state, args, kwargs):
        raise GraphBreak("data_dependent", f"ndarray.{self.name}() reads the array's data into Python")


# -- one NumPy operation ------------------------------------------------------------------------------------
def numpy_call(state, name: str, target: NumpyCall, numpy_fn, args: list, kwargs: dict) -> Value:
    """`numpy_fn(*args, **kwargs)` as NumPy computes it, traced as `target` on torch._numpy (Note [NumPy in
    graphs]); a graph break where the two would differ."""
    _check_data_errors(name, args)
    arrays: list = []
    examples = [_example(state, value, arrays) for value in args]
    kw_examples = {key: _example(state, value, arrays) for key, value in kwargs.items()}
    expected, written = _ask_numpy(name, numpy_fn, examples, kw_examples, arrays)
    if not arrays and immutable(expected):
        return const(expected)  # constants only (np.sqrt(2.0), np.float32(1) * 2): NumPy's own answer
    versions = [_version(value.tensor.fake) for value, _ in arrays]
    result = graph_call(state, "call_function", target, [_graph_arg(state, v) for v in args],
                        {key: _graph_arg(state, v) for key, v in kwargs.items()})
    for (value, _), before, wrote in zip(arrays, versions, written):
        if wrote and _version(value.tensor.fake) == before:
            raise GraphBreak("numpy", f"{name}: NumPy writes an array in place that torch._numpy does not write")
    return _result(state, name, expected, result, arrays)


def _version(fake):
    return None if fake.is_inference() else fake._version


#: operations whose (base, exponent) NumPy refuses for integers where an exponent is negative: (name, order)
_POWERS = {"pow": 1, "ipow": 1, "power": 1, "__pow__": 1, "__ipow__": 1, "__rpow__": -1}


def _check_data_errors(name, args) -> None:
    """Where NumPy raises on the data and torch does not (an integer to a negative integer power), the operation
    runs in NumPy. (Where torch raises too, a graph that raises reruns the frame in Python: Note [A graph that
    raises].)"""
    order = _POWERS.get(name)
    if order is None or len(args) < 2:
        return
    base, exponent = args[:2][::order]
    if isinstance(exponent, NdarrayValue) and exponent.dtype.kind == "i" and _integer(base):
        raise GraphBreak("numpy", "an integer array to an integer array's power (NumPy raises on a negative one)")


def _integer(value) -> bool:
    if isinstance(value, NdarrayValue):
        return value.dtype.kind in "biu"
    return type(value.constant()) in (int, bool)


def _ask_numpy(name, numpy_fn, examples, kw_examples, arrays):
    """(NumPy's answer on the examples, for each array whether NumPy wrote it in place). Zeros first, then (where
    zeros raise: a singular matrix) other values. What is taken from the answer (kind, dtype, shape, views) does
    not depend on the values, except for the functions whose result type does (_VALUE_TYPED), never traced.
    The examples are read-only at first: where NumPy writes one, it is asked again on writeable examples of
    distinct values, compared before and after."""
    error = None
    for attempt in range(2 if arrays else 1):
        if attempt:
            _refill(arrays)
        _set_writeable(arrays, False)
        try:
            return _call_quietly(numpy_fn, examples, kw_examples), [False] * len(arrays)
        except ValueError as exc:
            error = exc
            if "read-only" not in str(exc):
                continue
        except Exception as exc:
            error = exc
            continue
        _set_writeable(arrays, True)
        _refill(arrays)
        before = [np.array(example, copy=True) for _, example in arrays]
        try:
            expected = _call_quietly(numpy_fn, examples, kw_examples)
        except Exception as exc:
            error = exc
            break
        changed = [not np.array_equal(old, example, equal_nan=example.dtype.kind in "fc")
                   for old, (_, example) in zip(before, arrays)]
        return expected, changed
    # the real data may behave otherwise: NumPy itself runs it
    raise GraphBreak("numpy", f"NumPy's {name} on example arrays raised {type(error).__name__}: {error}")


def _call_quietly(numpy_fn, examples, kw_examples):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return numpy_fn(*examples, **kw_examples)


def _set_writeable(arrays, flag: bool) -> None:
    for _, example in arrays:
        if isinstance(example, np.ndarray):
            example.flags.writeable = flag


def _refill(arrays) -> None:
    rng = np.random.default_rng(0)  # its own generator: the program's np.random stream is never drawn from
    _set_writeable(arrays, True)
    for _, example in arrays:
        if isinstance(example, np.ndarray) and example.size:
            example[...] = rng.integers(1, 4, example.shape) if example.dtype.kind in "biu" else \
                rng.standard_normal(example.shape) + 3


def _example(state, value, arrays: list):
    """The real object NumPy is asked about in place of `value`; arrays met are collected as (value, example)."""
    if isinstance(value, NdarrayValue):
        for seen, example in arrays:
            if seen is value:
                return example
        example = value.example()
        arrays.append((value, example))
        return example
    if value.is_tensor():
        raise GraphBreak("numpy", "a torch tensor passed to a NumPy operation (NumPy would call the tensor's own "
                                  "methods or convert it)")
    c = value.constant()
    if c is not NOT_CONSTANT:
        return c
    items = value.sequence_items()
    if items is not None and value.python_type() in (list, tuple):
        return value.python_type()(_example(state, item, arrays) for item in items)
    raise GraphBreak("numpy", f"a {value.kind_name} passed to a NumPy operation")


def _graph_arg(state, value):
    """The value as the graph node receives it: arrays as their tensors, NumPy dtypes by name, a NumPy scalar as a
    0-d tensor of its dtype (NumPy types it strongly, unlike a Python number: NEP 50)."""
    if isinstance(value, NdarrayValue):
        return value.tensor
    c = value.constant()
    if c is not NOT_CONSTANT:
        if isinstance(c, np.dtype) or (isinstance(c, type) and issubclass(c, np.generic)):
            return const(np.dtype(c).name)
        if isinstance(c, np.generic):
            dtype = torch.from_numpy(np.zeros(0, c.dtype)).dtype
            return graph_call(state, "call_function", torch.tensor, [const(c.item())], {"dtype": const(dtype)})
        return value
    items = value.sequence_items()
    if items is not None and value.python_type() in (list, tuple):
        mapped = [_graph_arg(state, item) for item in items]
        return ListValue(mapped) if value.python_type() is list else TupleValue(mapped)
    return value


def immutable(obj) -> bool:
    if isinstance(obj, (np.generic, np.dtype, int, float, complex, bool, str, type(None), np.finfo, np.iinfo)):
        return True
    return type(obj) is tuple and all(immutable(item) for item in obj)


def _result(state, name, expected, result, arrays):
    """The value for NumPy's answer `expected`, given the graph's result: checked against it (Note [NumPy in
    graphs])."""
    if expected is None:
        # run for its effect (a.fill(0), np.copyto): what it wrote was checked against NumPy's writes
        return const(None)
    for value, example in arrays:
        if expected is example:
            # the input itself (`a += 1`, `np.asarray(a)`, `out=a`): the same array, when the graph wrote that tensor
            if result is value.tensor:
                return value
            raise GraphBreak("numpy", f"{name}: torch._numpy does not return the input array NumPy returns")
    if isinstance(expected, (np.ndarray, np.generic)):
        if not isinstance(result, TensorValue):
            raise GraphBreak("numpy", f"{name}: torch._numpy returns no array where NumPy returns "
                                      f"{type(expected).__name__}")
        return _array_result(state, name, expected, result, arrays)
    if type(expected) in (tuple, list):
        items = result.sequence_items() if not isinstance(result, TensorValue) else None
        if items is None or len(items) != len(expected):
            raise GraphBreak("numpy", f"{name}: torch._numpy's result differs from NumPy's {type(expected).__name__}")
        values = [_result(state, name, e, r, arrays) for e, r in zip(expected, items)]
        return TupleValue(values) if type(expected) is tuple else ListValue(values)
    c = result.constant()
    if immutable(expected) and c is not NOT_CONSTANT and type(c) is type(expected) and c == expected:
        return const(expected)  # metadata (np.shape(a), np.ndim(a)): the same Python value either way
    raise GraphBreak("numpy", f"NumPy's {name} returns {type(expected).__name__} (not modelled in a graph)")


def _array_result(state, name, expected, result, arrays):
    fake = result.fake
    scalar = isinstance(expected, np.generic)
    if numpy_dtype(fake.dtype) != expected.dtype or (scalar and fake.dim() != 0) or (
            not scalar and _hints(fake.shape) != expected.shape):
        raise GraphBreak("numpy", f"{name}: torch._numpy gives {fake.dtype} {tuple(fake.shape)}, NumPy "
                                  f"{expected.dtype} {np.shape(expected)}")
    copy = False
    for value, example in arrays:
        shares = _shares_storage(fake, value.tensor.fake)
        numpy_shares = not scalar and np.may_share_memory(expected, example)
        if shares and not numpy_shares:
            copy = True  # NumPy made a copy where torch._numpy made a view: later writes must not reach it
        elif numpy_shares and not shares:
            raise GraphBreak("numpy", f"{name}: NumPy returns a view of its input, torch._numpy a copy")
    if not scalar and not _same_layout(fake, expected):
        if not expected.flags.c_contiguous or not (copy or not any(_shares_storage(fake, value.tensor.fake)
                                                                       for value, _ in arrays)):
            raise GraphBreak("numpy", f"{name}: torch._numpy lays the result out otherwise than NumPy")
        copy = True  # a new array in C order, as NumPy's
    if copy:
        result = graph_call(state, "call_method", "clone", [result], {"memory_format": const(torch.contiguous_format)})
    elif any(result is value.tensor for value, _ in arrays):
        # a new array object over the same memory (a view NumPy made): a new tensor over it too
        result = graph_call(state, "call_function", torch.ops.aten.alias.default, [result], {})
    return NdarrayValue(result, expected.dtype, scalar=scalar)


def _same_layout(fake, expected) -> bool:
    """The tensor's strides are the NumPy array's, in every dim where a stride matters (size > 1)."""
    itemsize = expected.dtype.itemsize
    return all(n <= 1 or st * itemsize == np_st
               for n, st, np_st in zip(expected.shape, _hints(fake.stride()), expected.strides))


def _shares_storage(a, b) -> bool:
    return a.untyped_storage()._cdata == b.untyped_storage()._cdata


def _hints(shape) -> tuple:
    """A shape as plain ints: a symbolic size's hint (what this call has), for asking NumPy about it."""
    out = []
    for size in shape:
        if isinstance(size, torch.SymInt):
            if free_unbacked_symbols(size):
                raise GraphBreak("data_dependent", "a NumPy array whose size depends on tensor data")
            size = size.node.hint
        out.append(int(size))
    return tuple(out)


_NUMPY_DTYPES: dict = {}


def numpy_dtype(torch_dtype):
    """The NumPy dtype of a tensor's dtype (None where NumPy has none: bfloat16 ...)."""
    if torch_dtype not in _NUMPY_DTYPES:
        try:
            _NUMPY_DTYPES[torch_dtype] = torch.empty(0, dtype=torch_dtype).numpy().dtype
        except (TypeError, RuntimeError):
            _NUMPY_DTYPES[torch_dtype] = None
    return _NUMPY_DTYPES[torch_dtype]


# -- conversions between tensors and arrays -----------------------------------------------------------------
def tensor_as_array(state, tensor) -> NdarrayValue:
    """`t.numpy()`: the array sharing the tensor's memory; where eager raises (a tensor that requires grad, not
    on the CPU, with a conjugate or negative bit) or has no NumPy dtype, the call runs in Python."""
    fake = tensor.fake
    dtype = numpy_dtype(fake.dtype)
    if (fake.requires_grad or fake.device.type != "cpu" or fake.is_conj() or fake.is_neg() or dtype is None
            or fake.layout is not torch.strided):
        raise GraphBreak("data_dependent", "Tensor.numpy() of a tensor NumPy cannot share (it runs in Python)")
    return NdarrayValue(tensor, dtype)


def array_input(state, array, source) -> Value | None:
    """An ndarray passed in (an argument, a global): read by the graph as `torch.from_numpy(array)`, guarded on its
    type, dtype and flags (ArrayMatch) and on that tensor's metadata (TensorMatch); None where torch cannot share
    it (its dtype, negative strides, a read-only array)."""
    if not array.flags.writeable or not array.flags.aligned:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            tensor = torch.from_numpy(array)
    except Exception:
        return None
    state.ctx.guard(source, ArrayMatch(np.ndarray, array.dtype))
    tensor_source = ArrayTensorSource(source)
    state.ctx.guard(tensor_source, TensorMatch(tensor))
    node, fake = state.graph.add_input(tensor_source, tensor)
    value = TensorValue(node, fake, tensor_source)
    state.graph.inputs[tensor_source] = value
    return NdarrayValue(value, array.dtype, source=source)
