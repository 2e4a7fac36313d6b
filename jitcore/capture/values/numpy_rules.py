"""Call rules for NumPy: `np.*` functions (graph nodes over torch._numpy, values/ndarray.py), NumPy's scalar types,
dtypes and finfo/iinfo (folded on constants), and the conversions between tensors and arrays: `Tensor.numpy()`,
`np.asarray(t)`, `torch.from_numpy(a)`, `torch.as_tensor(a)`, `torch.tensor(a)`, `torch.asarray(a)`.

Registers nothing when numpy is not installed. np.random and the other modules of numpy with state or I/O have
no rule: calling them is a graph break (Note [NumPy in graphs]). Entry point: is_numpy_function (for wrap()).
"""
from __future__ import annotations

import types

import torch

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.call_rules import CallRule, Meaning, KNOWN_CALLABLE, register_callable, register_predicate
from jitcore.capture.values.constant import const, fold
from jitcore.capture.values.base import NOT_CONSTANT
from jitcore.capture.values.ndarray import (NdarrayValue, immutable, numpy_call, numpy_target, tensor_as_array,
                                            np, tnp)
from jitcore.capture.values.tensor import OWNED_METHODS, graph_call

__all__ = ["is_numpy_function"]

#: numpy's namespaces whose functions have torch._numpy counterparts of the same name
_NAMESPACES = {"numpy": "", "numpy.linalg": "linalg", "numpy.fft": "fft"}
#: the function types NumPy's public functions have (ufuncs, array-function dispatchers, C and Python functions)
_FUNCTION_TYPES = ()
#: NumPy functions that convert a tensor passed to them through Tensor.__array__ (others call its methods)
_CONVERTERS = ()


#: functions whose result's dtype depends on the data (np.linalg.eig is complex only where an eigenvalue is)
_VALUE_TYPED = frozenset({("numpy.linalg", "eig"), ("numpy.linalg", "eigvals"), ("numpy", "roots")})


def _counterpart(fn):
    """The torch._numpy function standing for a public NumPy function, or None."""
    module = getattr(fn, "__module__", None)
    name = getattr(fn, "__name__", None)
    if module not in _NAMESPACES or type(name) is not str or name.startswith("_") or (module, name) in _VALUE_TYPED:
        return None
    sub = _NAMESPACES[module]
    if getattr(getattr(np, sub) if sub else np, name, None) is not fn:
        return None
    return getattr(getattr(tnp, sub) if sub else tnp, name, None)


def is_numpy_function(fn) -> bool:
    return np is not None and type(fn) in _FUNCTION_TYPES and _counterpart(fn) is not None


def _numpy_function(state, fn, args, kwargs):
    if fn in _CONVERTERS and args and args[0].is_tensor():
        # np.asarray(t): NumPy reads the tensor through t.numpy() (sharing its memory), then does the rest
        args = [tensor_as_array(state, args[0]), *args[1:]]
    counterpart = _counterpart(fn)
    key = f"{fn.__module__}.{fn.__name__}"
    if fn in _CONVERTERS and not kwargs and len(args) == 1 and _all_arrays(args[0]):
        # np.array([a, b]): torch._numpy cannot convert a list of arrays on fake tensors; stacking them is the
        # same array (checked against NumPy's like any result)
        counterpart, key = _stack, f"{key}(arrays)"
    return numpy_call(state, fn.__name__, numpy_target("function", key, counterpart), fn, args, kwargs)


def _all_arrays(value) -> bool:
    items = value.sequence_items()
    return items is not None and bool(items) and all(isinstance(item, NdarrayValue) for item in items)


def _stack(arrays):
    return tnp.stack(arrays)


def _scalar_type(state, cls, args, kwargs):
    """np.float32(0.5) on constants is folded; np.float32(a) of an array is an operation on it."""
    if not any(isinstance(v, NdarrayValue) for v in [*args, *kwargs.values()]):
        return _fold_constant(state, cls, args, kwargs)
    counterpart = getattr(tnp, cls.__name__, None)
    if counterpart is None:
        raise GraphBreak("numpy", f"np.{cls.__name__} of an array")
    return numpy_call(state, cls.__name__, numpy_target("scalar", cls.__name__, counterpart), cls, args, kwargs)


