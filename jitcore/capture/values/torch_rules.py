"""Which callables from torch become graph nodes, and which must run in Python.

A callable defined in one of torch's operator namespaces (torch, torch.nn.functional, torch.linalg, ...) or a
Tensor method is put in the graph. Functions that change process state (seeding, set_*, I/O) break the graph.
"""
from __future__ import annotations

import sys

import torch

from jitcore.capture.breaks import GraphBreak
from jitcore.marks import is_allowed_in_graph, is_compiling

__all__ = ["is_graph_callable", "check_torch_call", "native_kind"]

#: standard-library modules whose Python functions are traced like user code (pure helpers, no I/O)
_INLINED_STDLIB = frozenset({"functools", "dataclasses", "typing", "enum", "abc", "collections", "operator",
                             "copy", "numbers", "types", "contextlib", "math", "itertools", "string"})
#: standard-library modules whose calls are reported as I/O
_IO_STDLIB = frozenset({"logging", "io", "warnings", "pprint", "builtins", "sys", "traceback", "pickle", "json",
                        "csv", "shutil", "pathlib", "tempfile", "subprocess"})

_GRAPH_MODULES = frozenset({
    "torch", "torch.functional", "torch.nn.functional", "torch._C._nn", "torch._C._linalg", "torch._C._fft",
    "torch._C._special", "torch._C._VariableFunctions", "torch.nn.init", "torch.linalg", "torch.fft",
    "torch.special", "torch._tensor", "torch.overrides",
})

#: names in those namespaces that touch process state or the outside world
_STATEFUL_PREFIXES = ("set_", "manual_seed", "seed", "initial_seed", "save", "load", "use_deterministic",
                      "compile", "get_rng_state", "from_numpy", "from_file", "frombuffer", "cond", "vmap")

def is_graph_callable(fn) -> bool:
    if is_allowed_in_graph(fn):
        return True
    objclass = getattr(fn, "__objclass__", None)
    if objclass is not None:
        return objclass is torch._C.TensorBase or objclass is torch.Tensor
    module = getattr(fn, "__module__", None)
    if module is None:
        owner = getattr(fn, "__self__", None)
        module = getattr(owner, "__name__", None) if owner is not None else None
    return module in _GRAPH_MODULES and not isinstance(fn, type)


def check_torch_call(fn) -> None:
    """Break before calling a torch function whose effect is outside the graph."""
    if is_allowed_in_graph(fn):
        return
    name = getattr(fn, "__name__", "")
    if name.startswith(_STATEFUL_PREFIXES):
        raise GraphBreak("unsupported_call", f"torch.{name} changes process state, so it runs in Python")


def _no_torch_function(state, args, kwargs):
    """torch.overrides.has_torch_function*: False unless an argument is a tensor subclass that overrides
    __torch_function__ (then the frame is not modelled)."""
    from jitcore.capture.values.constant import const
    values = list(args)
    for value in list(values):
        if not value.is_tensor():
            items = getattr(value, "items", None)
            if isinstance(items, list):
                values.extend(items)
    for value in values:
        if value.is_tensor() and value.tensor_type not in (torch.Tensor, torch.nn.Parameter):
            raise GraphBreak("unsupported_value", f"a {value.tensor_type.__name__} tensor subclass argument")
    return const(False)


def _compiling(state, args, kwargs):
    """torch.compiler.is_compiling() and friends: True inside traced code, as under torch.compile, so libraries
    written for torch.compile take their capture-friendly paths (natively run code still sees False)."""
    from jitcore.capture.values.constant import const
    return const(True)


def _not_tracing(state, args, kwargs):
    """torch.jit.is_tracing() / torch._C._is_tracing(): jitcore's capture is not a TorchScript trace."""
    from jitcore.capture.values.constant import const
    return const(False)


def register_lookasides(table: dict) -> None:
    import torch.overrides as overrides
    for fn in (overrides.has_torch_function, overrides.has_torch_function_unary,
               overrides.has_torch_function_variadic):
        table[fn] = _no_torch_function
    import torch._utils
    for fn in (torch.compiler.is_compiling, getattr(torch.compiler, "is_dynamo_compiling", None),
               getattr(torch._utils, "is_compiling", None), is_compiling):
        if fn is not None:
            table[fn] = _compiling
    table[torch.jit.is_tracing] = table[torch._C._is_tracing] = _not_tracing
    import inspect
    from jitcore.capture.values.introspection import signature_lookaside
    table[inspect.signature] = signature_lookaside


def native_kind(fn):
    """The break kind for calling fn when it must run natively (a standard-library function), else None."""
    module = getattr(fn, "__module__", None) or ""
    root = module.split(".", 1)[0]
    if not root or root not in sys.stdlib_module_names or root in _INLINED_STDLIB:
        return None
    return "print_or_io" if root in _IO_STDLIB else "unsupported_call"
