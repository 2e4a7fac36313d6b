"""torch's probes of its own process state, folded into constants while tracing, as torch.compile folds them.

Libraries ask torch about the process around their tensor code: usage logging (`torch._C._log_api_usage_once`),
the dispatch-mode and torch-function-mode stacks (`_len_torch_dispatch_stack`), TorchScript's tracing state,
whether autocast is on anywhere, whether the profiler or FX tracing is running. None of them computes anything the
graph needs, so each is answered here at capture time, in one of three ways:
- *logged*: the call only records usage; it runs once now, with its constant arguments, and answers None;
- *fixed*: what the process has (`torch.cuda.is_available()`) cannot change while it runs: a constant;
- *guarded*: the answer is read now and becomes a constant, with a root guard (ProbeMatch) that the probe still
  answers the same when an entry is reused (a dispatch mode pushed between calls recompiles);
- *capture's own answer*: what the question means for a captured graph, as under torch.compile:
  `_is_make_fx_tracing()` is True (so nn.MultiheadAttention keeps to the composite path a graph can hold, never
  the fused fast path, which no backend can trace), and the dispatch-mode stack is empty (guarded so).
A probe called with an argument that is not a constant is left to the rules below this one.
"""
from __future__ import annotations

import torch
import torch.autograd
import torch.backends.cudnn
import torch.backends.mps
import torch.distributed
import torch.nn.modules.activation
import torch.utils._python_dispatch

from jitcore.guards import ProbeMatch

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.base import NOT_CONSTANT
from jitcore.capture.values.call_rules import CallRule, Meaning, register_callable, KNOWN_CALLABLE
from jitcore.capture.values.constant import const
from jitcore.capture.values.function_modes import mode_break

__all__ = ["probe_answer"]


def _constants(args, kwargs):
    """The arguments as Python constants, or None when one is not a constant."""
    if kwargs:
        return None
    values = [arg.constant() for arg in args]
    return None if any(v is NOT_CONSTANT for v in values) else tuple(values)


def _label(fn, args) -> str:
    module = getattr(fn, "__module__", None) or "torch._C"
    return f"{module}.{fn.__name__}({', '.join(map(repr, args))})"


def probe_answer(state, fn, args: tuple, label: str | None = None):
    """`fn(*args)` read now, guarded to stay so (ProbeMatch): a constant value."""
    answer = fn(*args)
    state.ctx.guard(None, ProbeMatch(fn, args, answer, label or _label(fn, args)))
    return const(answer)


def _logged(state, fn, args, kwargs):
    values = _constants(args, kwargs)
    if values is not None:
        fn(*values)
    return const(None)


def _guarded(state, fn, args, kwargs):
    values = _constants(args, kwargs)
    if values is None:
        return NotImplemented
    if fn in _MODE_STACK_READERS and state.ctx.function_modes:
        # torch's stack lacks the modes the trace entered (Note [Torch function modes traced])
        raise mode_break(state, f"{fn.__name__}()")
    return probe_answer(state, fn, values)


#: probes whose answer counts the TorchFunctionModes on torch's stack
_MODE_STACK_READERS = frozenset(f for f in (torch._C._len_torch_function_stack,
                                            getattr(torch._C, "_is_torch_function_mode_enabled", None)) if f)


def _fixed(state, fn, args, kwargs):
    values = _constants(args, kwargs)
    if values is None:
        return NotImplemented
    return const(fn(*values))


def _make_fx_tracing(state, fn, args, kwargs):
    return const(True)


def _dispatch_mode_stack(state, fn, args, kwargs):
    if args or kwargs:
        return NotImplemented
    if probe_answer(state, torch._C._len_torch_dispatch_stack, ()).constant():
        raise GraphBreak("unsupported_call", "reading the stack of active TorchDispatchModes (one is active)")
    return const([])


def _register(name, handler, fns):
    rule = CallRule(name, Meaning.LOOKASIDE, handler)
    for fn in fns:
        if fn is not None:
            register_callable(fn, KNOWN_CALLABLE, rule)


_register("usage logging", _logged, [torch._C._log_api_usage_once,
                                     getattr(torch._C, "_log_api_usage_metadata", None)])
_register("process-state probe", _guarded, [
    torch._C._len_torch_dispatch_stack,
    torch._C._len_torch_function_stack,
    torch._C._get_tracing_state,
    torch._C._is_torch_function_enabled,
    getattr(torch._C, "_is_torch_function_mode_enabled", None),
    getattr(torch._C, "_is_any_autocast_enabled", None),
    torch._C._get_cublas_allow_tf32,
    torch.autograd._profiler_enabled,
    torch.autograd._is_checkpoint_valid,
])
_register("fixed for the process", _fixed, [torch.cuda.is_available, torch.backends.mps.is_available,
                                           torch.backends.cudnn.is_available, torch.distributed.is_available])
_register("make_fx tracing", _make_fx_tracing, [getattr(torch.nn.modules.activation, "_is_make_fx_tracing", None)])
_register("dispatch-mode stack", _dispatch_mode_stack,
          [getattr(torch.utils._python_dispatch, "_get_current_dispatch_mode_stack", None)])
