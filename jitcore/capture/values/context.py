"""Context managers that become regions of the graph: torch.no_grad / enable_grad / set_grad_enabled, autocast.

Entering one records a node that switches the state inside the graph, and switches the real state while tracing so
that fake propagation sees what eager would (requires_grad of results, autocast dtypes). The capture context undoes
the real switch if capture stops inside the region.
"""
from __future__ import annotations

import torch

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.base import Value
from jitcore.capture.values.call_rules import KNOWN_CALLABLE, CallRule, Meaning, register_callable
from jitcore.capture.values.constant import const
from jitcore.capture.values.tensor import graph_call_side_effect

__all__ = ["GradModeValue", "AutocastValue", "InferenceModeValue", "ExitValue", "context_for", "REGION_CLASSES"]

_AUTOCAST_CLASSES = tuple(dict.fromkeys(c for c in (torch.autocast, torch.amp.autocast,
                                                    getattr(torch.cpu.amp, "autocast", None),
                                                    getattr(torch.cuda.amp, "autocast", None)) if c is not None))
#: the classes `context_for` models
REGION_CLASSES = (torch.no_grad, torch.enable_grad, torch.set_grad_enabled, torch.inference_mode, *_AUTOCAST_CLASSES)


class _RegionValue(Value):
    """A context manager object made inside the captured code; `enter` returns (exit callable, enter result)."""

    __slots__ = ()
    #: reconstruct_exit(codegen) rebuilds the real __exit__ for a resume function inside the region
    exit_rebuildable = False


class GradModeValue(_RegionValue):
    """torch.no_grad() / enable_grad() switch on entering; torch.set_grad_enabled(mode) switches when made
    (it also works as a plain function call), and entering it changes nothing more."""

    __slots__ = ("enabled", "cls", "previous")
    exit_rebuildable = True

    def __init__(self, enabled: bool, cls, previous=None):
        super().__init__(None)
        self.enabled = enabled
        self.cls = cls
        #: grad mode before the switch (set when the switch happens)
        self.previous = previous

    def python_type(self):
        return self.cls

    def enter(self, state):
        if self.previous is None:
            self.previous = torch.is_grad_enabled()
            _set_grad(state, self.enabled)
        previous = self.previous
        return ExitValue(lambda st: _set_grad(st, previous), self), const(None)

    def call(self, state, args, kwargs):
        """`@torch.no_grad()` used as a decorator inside the function: not modelled."""
        raise GraphBreak("unsupported_call", "using a grad-mode object as a decorator inside the function")

    def reconstruct_exit(self, codegen) -> str:
        """The real `__exit__` a resume function needs when a break falls inside this region."""
        maker = codegen.constant_object(_grad_mode_exit, "grad_exit")
        return f"{maker}({codegen.constant_object(self.cls, 'cls')}, {self.previous!r})"


def _grad_mode_exit(cls, previous: bool):
    """A real grad-mode object whose __exit__ restores `previous` (torch's grad-mode classes keep it in .prev)."""
    obj = object.__new__(cls)
    obj.prev = previous
    return obj.__exit__


def _set_grad(state, enabled: bool):
    graph_call_side_effect(state, torch._C._set_grad_enabled, (enabled,))
    torch._C._set_grad_enabled(enabled)


def _set_grad_enabled_call(state, fn, args, kwargs):
    """torch._C._set_grad_enabled(mode) called by traced code: enable_grad's own __enter__/__exit__ call it, and a
    resume function inside such a region runs the real __exit__. Recorded as entering a region records it."""
    mode = args[0].constant() if len(args) == 1 and not kwargs else None
    if type(mode) is not bool:
        return NotImplemented
    _set_grad(state, mode)
    return const(None)


register_callable(torch._C._set_grad_enabled, KNOWN_CALLABLE,
                  CallRule("torch._C._set_grad_enabled", Meaning.LOOKASIDE, _set_grad_enabled_call))


class AutocastValue(_RegionValue):
    __slots__ = ("device_type", "dtype", "enabled", "cache_enabled")

    def __init__(self, device_type, dtype, enabled, cache_enabled):
        super().__init__(None)
        self.device_type = device_type
        self.dtype = dtype
        self.enabled = enabled
        self.cache_enabled = cache_enabled

    def python_type(self):
        return torch.autocast

    def enter(self, state):
        args = (self.device_type, self.dtype, self.enabled, self.cache_enabled)
        node = graph_call_side_effect(state, torch.amp.autocast_mode._enter_autocast, args)
        real = torch.amp.autocast_mode._enter_autocast(*args)
        state.ctx.push_cleanup(lambda: torch.amp.autocast_mode._exit_autocast(real))

        def leave(st):
            graph_call_side_effect(st, torch.amp.autocast_mode._exit_autocast, (node,))
            torch.amp.autocast_mode._exit_autocast(real)
            st.ctx.pop_cleanup()
        return ExitValue(leave, self), const(None)


