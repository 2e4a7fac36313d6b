"""Call rules for torch and the standard library: which callables become graph nodes, which run in Python, and
jitcore's own meaning for the functions torch consults about tracing (`torch.compiler.is_compiling()` ...).

A callable defined in one of torch's operator namespaces (torch, torch.nn.functional, torch.linalg, ...) or a
Tensor method is put in the graph. Functions that change process state (seeding, set_*, I/O) break the graph. All of
it is registered into the call-rule registry (values/call_rules.py) when this module is imported.
"""
from __future__ import annotations

import functools
import inspect
import os
import re
import sys
import types
import weakref

import torch
import torch._ops
import torch._refs
import torch._utils
import torch.overrides

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.call_rules import (CallRule, Meaning, register_callable, register_predicate, graph_node,
                                               KNOWN_CALLABLE, TORCH_RUNTIME, TORCH_OPERATOR, NATIVE_LIBRARY)
from jitcore.capture.values.base import NOT_CONSTANT
from jitcore.capture.values.constant import const, fold
from jitcore.capture.values.function_modes import dispatch, mode_break
from jitcore.capture.values.introspection import signature_lookaside
from jitcore.marks import disabled_by_torch, is_compiling

__all__ = ["is_torch_operator", "is_op_overload", "is_function_apply", "treat_as_function_apply", "is_torch_runtime",
           "is_torch_code"]

#: the directory of torch's own Python code
_TORCH_ROOT = os.path.join(os.path.dirname(os.path.realpath(torch.__file__)), "")

#: standard-library modules whose Python functions are traced like user code (pure helpers, no I/O)
_INLINED_STDLIB = frozenset({"functools", "dataclasses", "typing", "enum", "abc", "collections", "operator",
                             "copy", "numbers", "types", "contextlib", "math", "itertools", "string",
                             "unittest", "heapq", "copyreg"})
#: standard-library modules whose calls are reported as I/O
_IO_STDLIB = frozenset({"logging", "io", "warnings", "pprint", "builtins", "sys", "traceback", "pickle", "json",
                        "csv", "shutil", "pathlib", "tempfile", "subprocess"})

#: torch's own machinery, not tensor math: the autograd engine (backward, grad), optimizers (step and zero_grad:
#: Python loops over parameters, foreach kernels, hooks), data loading and Dynamo. Dynamo skips them too. Their
#: Python functions are never traced: a call is a graph break and runs in Python (Note [Only the user's code]).
_TORCH_RUNTIME = ("torch.autograd", "torch._dynamo", "torch._compile", "torch.optim", "torch.utils.data")
#: parts of those packages whose Python code is ordinary tensor code (custom autograd Functions, grad-mode helpers)
_TORCH_RUNTIME_TRACED = ("torch.autograd.function", "torch.autograd.grad_mode", "torch.autograd.forward_ad")
#: torch functions elsewhere that run the autograd engine
_RUNS_AUTOGRAD = frozenset({torch.Tensor.backward})

_GRAPH_MODULES = frozenset({
    "torch", "torch.functional", "torch.nn.functional", "torch._C._nn", "torch._C._linalg", "torch._C._fft",
    "torch._C._special", "torch._C._VariableFunctions", "torch.nn.init", "torch.linalg", "torch.fft",
    "torch.special", "torch._tensor", "torch.overrides",
})

#: names in those namespaces that touch process state or the outside world
_STATEFUL_PREFIXES = ("set_", "manual_seed", "seed", "initial_seed", "save", "load", "use_deterministic",
                      "compile", "get_rng_state", "from_numpy", "from_file", "frombuffer", "cond", "vmap")


#: torch.ops.<namespace>.<op> and its overloads (aten's, and custom ops registered with torch.library)
_OP_TYPES = (torch._ops.OpOverloadPacket, torch._ops.OpOverload)


def is_torch_operator(fn) -> bool:
    if isinstance(fn, _OP_TYPES):
        return True
    objclass = getattr(fn, "__objclass__", None)
    if objclass is not None:
        return objclass is torch._C.TensorBase or objclass is torch.Tensor
    module = getattr(fn, "__module__", None)
    if module is None:
        owner = getattr(fn, "__self__", None)
        module = getattr(owner, "__name__", None) if owner is not None else None
    return module in _GRAPH_MODULES and not isinstance(fn, type)


def is_op_overload(obj) -> bool:
    return isinstance(obj, _OP_TYPES)


