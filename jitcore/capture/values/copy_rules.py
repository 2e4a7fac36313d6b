"""copy.deepcopy while tracing: its Python is traced (values/object_id.py answers its `id()` memo), except for an
object that holds tensors, whose copy is one graph break at the outermost call.

A tensor's `__deepcopy__` reads storages and data pointers, which fake tensors do not have, so a tensor copy cannot
be traced; breaking inside deepcopy's recursion instead would hand the memo (a dict keyed by the ids of objects made
in that call) to resume functions, whose guards on those keys fail on every call. Breaking at the outermost call
runs the whole copy in Python once per call, as eager does.
"""
from __future__ import annotations

import copy

import torch

from jitcore.guards.tree import Held
from jitcore.capture.breaks import GraphBreak
from jitcore.capture.sources import HeldSource
from jitcore.capture.values.call_rules import CallRule, Meaning, KNOWN_CALLABLE, register_callable

__all__ = []

_DEEPCOPY = HeldSource(Held(copy.deepcopy), "copy.deepcopy")

#: objects looked at before giving up and assuming a tensor is inside (the copy then runs in Python)
_BUDGET = 5000


def _real_holds_tensor(obj, seen: set) -> bool:
    stack = [obj]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if len(seen) > _BUDGET or isinstance(item, (torch.Tensor, torch.nn.Module)):
            return True
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(item)
        elif type(getattr(item, "__dict__", None)) is dict and not isinstance(item, type):
            stack.extend(vars(item).values())
    return False


def _holds_tensor(value, seen: set, real_seen: set) -> bool:
    stack = [value]
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if len(seen) > _BUDGET or v.is_tensor():
            return True
        real = v.identity()
        if real is not None:
            if _real_holds_tensor(real, real_seen):
                return True
            continue  # what it holds is the real object's (read through it, with the writes of the call)
        stack.extend(v.children())
    return False


def _deepcopy(state, fn, args, kwargs):
    outermost = len(args) == 1 and not kwargs
    if outermost and _holds_tensor(args[0], set(), set()):
        raise GraphBreak("unsupported_call", "copy.deepcopy of an object that holds tensors (it runs in Python)")
    # held by the entry, so its defaults (the `_nil=[]` sentinel) are reloaded from it rather than rebuilt
    return state.inline_call(copy.deepcopy, list(args), dict(kwargs), fn_source=_DEEPCOPY)


register_callable(copy.deepcopy, KNOWN_CALLABLE, CallRule("copy.deepcopy", Meaning.LOOKASIDE, _deepcopy))