class InferenceModeValue(_RegionValue):
    """`with torch.inference_mode(mode):` inside the function: entered and left by graph nodes
    (grad_mode._enter_inference_mode / _exit_inference_mode, as Dynamo records them). While tracing, fake tensors
    never become inference tensors (FakeTensorMode does not model them, as Dynamo keeps it off): entering mode
    True switches grad off for real instead, which is what fake propagation needs (no requires_grad results).
    The mode outside is guarded global state."""

    __slots__ = ("mode",)

    def __init__(self, mode: bool):
        super().__init__(None)
        self.mode = mode

    def python_type(self):
        return torch.inference_mode

    def enter(self, state):
        grad_mode = torch.autograd.grad_mode
        node = graph_call_side_effect(state, grad_mode._enter_inference_mode, (self.mode,))
        previous = torch.is_grad_enabled()
        if self.mode:
            state.ctx.entered_inference_mode = True
            torch._C._set_grad_enabled(False)
            undo = lambda: torch._C._set_grad_enabled(previous)  # noqa: E731
        else:
            real = grad_mode._enter_inference_mode(False)
            undo = lambda: grad_mode._exit_inference_mode(real)  # noqa: E731
        state.ctx.push_cleanup(undo)

        def leave(st):
            graph_call_side_effect(st, grad_mode._exit_inference_mode, (node,))
            undo()
            st.ctx.pop_cleanup()
        return ExitValue(leave, self), const(None)

    def call(self, state, args, kwargs):
        raise GraphBreak("unsupported_call", "using torch.inference_mode as a decorator inside the function")


class ExitValue(Value):
    """The bound __exit__ that BEFORE_WITH leaves on the stack; calling it closes the region."""

    __slots__ = ("leave", "done", "region")

    def __init__(self, leave, region=None):
        super().__init__(None)
        self.leave = leave
        self.done = False
        self.region = region

    def is_rebuildable_exit(self):
        return self.region is not None and self.region.exit_rebuildable

    def reconstruct(self, codegen):
        if not self.is_rebuildable_exit() or self.done:
            raise GraphBreak("unsupported_output", "a with-block that jitcore cannot re-enter after a break")
        return self.region.reconstruct_exit(codegen)

    def call(self, state, args, kwargs):
        """Closing the region: on the normal path and on the exception path (WITH_EXCEPT_START), where the
        state is restored as the real __exit__ restores it; it returns None, so the exception goes on."""
        if not self.done:
            self.done = True
            self.leave(state)
        return const(None)


def context_for(state, cls, args, kwargs):
    """The region value for `cls(*args, **kwargs)`, or None when cls is not a modelled context manager."""
    if cls is torch.no_grad and not args and not kwargs:
        return GradModeValue(False, cls)
    if cls is torch.enable_grad and not args and not kwargs:
        return GradModeValue(True, cls)
    if cls is torch.set_grad_enabled and len(args) == 1 and not kwargs:
        mode = args[0].constant()
        if type(mode) is not bool:
            raise GraphBreak("unsupported_value", "torch.set_grad_enabled with a non-constant mode")
        previous = torch.is_grad_enabled()
        _set_grad(state, mode)
        return GradModeValue(mode, cls, previous)
    if cls in _AUTOCAST_CLASSES:
        return _autocast(state, cls, args, kwargs)
    if cls is torch.inference_mode and len(args) + len(kwargs) <= 1 and set(kwargs) <= {"mode"}:
        mode = (args[0] if args else kwargs["mode"]).constant() if args or kwargs else True
        if type(mode) is not bool:
            raise GraphBreak("unsupported_value", "torch.inference_mode with a non-constant mode")
        return InferenceModeValue(mode)
    return None


def _autocast(state, cls, args, kwargs):
    names = ["device_type", "dtype", "enabled", "cache_enabled"]
    if cls is not torch.autocast and cls is not torch.amp.autocast:
        names = names[1:]
    values = dict(zip(names, args))
    values.update(kwargs)
    consts = {k: v.constant() for k, v in values.items()}
    device_type = consts.get("device_type", "cuda" if cls is getattr(torch.cuda.amp, "autocast", None) else "cpu")
    if not isinstance(device_type, str):
        raise GraphBreak("unsupported_value", "torch.autocast with a non-constant device_type")
    dtype = consts.get("dtype") or torch.get_autocast_dtype(device_type)
    enabled = consts.get("enabled", True)
    cache_enabled = consts.get("cache_enabled", None)
    if cache_enabled is None:
        cache_enabled = torch.is_autocast_cache_enabled()
    return AutocastValue(device_type, dtype, enabled, cache_enabled)