def is_torch_runtime(fn) -> bool:
    """A Python function of torch's own machinery (`_TORCH_RUNTIME`), or one torch marks not-to-compile
    (`torch._dynamo.disable`, `torch._disable_dynamo`): never traced into, never given a compiled copy."""
    if not isinstance(fn, types.FunctionType):
        return False
    if fn in _RUNS_AUTOGRAD or disabled_by_torch(fn):
        return True
    module = fn.__module__
    if not module or not module.startswith("torch."):
        return False
    return _under(module, _TORCH_RUNTIME) and not _under(module, _TORCH_RUNTIME_TRACED)


def is_torch_code(code) -> bool:
    """Code of torch's own Python modules (torch.nn's layers included): inlined where it is called from traced
    code, but never the user's code (Note [Only the user's code]): a break inside it is reported at the user's call,
    and it gets no compiled copy or resume function of its own (torch.nn's containers excepted:
    continuation._CONTAINERS)."""
    return _in_torch(code.co_filename)


@functools.lru_cache(maxsize=512)
def _in_torch(filename: str) -> bool:
    return os.path.realpath(filename).startswith(_TORCH_ROOT)


def _under(module: str, packages: tuple) -> bool:
    return any(module == package or module.startswith(package + ".") for package in packages)


def _torch_call(state, fn, args, kwargs):
    """A graph node, except for a torch function whose effect is outside the graph: that breaks."""
    name = getattr(fn, "__name__", "")
    if name.startswith(_STATEFUL_PREFIXES):
        raise GraphBreak("unsupported_call", f"torch.{name} changes process state, so it runs in Python",
                         hint="process_state", hint_fields={"callee": f"torch.{name}"})
    through = dispatch(state, fn, args, kwargs)
    if through is not None:
        return through
    data = args[0] if args else kwargs.get("data")
    if fn in _SYMBOLIC_FORMS and data is not None and _holds_symbolic_number(data):
        fn = _SYMBOLIC_FORMS[fn]
    return graph_node(state, fn, args, kwargs)


#: torch functions whose Python reference keeps symbolic numbers in their data symbolic (`torch.tensor(n)` of a size;
#: the C++ function would read the number and pin it), as torch.compile's graphs call them
_SYMBOLIC_FORMS = {torch.tensor: torch._refs.tensor}


def _holds_symbolic_number(value) -> bool:
    if value.is_symbolic_number():
        return True
    items = None if value.is_tensor() else value.sequence_items()
    return items is not None and any(_holds_symbolic_number(item) for item in items)


def _no_torch_function(state, fn, args, kwargs):
    """torch.overrides.has_torch_function*: False unless an argument is a tensor subclass that overrides
    __torch_function__ (then the frame is not modelled), or a traced TorchFunctionMode is active (True, and
    handle_torch_function dispatches: values/function_modes.py)."""
    if state.ctx.function_modes:
        return const(True)
    values = list(args)
    for value in list(values):
        if not value.is_tensor():
            items = value.sequence_items()
            if items is not None:
                values.extend(items)
    for value in values:
        if value.is_tensor() and value.tensor_type not in (torch.Tensor, torch.nn.Parameter):
            raise GraphBreak("unsupported_value", f"a {value.tensor_type.__name__} tensor subclass argument")
    return const(False)


def _compiling(state, fn, args, kwargs):
    """torch.compiler.is_compiling() and friends: True inside traced code, as under torch.compile, so libraries
    written for torch.compile take their capture-friendly paths (natively run code still sees False); False in a
    capture retried after True made the code raise (Note [is_compiling() when the traced code raises],
    capture/frame.py)."""
    state.ctx.asked_compiling = True
    return const(state.ctx.compiling)


def _not_tracing(state, fn, args, kwargs):
    """torch.jit.is_tracing() / torch._C._is_tracing(): jitcore's capture is not a TorchScript trace."""
    return const(False)


def _native_root(fn):
    """The standard-library package of a Python function that must run natively, else None."""
    if not isinstance(fn, types.FunctionType):
        return None
    module = getattr(fn, "__module__", None) or ""
    root = module.split(".", 1)[0]
    if not root or root not in sys.stdlib_module_names or root in _INLINED_STDLIB:
        return None
    return root


def _lookaside(name, handler, *fns):
    rule = CallRule(name, Meaning.LOOKASIDE, handler)
    for fn in fns:
        if fn is not None:
            register_callable(fn, KNOWN_CALLABLE, rule)


_lookaside("has_torch_function", _no_torch_function, torch.overrides.has_torch_function,
           torch.overrides.has_torch_function_unary, torch.overrides.has_torch_function_variadic)
_lookaside("is_compiling", _compiling, torch.compiler.is_compiling,
           getattr(torch.compiler, "is_dynamo_compiling", None), getattr(torch._utils, "is_compiling", None),
           is_compiling)
