"""Distributed wrappers: DDP's forward and FSDP2's hooks run natively, the forward they wrap runs compiled.

`DistributedDataParallel.forward` is bookkeeping (the reducer's prepare_for_forward, buffer broadcasts, the
unused-parameter search, `no_sync()`), and FSDP2's forward pre/post hooks all-gather and free parameters: both must
run exactly as torch runs them. So jitcore never traces them: it runs the wrapper's own `__call__` natively and
compiles only the user's forward underneath (as Dynamo does; Note [Wrappers share state]).

- `compile_ddp(ddp, make_forward)`: a DDP module sharing `ddp`'s state whose `self.module` is the wrapped module
  with a compiled forward; DDP.forward runs natively and calls it inside `_inside_ddp_forward`, where captured
  graphs are split at DDP's buckets (runtime/ddp_split.py).
- `with_forward(module, forward)`: `module` with another forward, sharing its state (hooks included).
- `wrapper_call(kind, make_forward)`: what a graph break runs for a call of a DDP or FSDP-managed module met while
  tracing (capture's `WrapperCall` markers).
`make_forward(fn)` returns the compiled copy of a forward function to use.
"""
from __future__ import annotations

import sys
import types
import weakref

import torch

from jitcore.runtime.prologue import FALLTHROUGH

__all__ = ["is_ddp", "is_fsdp_managed", "compile_ddp", "with_forward", "wrapper_call", "inner_module"]

# Note [Wrappers share state]
# The module a wrapper call runs is a new object of a subclass of the module's class that shares the module's
# __dict__ (parameters, buffers, hooks, DDP's reducer and flags, FSDP's state): every change either side makes is
# the other's, `no_sync()` on the user's DDP object included. Only its class differs: its forward is the compiled
# copy, and for DDP its `module` attribute is the wrapped module with a compiled forward. Hooks receive this object
# as their module argument; FSDP2 and DDP find their state through closures and the shared dict, never by the
# module's identity. The objects are cached per module and forward (weakly), so that a call makes none.

#: module -> {forward: the module with that forward}; the wrapper holds the module's dict, not the module
_WITH_FORWARD: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
#: (class, forward) -> subclass whose forward is `forward`
_SUBCLASSES: dict = {}


def is_ddp(module) -> bool:
    return isinstance(module, torch.nn.parallel.DistributedDataParallel)


def is_fsdp_managed(module) -> bool:
    """A module `fully_shard` was applied to (FSDP2). FSDP is not imported for this: no module can be one before."""
    fsdp = sys.modules.get("torch.distributed.fsdp")
    fsdp_module = getattr(fsdp, "FSDPModule", None)
    return fsdp_module is not None and isinstance(module, fsdp_module)


def inner_module(ddp):
    """The module DDP wraps (its `module` child)."""
    return ddp._modules["module"]


def _plain_forward(module):
    """The forward function of module's class, or None when it is not to be compiled here: set on the instance,
    not Python code, or already running jitcore's dispatch prologue (an enabled() block or JITCORE=1 swapped it in:
    calling the module natively reaches that prologue, which compiles it)."""
    if "forward" in module.__dict__:
        return None
    forward = getattr(type(module), "forward", None)
    if not isinstance(forward, types.FunctionType) or any(c is FALLTHROUGH for c in forward.__code__.co_consts):
        return None
    return forward


def _subclass(cls, forward, extra: dict | None = None):
    key = (cls, forward, tuple(sorted((extra or {}).items(), key=lambda kv: kv[0])) if extra else ())
    found = _SUBCLASSES.get(key)
    if found is None:
        # the class's own name: reprs, hooks and code printing type(m).__name__ see no difference
        found = _SUBCLASSES[key] = type(cls.__name__, (cls,), {"forward": forward, "__module__": cls.__module__,
                                                               "__qualname__": cls.__qualname__, **(extra or {})})
    return found


def shared_state_module(module, cls):
    """A `cls` object sharing module's state (Note [Wrappers share state])."""
    wrapper = object.__new__(cls)
    object.__setattr__(wrapper, "__dict__", module.__dict__)
    return wrapper


def with_forward(module, forward):
    """module, running `forward` as its forward (Note [Wrappers share state])."""
    per_module = _WITH_FORWARD.get(module)
    if per_module is None:
        per_module = _WITH_FORWARD[module] = {}
    found = per_module.get(forward)
    if found is None:
        found = per_module[forward] = shared_state_module(module, _subclass(type(module), forward))
    return found


class _DDPCompiled:
    """Mixin of a DDP subclass whose `module` is the wrapped module with a compiled forward."""

    _jitcore_inner = None

    def __getattr__(self, name):
        if name == "module":
            return self._jitcore_inner
        return super().__getattr__(name)


def compile_ddp(ddp, make_forward, extra_bases: tuple = (), extra: dict | None = None):
    """A DDP object sharing `ddp`'s state whose forward (DDP's own, run natively) calls the wrapped module with
    its forward compiled by `make_forward`. A wrapped module whose forward cannot be compiled runs as it is."""
    inner = inner_module(ddp)
    forward = _plain_forward(inner)
    compiled_inner = with_forward(inner, make_forward(forward)) if forward is not None else inner
    attrs = {"_jitcore_inner": compiled_inner, "__module__": type(ddp).__module__,
             "__qualname__": type(ddp).__qualname__, **(extra or {})}
    cls = type(type(ddp).__name__, (*extra_bases, _DDPCompiled, type(ddp)), attrs)
    return shared_state_module(ddp, cls)


#: module -> {make_forward: the object a wrapper call runs for it}, for calls at graph breaks
_WRAPPER_CALLS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def wrapper_call(kind: str, make_forward):
    """The function a graph break calls as `f(module, *args, **kwargs)` for a call of a distributed wrapper
    module: its own __call__ runs natively (DDP's forward, FSDP's hooks), the forward underneath runs compiled.

    `make_forward(fn)` makes a new compiled copy of fn; each module gets copies of its own, so that every FSDP block
    (blocks share their class's forward) has a cache of its own and its own cache limit, compiled once."""
    def runner(module):
        per_module = _WRAPPER_CALLS.get(module)
        if per_module is None:
            per_module = _WRAPPER_CALLS[module] = {}
        found = per_module.get(make_forward)
        if found is None:
            if kind == "ddp":
                found = compile_ddp(module, make_forward)
            else:
                forward = _plain_forward(module)
                found = with_forward(module, make_forward(forward)) if forward is not None else module
            per_module[make_forward] = found
        return found

    def call(module, *args, **kwargs):
        return runner(module)(*args, **kwargs)
    return call


def clear() -> None:
    """Forget the wrapper objects made for calls at graph breaks (jitcore.reset())."""
    _WRAPPER_CALLS.clear()