def _fold_constant(state, fn, args, kwargs):
    """np.dtype('float32'), np.finfo(np.float32), np.int64(3): NumPy's own (immutable) answer."""
    a = [v.constant() for v in args]
    k = {name: v.constant() for name, v in kwargs.items()}
    if NOT_CONSTANT in a or NOT_CONSTANT in k.values():
        return NotImplemented
    result = fold(state, fn, *a, **k)
    if not immutable(result):
        raise GraphBreak("numpy", f"{getattr(fn, '__name__', fn)}(...) makes a mutable object")
    return const(result)


# -- tensors and arrays -------------------------------------------------------------------------------------
def _tensor_numpy(state, tensor, args, kwargs):
    if args or kwargs:
        raise GraphBreak("data_dependent", "Tensor.numpy(force=...) runs in Python")
    return tensor_as_array(state, tensor)


def _only_array(args, kwargs, allowed=()):
    """The array argument of a conversion, or None where the call is not one modelled here."""
    if len(args) != 1 or not isinstance(args[0], NdarrayValue) or set(kwargs) - set(allowed):
        return None
    return args[0]


def _alias(state, tensor):
    return graph_call(state, "call_function", torch.ops.aten.alias.default, [tensor], {})


def _from_numpy(state, fn, args, kwargs):
    array = _only_array(args, kwargs)
    if array is None:
        return NotImplemented
    if array.scalar:
        raise GraphBreak.raises(TypeError, f"expected np.ndarray (got {array.dtype.type.__name__})")
    return _alias(state, array.tensor)


def _converted(state, array, kwargs, copy: bool):
    """torch.as_tensor / torch.asarray (sharing the array's memory) and torch.tensor (a copy), with a dtype."""
    dtype = kwargs.get("dtype")
    dtype = None if dtype is None else dtype.constant()
    if dtype is not None and not isinstance(dtype, torch.dtype):
        return NotImplemented
    tensor = array.tensor
    if dtype is not None and dtype != tensor.fake.dtype:
        return graph_call(state, "call_method", "to", [tensor], {"dtype": const(dtype), "copy": const(True)})
    if copy:
        return graph_call(state, "call_method", "clone", [tensor], {})
    return _alias(state, tensor)


def _as_tensor(state, fn, args, kwargs):
    array = _only_array(args, kwargs, ("dtype",))
    return NotImplemented if array is None else _converted(state, array, kwargs, copy=False)


def _tensor(state, fn, args, kwargs):
    array = _only_array(args, kwargs, ("dtype",))
    return NotImplemented if array is None else _converted(state, array, kwargs, copy=True)


if np is not None:
    _FUNCTION_TYPES = (np.ufunc, type(np.sum), types.BuiltinFunctionType, types.FunctionType)
    _CONVERTERS = (np.asarray, np.array, np.asanyarray)
    register_predicate(KNOWN_CALLABLE, is_numpy_function,
                       CallRule("NumPy function", Meaning.GRAPH, _numpy_function))
    register_predicate(KNOWN_CALLABLE, lambda fn: isinstance(fn, type) and issubclass(fn, np.generic),
                       CallRule("NumPy scalar type", Meaning.CONSTRUCT, _scalar_type))
    for _cls in (np.dtype, np.finfo, np.iinfo):
        register_callable(_cls, KNOWN_CALLABLE, CallRule("NumPy constant", Meaning.CONSTRUCT, _fold_constant))
    register_callable(torch.from_numpy, KNOWN_CALLABLE, CallRule("torch.from_numpy", Meaning.GRAPH, _from_numpy))
    register_callable(torch.as_tensor, KNOWN_CALLABLE, CallRule("torch.as_tensor", Meaning.GRAPH, _as_tensor))
    register_callable(torch.asarray, KNOWN_CALLABLE, CallRule("torch.asarray", Meaning.GRAPH, _as_tensor))
    register_callable(torch.tensor, KNOWN_CALLABLE, CallRule("torch.tensor", Meaning.GRAPH, _tensor))
    OWNED_METHODS["numpy"] = _tensor_numpy