_lookaside("is_tracing", _not_tracing, torch.jit.is_tracing, torch._C._is_tracing)
_lookaside("inspect.signature", signature_lookaside, inspect.signature)

# Note [A debugger in compiled code]: breakpoint(), sys.breakpointhook() and the debuggers' set_trace stop in the
# frame that calls them and show its variables. Run at a graph break they would stop in jitcore's entry function
# (`___entry_f`, locals `___l0` ...). The frame that calls one runs natively instead, whole: a dispatch prologue's
# frame is the user's code, so the debugger stops in the user's function, at their line, with their names; stepping
# goes on through the user's own code. A callee that calls one makes its caller's capture stop the same way.
_DEBUGGER_MODULES = frozenset({"pdb", "bdb", "ipdb", "pudb", "IPython.core.debugger", "debugpy"})
_DEBUGGER_ENTRIES = frozenset({"set_trace", "breakpoint", "post_mortem", "pm", "runcall", "embed"})


def _is_debugger_entry(fn) -> bool:
    if fn is breakpoint or fn is sys.breakpointhook or fn is sys.__breakpointhook__:
        return True
    function = getattr(fn, "__func__", fn)
    return (isinstance(function, types.FunctionType) and function.__name__ in _DEBUGGER_ENTRIES
            and (getattr(function, "__module__", None) or "") in _DEBUGGER_MODULES)


def _enters_debugger(state, fn, args, kwargs):
    brk = GraphBreak("debugger", f"{getattr(fn, '__qualname__', fn)}()")
    brk.whole_frame = True
    raise brk


register_predicate(KNOWN_CALLABLE, _is_debugger_entry, CallRule("debugger", Meaning.LOOKASIDE, _enters_debugger))

def _fold_re(state, fn, args, kwargs):
    """re.compile / re.search ... on constant patterns, strings and flags: pure (a Pattern and a Match are
    immutable), folded to constants; anything else declines and breaks as a standard-library call."""
    a = [v.constant() for v in args]
    k = {n: v.constant() for n, v in kwargs.items()}
    if NOT_CONSTANT in a or NOT_CONSTANT in k.values() or any(callable(v) for v in (*a, *k.values())):
        return NotImplemented
    return const(fold(state, fn, *a, **k))


def _legacy_tensor(state, cls, args, kwargs):
    """`torch.IntTensor([4])`, `torch.FloatTensor(data)`: the legacy typed constructors given one sequence of
    Python numbers make a CPU tensor of their dtype from it, whatever the default device (what `torch.tensor`
    gives with that dtype and device); given sizes (`torch.FloatTensor(2, 3)`) they make uninitialised memory, which
    stays a break."""
    if kwargs or len(args) != 1 or args[0].python_type() not in (list, tuple):
        return NotImplemented
    data = args[0].constant()
    if data is NOT_CONSTANT or not all(type(item) in (int, float, bool) for item in data):
        return NotImplemented
    return graph_node(state, torch.tensor, [const(data)], {"dtype": const(cls.dtype), "device": const("cpu")})


_lookaside("legacy typed tensor constructor", _legacy_tensor, *(
    getattr(torch, name, None) for name in ("FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor",
                                            "LongTensor", "IntTensor", "ShortTensor", "CharTensor", "ByteTensor",
                                            "BoolTensor")))

_lookaside("re functions on constants", _fold_re, re.compile, re.search, re.match, re.fullmatch, re.findall,
           re.split, re.sub, re.subn, re.escape)


def is_function_apply(fn) -> bool:
    """`MyFunction.apply` of a torch.autograd.Function subclass (torch's C classmethod, bound to the subclass)."""
    return (type(fn) is types.BuiltinMethodType and fn.__name__ == "apply" and isinstance(fn.__self__, type)
            and issubclass(fn.__self__, torch.autograd.Function))


def _function_apply(state, fn, args, kwargs):
    """The Function's apply as one graph node: its forward runs on fake tensors now (for the result's metadata) and
    for real when the graph runs, where autograd records the node with the user's backward, ctx and all, exactly
    as eager does; AOTAutograd backends trace that backward into the joint graph."""
    _no_mode_sees_inside(state)
    return graph_node(state, _apply_target(fn.__self__), args, kwargs)


def _no_mode_sees_inside(state) -> None:
    """An active TorchFunctionMode sees the calls a Function's forward makes, which one graph node hides."""
    if state.ctx.function_modes:
        raise mode_break(state, "an autograd.Function call")


