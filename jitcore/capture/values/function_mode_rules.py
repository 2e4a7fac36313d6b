"""The call rules of TorchFunctionModes in traced code: entering and leaving one (capture's own mode stack),
handle_torch_function, and the property getters a mode is handed (Note [Torch function modes traced],
values/function_modes.py). Imports capture's breaks and values; registered when values/__init__ imports it.
"""
from __future__ import annotations

import types

import torch
import torch.overrides

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.call_rules import CallRule, Meaning, KNOWN_CALLABLE, register_callable, register_predicate
from jitcore.capture.values.constant import const
from jitcore.capture.values.function_modes import ModeEntry, dispatch, is_mode

_MODE = torch.overrides.TorchFunctionMode


def _enter(state, fn, args, kwargs):
    """TorchFunctionMode.__enter__: the mode goes on capture's stack; it returns the mode."""
    if len(args) != 1 or kwargs or not is_mode(args[0]):
        return NotImplemented
    state.ctx.function_modes.append(ModeEntry(state, args[0]))
    return args[0]


def _exit(state, fn, args, kwargs):
    """TorchFunctionMode.__exit__: pops the innermost mode, whichever it is (torch's _pop_mode does too)."""
    modes = state.ctx.function_modes
    if not modes:
        raise GraphBreak("torch_function_mode", "leaving a TorchFunctionMode entered outside the traced code")
    modes.pop()
    return const(None)


def _handle_torch_function(state, fn, args, kwargs):
    """torch.overrides.handle_torch_function(public_api, relevant_args, *args, **kwargs), reached only when
    has_torch_function said True: a traced mode is active (tensor subclasses break before)."""
    if len(args) < 2 or not state.ctx.function_modes:
        return NotImplemented
    result = dispatch(state, args[0].identity(), args[2:], kwargs)
    if result is None:
        return NotImplemented
    return result


def _is_property_get(fn) -> bool:
    owner = getattr(fn, "__self__", None)
    return (type(fn) is types.MethodWrapperType and type(owner) is types.GetSetDescriptorType
            and owner.__objclass__ is torch._C.TensorBase and fn.__name__ == "__get__")


def _property_get(state, fn, args, kwargs):
    """`Tensor.<name>.__get__(x)`, as a mode calls the func it was handed for `x.<name>`: the attribute read."""
    if len(args) != 1 or kwargs or not args[0].is_tensor():
        return NotImplemented
    return args[0].getattr(state, fn.__self__.__name__)


register_callable(_MODE.__enter__, KNOWN_CALLABLE, CallRule("TorchFunctionMode.__enter__", Meaning.LOOKASIDE, _enter))
register_callable(_MODE.__exit__, KNOWN_CALLABLE, CallRule("TorchFunctionMode.__exit__", Meaning.LOOKASIDE, _exit))
register_callable(torch.overrides.handle_torch_function, KNOWN_CALLABLE,
                  CallRule("handle_torch_function", Meaning.LOOKASIDE, _handle_torch_function))
register_predicate(KNOWN_CALLABLE, _is_property_get,
                   CallRule("tensor property getter", Meaning.LOOKASIDE, _property_get))
