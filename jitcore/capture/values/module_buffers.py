"""`self.register_buffer(name, tensor, persistent)` inside the captured code, on a module that existed before the
call: a side effect like an attribute write. Later reads of `self.name` in the call see the tensor, and the entry
registers it on the real module after the graph runs (replaying the real method, so `state_dict` and the
non-persistent set are torch's own). Modelled only where the call cannot fail: a plain name the module does not
have yet (guarded absent), a tensor or None; anything else is traced as before (and breaks)."""
from __future__ import annotations

import torch

from jitcore.capture.values.call_rules import KNOWN_CALLABLE, CallRule, Meaning, register_callable
from jitcore.capture.values.constant import const
from jitcore.capture.values.module import ModuleValue

__all__: list[str] = []

_NAMES = ("name", "tensor", "persistent")


def _register_buffer(state, fn, args, kwargs):
    if not args or type(args[0]) is not ModuleValue or args[0].source is None or len(args) > 4:
        return NotImplemented
    owner, given = args[0], dict(zip(_NAMES, args[1:]))
    if set(kwargs) - set(_NAMES) or set(kwargs) & set(given):
        return NotImplemented
    given.update(kwargs)
    name = given["name"].constant() if "name" in given else None
    persistent = given["persistent"].constant() if "persistent" in given else True
    tensor = given.get("tensor")
    real = owner.module
    if type(name) is not str or not name.isidentifier() or type(persistent) is not bool or tensor is None:
        return NotImplemented
    if not (tensor.is_tensor() or tensor.constant() is None):
        return NotImplemented
    if torch.nn.modules.module._global_buffer_registration_hooks or "_buffers" not in real.__dict__:
        return NotImplemented
    if state.ctx.side_effects.load_attr(real, name) is not None or owner.has_attr(state, name):
        return NotImplemented  # replacing a buffer or clashing with an attribute: traced as written
    state.ctx.side_effects.register_buffer(owner, real, name, tensor, persistent)
    return const(None)


register_callable(torch.nn.Module.register_buffer, KNOWN_CALLABLE,
                  CallRule("nn.Module.register_buffer", Meaning.LOOKASIDE, _register_buffer))