def _python_function_apply(state, fn, args, kwargs):
    """`MyFunction.apply` where torch's Function.apply is a Python classmethod over the C one (torch before
    2.12): the class comes first; the same graph node as the C classmethod's."""
    cls = args[0].constant() if args else NOT_CONSTANT
    if not (isinstance(cls, type) and issubclass(cls, torch.autograd.Function)):
        return NotImplemented
    _no_mode_sees_inside(state)
    return graph_node(state, _apply_target(cls), args[1:], kwargs)


def treat_as_function_apply(apply) -> None:
    """Calls of `apply` (the function of a classmethod on a Function class) become the Function's graph node."""
    register_callable(apply, KNOWN_CALLABLE, CallRule("autograd.Function.apply in Python", Meaning.LOOKASIDE,
                                                      _python_function_apply))


#: Function subclass -> the Python function a graph node calls (FX names a node's target by its module and
#: qualified name, which a C classmethod bound to a user's class does not have)
_APPLY_TARGETS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _apply_target(cls):
    target = _APPLY_TARGETS.get(cls)
    if target is None:
        ref = weakref.ref(cls)

        def target(*args, **kwargs):
            return ref().apply(*args, **kwargs)

        target.__name__ = target.__qualname__ = f"{cls.__name__}_apply"
        _APPLY_TARGETS[cls] = target
    return target


def _runs_training(fn) -> bool:
    """torch.optim's code (optimizer.step(), zero_grad(), schedulers) and autograd's entry points: they run the
    backward pass or update parameters through their .grad, which no graph holds; one break at the call."""
    if not isinstance(fn, types.FunctionType):
        return False
    module = fn.__module__ or ""
    return module.startswith("torch.optim.") or fn in _AUTOGRAD_ENTRY_POINTS


_AUTOGRAD_ENTRY_POINTS = (torch.autograd.backward, torch.autograd.grad)

register_predicate(TORCH_OPERATOR, is_function_apply,
                   CallRule("autograd.Function.apply", Meaning.GRAPH, _function_apply))
# torch.optim and autograd's entry points are torch machinery too: claimed at the same priority as the rest
_PYTHON_APPLY = getattr(vars(torch.autograd.Function).get("apply"), "__func__", None)
if _PYTHON_APPLY is not None:
    treat_as_function_apply(_PYTHON_APPLY)


def _torch_apply_override(fn) -> bool:
    """The `apply` classmethod a Function class in torch's machinery defines over Function.apply (flex attention's
    ModIndex, which TransformGetItemToIndex calls): never traced into (torch machinery), it is the Function's graph
    node, whose target calls that very apply."""
    if not (isinstance(fn, types.FunctionType) and fn.__name__ == "apply" and is_torch_runtime(fn)):
        return False
    owner_name, _, name = fn.__qualname__.rpartition(".")
    owner = getattr(sys.modules.get(fn.__module__), owner_name, None) if "." not in owner_name else None
    raw = vars(owner).get(name) if isinstance(owner, type) else None
    return (isinstance(raw, classmethod) and raw.__func__ is fn and issubclass(owner, torch.autograd.Function))


register_predicate(KNOWN_CALLABLE, _torch_apply_override, CallRule("a torch Function's own apply", Meaning.LOOKASIDE,
                                                                   _python_function_apply))
register_predicate(TORCH_RUNTIME, _runs_training, CallRule("training step", Meaning.NATIVE, break_kind="autograd"))
# torch's machinery other than the training calls above (those say "autograd"): one claim per callable
register_predicate(TORCH_RUNTIME, lambda fn: is_torch_runtime(fn) and not _runs_training(fn),
                   CallRule("torch runtime", Meaning.NATIVE, break_kind="torch_runtime"))
register_predicate(TORCH_OPERATOR, is_torch_operator, CallRule("torch operator", Meaning.GRAPH, _torch_call))
register_predicate(NATIVE_LIBRARY, lambda fn: _native_root(fn) in _IO_STDLIB,
                   CallRule("standard-library I/O", Meaning.NATIVE, break_kind="print_or_io"))
register_predicate(NATIVE_LIBRARY, lambda fn: _native_root(fn) not in (None, *_IO_STDLIB),
                   CallRule("standard-library function", Meaning.NATIVE, break_kind="unsupported_call"))
# copy.deepcopy of a tensor: Tensor.__deepcopy__ reads storages and data pointers, which fake tensors do not
# have; the copy runs in Python at a break (as under torch.compile)
for _deepcopy in {torch.Tensor.__deepcopy__, torch.nn.Parameter.__deepcopy__}:
    register_callable(_deepcopy, TORCH_RUNTIME, CallRule("Tensor.__deepcopy__", Meaning.NATIVE,
                                                         break_kind="unsupported_call"))
