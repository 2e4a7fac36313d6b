"""`nn.Module.to(...)` and its shorthands (`float()`, `double()`, `half()`, `bfloat16()`, `cpu()`) traced where
they change nothing: Note [A module conversion that changes nothing].

Entry point: the call rules registered at import. Imports value kinds only; the conversion that does change a tensor
is a graph break at the call, which then runs in Python.
"""
from __future__ import annotations

import torch

from jitcore.guards import NoneMatch, ProbeMatch
from jitcore.capture.breaks import GraphBreak
from jitcore.capture.sources import AttrSource
from jitcore.capture.values.base import NOT_CONSTANT
from jitcore.capture.values.call_rules import CallRule, Meaning, KNOWN_CALLABLE, register_callable
from jitcore.capture.values.wrapping import wrap

__all__ = []

# Note [A module conversion that changes nothing]
# `self.classifier = self.classifier.to(self.dtype)` inside forward (transformers' routers keep their classifier in
# float32 this way) converts nothing once the module is in that dtype: `Module._apply` calls `t.to(...)` on every
# parameter, buffer and gradient, each returns the tensor itself, `param.data = param` and `_buffers[k] = buf`
# store what is there, and the module comes back. Tracing `_apply` meets `param.grad` and `param.data =` (a graph
# break inside torch's code, so the whole call ran in Python between two graphs). The rule decides it from what the
# module holds: every parameter and buffer of the module tree is read through the module as the trace reads it
# (a graph input with its dtype and device guarded, dropped from the graph when unused), each gradient likewise (or
# guarded None), and torch.__future__'s two conversion flags (which make `_apply` put new Parameter objects in place, or swap
# them, even for a no-op) are guarded off. When every tensor already has the target dtype and device, the call is
# the module itself and nothing else. Anything else (a tensor or gradient to convert, a tensor subclass, a
# memory format, a device given without its index, which depends on the current device, an argument that is not a
# constant) is a graph break at the call, which runs it in Python.

_FUTURE_FLAGS = (torch.__future__.get_overwrite_module_params_on_conversion,
                 torch.__future__.get_swap_module_params_on_conversion)
_PLAIN_TENSORS = (torch.Tensor, torch.nn.Parameter)


def _changes(reason: str) -> GraphBreak:
    return GraphBreak("side_effect", f"nn.Module conversion that changes the module ({reason})")


def _constants(args, kwargs) -> tuple:
    values = [arg.constant() for arg in args]
    keywords = {name: value.constant() for name, value in kwargs.items()}
    if any(value is NOT_CONSTANT for value in [*values, *keywords.values()]):
        raise _changes("an argument that is not a Python constant")
    return values, keywords


def _target_of_to(args, kwargs) -> tuple:
    """(device or None, dtype or None, applies_to) as Module.to parses its arguments."""
    values, keywords = _constants(args, kwargs)
    try:
        device, dtype, _, memory_format = torch._C._nn._parse_to(*values, **keywords)
    except (TypeError, RuntimeError) as exc:
        raise GraphBreak.raises(type(exc), str(exc)) from None
    if memory_format is not None:
        raise _changes("a memory format")
    if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
        raise GraphBreak.raises(TypeError, "nn.Module.to only accepts floating point or complex dtypes, but got "
                                           f"desired dtype={dtype}")
    if dtype is not None and dtype.is_complex:
        raise _changes("a complex dtype, which Module.to warns about")
    return device, dtype, lambda fake: fake.is_floating_point() or fake.is_complex()


def _shorthand(dtype, device=None):
    """The target of a method without arguments: a dtype for floating tensors (`float()`), or a device (`cpu()`)."""
    def target(args, kwargs):
        if args or kwargs:
            raise _changes("arguments to a shorthand")
        return device, dtype, lambda fake: fake.is_floating_point()
    return target


def _tensors(state, module_value, seen: set):
    """(tensor value, the parameter or None for a buffer) for every parameter and buffer of the module tree, read through the modules'
    values as the trace reads attributes (guarded like any read)."""
    module = module_value.module
    if id(module) in seen:
        return
    seen.add(id(module))
    for child in module._modules.values():
        if child is not None:
            found = module_value.getattr(state, _name_in(module._modules, child))
            if found.identity() is not child:
                raise _changes("a submodule replaced during the call")
            yield from _tensors(state, found, seen)
    for table, parameters in ((module._parameters, True), (module._buffers, False)):
        for name, tensor in table.items():
            if tensor is None:
                continue
            if type(tensor) not in _PLAIN_TENSORS:
                raise _changes(f"a {type(tensor).__name__} tensor")
            found = module_value.getattr(state, name)
            if not found.is_tensor():
                raise _changes(f"{name} replaced during the call")
            yield found, tensor if parameters else None


def _name_in(table: dict, obj) -> str:
    return next(name for name, item in table.items() if item is obj)


def _same(fake, device, dtype, applies_to) -> bool:
    if dtype is not None and applies_to(fake) and fake.dtype != dtype:
        return False
    return device is None or fake.device == device


def _check_gradient(state, grad, source, device, dtype, applies_to) -> None:
    """A parameter's gradient is converted like the parameter: guarded None, or read as a graph input (its dtype
    and device guarded, dropped from the graph when unused) that must need no conversion either."""
    if grad is None:
        state.ctx.guard(source, NoneMatch())
        return
    if type(grad) is not torch.Tensor:
        raise _changes(f"a {type(grad).__name__} gradient")
    value = wrap(state, grad, source)
    if not _same(value.fake, device, dtype, applies_to):
        raise _changes(f"{source.user_name} is {value.fake.dtype} on {value.fake.device}")


def _conversion(target):
    def handler(state, fn, args, kwargs):
        if not args or not isinstance(args[0].identity(), torch.nn.Module) or args[0].source is None:
            return NotImplemented  # not a module jitcore can reload (one made inside): traced as torch runs it
        module_value = args[0]
        device, dtype, applies_to = target(args[1:], kwargs)
        if device is not None and device.type != "cpu" and device.index is None:
            raise _changes(f"device {device} without an index")
        ctx = state.ctx
        for flag in _FUTURE_FLAGS:
            if flag():
                raise _changes(f"torch.__future__.{flag.__name__}() is on")
            ctx.guard(None, ProbeMatch(flag, (), False, f"torch.__future__.{flag.__name__}()"))
        for value, parameter in _tensors(state, module_value, set()):
            if not _same(value.fake, device, dtype, applies_to):
                raise _changes(f"{value.source.user_name} is {value.fake.dtype} on {value.fake.device}")
            if parameter is not None:
                _check_gradient(state, parameter.grad, AttrSource(value.source, "grad"), device, dtype, applies_to)
        return module_value
    return handler


register_callable(torch.nn.Module.to, KNOWN_CALLABLE,
                  CallRule("nn.Module.to", Meaning.LOOKASIDE, _conversion(_target_of_to)))
for _name, _dtype, _device in (("float", torch.float32, None), ("double", torch.float64, None),
                               ("half", torch.float16, None), ("bfloat16", torch.bfloat16, None),
                               ("cpu", None, torch.device("cpu"))):
    register_callable(getattr(torch.nn.Module, _name), KNOWN_CALLABLE,
                      CallRule(f"nn.Module.{_name}", Meaning.LOOKASIDE, _conversion(_shorthand(_dtype, _device))))
