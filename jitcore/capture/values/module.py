"""torch.nn.Module instances: parameters and buffers become graph inputs, calls inline `forward` (through the
class's own `__call__` where it overrides nn.Module's).

A module is guarded by identity, or, on a path the recompile policy made structural, by type and structure
(`structural_module`, Note [Instances shared by structure]); what the graph reads from it (a constant attribute, a
parameter, `training`) is guarded on its own source. Parameters, buffers and submodules are read from the module's
dicts directly.
"""
from __future__ import annotations

import copy
import functools
import sys
import types

import torch
from torch.nn.modules import container as _containers
from torch.nn.modules import module as _module_impl

from jitcore.guards import DictKeysMatch, HasAttrMatch, InstanceDictAbsent, LengthMatch, TypeMatch
from jitcore.capture.breaks import GraphBreak
from jitcore.capture.side_effects import DELETED
from jitcore.capture.sources import AttrSource, ItemSource, ModuleDictSource
from jitcore.capture.values.base import Value, MethodCallValue, NOT_CONSTANT
from jitcore.capture.values.call_rules import KNOWN_CALLABLE, CallRule, Meaning, register_callable
from jitcore.capture.values.constant import const
from jitcore.capture.values.function import UserFunctionValue, UserMethodValue
from jitcore.capture.values.mapping import DictValue
from jitcore.capture.values.objects import ClassValue
from jitcore.capture.values.partial import PartialValue
from jitcore.capture.values.sequence import ListValue, TupleValue
from jitcore.capture.values.user_object import _MISSING, _class_attribute, relied_class_lookup
from jitcore.capture.values.wrapping import wrap

__all__ = ["ModuleValue", "NewModuleValue", "new_module_argument", "NOT_REAL", "check_stateless", "WrapperCall",
           "DDP_CALL", "FSDP_CALL", "structural_module", "plain_forward"]

_HOOK_DICTS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")
_GLOBAL_HOOKS = ("_global_forward_hooks", "_global_forward_pre_hooks", "_global_backward_hooks",
                 "_global_backward_pre_hooks")
_CONTAINERS = (torch.nn.Sequential, torch.nn.ModuleList, torch.nn.ModuleDict)
#: what calling a module runs unless its class defines a `__call__` of its own
_MODULE_CALL = torch.nn.Module.__dict__["__call__"]
#: what `super().__call__` in a module class reaches: nn.Module's call, hooks then forward
_MODULE_CALLS = frozenset({_MODULE_CALL, torch.nn.Module._call_impl})
_PARAM_CONTAINERS = (torch.nn.ParameterList, torch.nn.ParameterDict)


class WrapperCall:
    """What a graph break calls for a DDP or FSDP-managed module: the module's own __call__, run natively, with the
    forward underneath compiled (the runtime turns this marker into that function: runtime/distributed.py)."""

    def __init__(self, kind: str):
        self.kind = kind

    def __repr__(self):
        return f"WrapperCall({self.kind!r})"


DDP_CALL = WrapperCall("ddp")
FSDP_CALL = WrapperCall("fsdp")


def _hooked(module) -> bool:
    """Has the module (or torch.nn globally) hooks that calling it runs around its forward?"""
    d = module.__dict__
    return any(d.get(name) for name in _HOOK_DICTS) or any(getattr(_module_impl, name, None)
                                                           for name in _GLOBAL_HOOKS)


def plain_forward(module):
    """The class's forward when calling `module` runs only that (no hooks, no forward or __call__ of its own, not
    a distributed wrapper), else None: such a call may run the forward's compiled copy instead."""
    cls = type(module)
    forward = _class_lookup(cls, "forward")
    if not isinstance(forward, types.FunctionType) or "forward" in module.__dict__ or _hooked(module) \
            or _class_lookup(cls, "__call__") is not _MODULE_CALL or _wrapper_kind(module) is not None:
        return None
    return forward


def own_call(module):
    """The `__call__` the module's class defines itself (transformers' GradientCheckpointingLayer), where it is a
    plain function and the module is no distributed wrapper, else None: a call of such a module may run that
    function's compiled copy, whose `super().__call__` reaches forward (`ModuleValue.bound_callee`)."""
    call = _class_lookup(type(module), "__call__")
    if call is _MODULE_CALL or not isinstance(call, types.FunctionType) or _wrapper_kind(module) is not None:
        return None
    return call


def _wrapper_kind(module):
    """DDP_CALL / FSDP_CALL for a module whose own call must run natively (Note [Distributed modules]), else None."""
    if isinstance(module, torch.nn.parallel.DistributedDataParallel):
        return DDP_CALL
    fsdp = sys.modules.get("torch.distributed.fsdp")
    fsdp_module = getattr(fsdp, "FSDPModule", None)
    if fsdp_module is not None and isinstance(module, fsdp_module):
        return FSDP_CALL
    return None


# Note [Distributed modules]
# DistributedDataParallel.forward (the reducer's bookkeeping, buffer broadcasts, the unused-parameter search) and
# FSDP2's forward hooks (all-gather, reshard, the backward hooks they register) must run as torch runs them. A
# call of such a module is a graph break, and the break runs the module's own __call__ natively with the forward
# underneath compiled as a frame of its own (WrapperCall), as Dynamo runs them: one graph per FSDP block, and
# under DDP the wrapped module's graph is split at DDP's gradient buckets.


#: where torch's own container modules (Sequential, ModuleList, ModuleDict, ParameterList/Dict) define __len__
_CONTAINERS_MODULE = _containers.__name__


# Note [Instances shared by structure]
# A module guarded by identity gets one cache entry per instance: a break inside a block repeated twelve times
# (a transformer layer) makes twelve entries, and past cache_limit the rest run natively. Like automatic dynamic
# shapes, the recompile policy learns from a miss: when an IdMatch on a module (or a function) failed, its guard
# path becomes *structural* (runtime/policy.py `_learn_structural`), and so does a live local or stack value of a
# resume function that the frame before the break made itself or already held by structure
# (runtime/break_wiring.py), so an object made by each call (`loss_fct = nn.CrossEntropyLoss()`, a lambda) is never
# guarded by identity. Where the frame can tell that other instances will come, it does not wait for the miss: a
# call that a break runs natively, on a receiver held by structure or read from a module that holds another module
# of its type (`repeated`: the blocks of a Sequential), gets its forward's compiled copy capturing the receiver by
# structure from its first call (capture/continuation.py `_shared_receiver`), as torch.compile's inlined modules
# do: one entry per code for a block repeated twelve times. A module called alone stays by identity (batched,
# pinned: the cheapest hit). Capture then wraps the object on a structural path, and everything read through it,
# by structure:
# - the module's exact type, the keys of its instance dict (so which attributes live on the instance, not the class,
#   as InstanceDictAbsent did for one object), and, once the trace reads an attribute of it, the keys of
#   `_parameters`, `_buffers` and `_modules` (a module only passed on or called natively is not tied to them);
# - what the trace reads from it on its own source, as before: a hyper-parameter (`self.eps`, `training`) by value,
#   a submodule by structure again, a parameter or buffer by TensorMatch (shape, dtype, requires_grad) as a graph
#   input reloaded on every call (never pinned), hook dicts by length, class lookups on the class;
# - modules, parameters and buffers reached this way are guarded distinct from each other (identity no longer says
#   so), and an object reached twice is one value guarded `is`, as for any input.
# runtime/guard_batch.py leaves these checks alone: it pins objects by identity. A function on a structural path is
# guarded by type and code (values/function.py `structural_function`); its closure cells are read on their sources.


def structural_module(state, module, source):
    """The value of a module captured by structure (Note [Instances shared by structure])."""
    ctx = state.ctx
    ctx.guard(source, TypeMatch(type(module)))
    ctx.guard(AttrSource(source, "__dict__"), DictKeysMatch(tuple(module.__dict__)))
    return ModuleValue(module, source, structural=True)


class ModuleValue(Value):
    __slots__ = ("module", "structural", "repeated", "tables_guarded")

    def __init__(self, module, source=None, structural=False):
        super().__init__(source)
        self.module = module
        #: guarded by structure rather than identity: its instance dict's keys are guarded as a whole
        self.structural = structural
        #: read from a module that holds another module of its type (a block of a stack): a callee copy of its
        #: forward captures it by structure from the first call (Note [Instances shared by structure])
        self.repeated = False
        self.tables_guarded = False

    def python_type(self):
        return type(self.module)

    def identity(self):
        return self.module

    def _child(self, state, dict_name, key, value):
        source = ModuleDictSource(self.source, dict_name, key) if self.source is not None else None
        child = wrap(state, value, source)
        if dict_name == "_modules" and isinstance(child, ModuleValue) and _has_twin(self.module._modules, value):
            child.repeated = True
        return child

    def getattr(self, state, name):
        module = self.module
        if isinstance(module, (torch.nn.ModuleDict, torch.nn.ParameterDict)) and name in ("keys", "values", "items"):
            return MethodCallValue(self, name)
        assigned = state.ctx.side_effects.load_attr(module, name)
        if assigned is DELETED:
            raise GraphBreak.raises(AttributeError, f"'{type(module).__name__}' object has no attribute '{name}'")
        if assigned is not None:
            return assigned
        if name == "__class__":
            return ClassValue(type(module))
        d = module.__dict__
        if self.structural and not self.tables_guarded:
            self._guard_tables(state.ctx)
        for dict_name in ("_parameters", "_buffers", "_modules"):
            table = d.get(dict_name)
            if table is not None and name in table:
                return self._child(state, dict_name, name, table[name])
        if name in d:
            return self._instance_attribute(state, name, d[name])
        self._guard_not_on_instance(state, name)
        state.ctx.guard_class_lookup(type(module), name)
        raw = _class_lookup(type(module), name)
        if raw is None:
            raise GraphBreak.raises(AttributeError, f"'{type(module).__name__}' has no attribute '{name}'")
        return _class_attribute(state, self, type(module), name, raw)

    def _guard_tables(self, ctx):
        """Captured by structure, which names its parameters, buffers and submodules are (where an attribute is
        found) is guarded once an attribute is read: a module the trace only passes on or calls natively (a
        stage's block list, whose own frame reads it) does not tie the entry to its contents."""
        self.tables_guarded = True
        d = self.module.__dict__
        for name in ("_parameters", "_buffers", "_modules"):
            if type(d.get(name)) is dict:
                ctx.guard(AttrSource(self.source, name), DictKeysMatch(tuple(d[name])))

    def setattr(self, state, name, value):
        if self.source is None:
            raise GraphBreak("side_effect", f"setting {self._name()}.{name} on a module jitcore cannot reload")
        if name in ("forward", "training") or name.startswith("_"):
            raise GraphBreak("side_effect", f"setting {self._name()}.{name} changes how the module runs")
        state.ctx.side_effects.store_attr(self, self.module, name, value)

    def delattr(self, state, name):
        """`del self.name` / `delattr(self, name)` of a plain attribute (in the instance dict, or written earlier
        in the call): a side effect replayed as a removal from the instance dict. The facts that make it one are
        guarded: the parameter, buffer and submodule tables' names, nothing of that name on the class, and the
        attribute there. A parameter, buffer or submodule is deleted natively (Module.__delattr__)."""
        module = self.module
        if self.source is None or name in ("forward", "training") or name.startswith("_"):
            return super().delattr(state, name)
        pending = state.ctx.side_effects.load_attr(module, name)
        if pending is DELETED:
            raise GraphBreak.raises(AttributeError, name)
        if pending is None:
            d = module.__dict__
            if name not in d or any(name in d.get(table, ()) for table in ("_parameters", "_buffers", "_modules")):
                return super().delattr(state, name)
            self._guard_tables(state.ctx)
            state.ctx.guard_class_lookup(type(module), name)
            state.ctx.guard(self.source, HasAttrMatch(name, True))
        elif state.ctx.side_effects.is_buffer(module, name):
            return super().delattr(state, name)
        state.ctx.side_effects.delete_attr(self, module, name)

    def _instance_attribute(self, state, name, value):
        return wrap(state, value, AttrSource(self.source, name) if self.source is not None else None)

    def _guard_not_on_instance(self, state, name):
        """What capture found on the class stays so while the instance's own dict lacks the name (`m.forward = g`
        assigned later); batched with the module state. A module captured by structure has its instance dict's keys
        guarded already."""
        if self.structural:
            return
        state.ctx.guard(None, InstanceDictAbsent(self.module, name, f"{self._name()}.{name}"))

    def _name(self):
        return self.source.user_name if self.source is not None else type(self.module).__name__

    def call(self, state, args, kwargs):
        call_impl = _class_lookup(type(self.module), "__call__")
        if call_impl is not _MODULE_CALL:
            # a class that overrides __call__ (to count calls, transform inputs, then `super().__call__`): Python
            # calls that, not nn.Module's, so it is traced; the super call comes back through `module_call`
            state.ctx.guard_class_lookup(type(self.module), "__call__")
            if not isinstance(call_impl, types.FunctionType):
                raise GraphBreak("unsupported_call", f"{type(self.module).__name__}.__call__ is not a Python function")
            return state.inline_call(call_impl, [self, *args], kwargs)
        return self.module_call(state, args, kwargs)

    def module_call(self, state, args, kwargs):
        """What nn.Module.__call__ does: hooks, then forward."""
        module = self.module
        if _wrapper_kind(module) is not None:
            raise GraphBreak("distributed_module", f"{self._name()} ({type(module).__name__})")
        if isinstance(module, torch.nn.RNNBase):
            # its forward keeps the flattened weights behind weak references and hands them to one fused _VF
            # kernel (cuDNN's packed layout on a GPU): run as torch runs it, between two graphs, as torch.compile
            # does (Dynamo's allow_rnn is off by default)
            raise GraphBreak("torch_runtime", f"{self._name()} ({type(module).__name__}.forward, a recurrent layer)")
        if self._has_inlinable_hooks():
            return self._call_with_hooks(state, args, kwargs)
        self.guard_no_hooks(state.ctx)
        return self._call_forward(state, args, kwargs)

    def _call_forward(self, state, args, kwargs):
        module = self.module
        if "forward" in module.__dict__:
            return self.getattr(state, "forward").call(state, args, kwargs)
        self._guard_not_on_instance(state, "forward")
        state.ctx.guard_class_lookup(type(module), "forward")
        forward = _class_lookup(type(module), "forward")
        if forward is None or not hasattr(forward, "__code__"):
            raise GraphBreak("unsupported_call", f"{type(module).__name__}.forward is not a Python function")
        return state.inline_call(forward, [self, *args], kwargs)

    # -- forward hooks, traced like nn.Module._call_impl runs them --------------------------------------------
    def _has_inlinable_hooks(self) -> bool:
        """Forward pre-hooks / forward hooks on a module jitcore can reload, and nothing it does not model
        (backward hooks, always-called hooks, global hooks)."""
        d = self.module.__dict__
        return (self.source is not None and bool(d.get("_forward_pre_hooks") or d.get("_forward_hooks"))
                and not d.get("_backward_hooks") and not d.get("_backward_pre_hooks")
                and not d.get("_forward_hooks_always_called")
                and not any(getattr(_module_impl, name, None) for name in _GLOBAL_HOOKS))

    def _call_with_hooks(self, state, args, kwargs):
        ctx, d = state.ctx, self.module.__dict__
        for name in ("_forward_pre_hooks", "_forward_hooks", "_forward_pre_hooks_with_kwargs",
                     "_forward_hooks_with_kwargs"):
            if name in d:
                ctx.guard(AttrSource(self.source, name), DictKeysMatch(tuple(d[name])))
        for name in ("_backward_hooks", "_backward_pre_hooks", "_forward_hooks_always_called"):
            if name in d:
                ctx.guard(AttrSource(self.source, name), LengthMatch(0))
        ctx.guard_global_module_hooks()

        def hooks(name):
            table = d.get(name) or {}
            return [(hook_id, wrap(state, hook, ItemSource(AttrSource(self.source, name), hook_id)))
                    for hook_id, hook in table.items()]

        args_value, kwargs_value = TupleValue(list(args)), DictValue(dict(kwargs))
        with_kwargs = d.get("_forward_pre_hooks_with_kwargs") or {}
        for hook_id, hook in hooks("_forward_pre_hooks"):
            if hook_id in with_kwargs:
                out = hook.call(state, [self, args_value, kwargs_value], {})
                if out.constant() is not None:
                    pair = out.iterate(state) if out.python_type() is tuple else []
                    if len(pair) != 2:
                        raise GraphBreak.raises(RuntimeError, "forward pre-hook must return None or a "
                                                              "tuple of (new_args, new_kwargs)")
                    args_value, kwargs_value = pair
            else:
                out = hook.call(state, [self, args_value], {})
                if out.constant() is not None:
                    args_value = out if isinstance(out, TupleValue) and out.python_type() is tuple \
                        else TupleValue([out])
        if not isinstance(kwargs_value, DictValue):
            raise GraphBreak("unsupported_value", "forward pre-hook returned kwargs that are not a dict")
        result = self._call_forward(state, args_value.iterate(state), dict(kwargs_value.items))
        with_kwargs = d.get("_forward_hooks_with_kwargs") or {}
        for hook_id, hook in hooks("_forward_hooks"):
            extra = [kwargs_value] if hook_id in with_kwargs else []
            out = hook.call(state, [self, args_value, *extra, result], {})
            if out.constant() is not None:
                result = out
        return result

    def guard_no_hooks(self, ctx):
        """Break if hooks are registered; otherwise guard that they stay absent (forward is inlined without them)."""
        module = self.module
        for name in _HOOK_DICTS:
            hooks = module.__dict__.get(name)
            if hooks:
                raise GraphBreak("hooks", f"{self._name()} has {name.strip('_').replace('_', ' ')}")
            if self.source is not None and hooks is not None:
                ctx.guard(AttrSource(self.source, name), LengthMatch(0))
        for name in _GLOBAL_HOOKS:
            if getattr(_module_impl, name, None):
                raise GraphBreak("hooks", "global module hooks are registered")
        ctx.guard_global_module_hooks()

    def compiled_callee(self, state, compilable):
        """The compiled copy that may run in place of a call of the module a break runs natively: the class's own
        `__call__` where it has one (transformers' GradientCheckpointingLayer), else forward's (`_forward_callee`)."""
        own_call = _class_lookup(type(self.module), "__call__")
        if own_call is _MODULE_CALL or _wrapper_kind(self.module) is not None:
            return self._forward_callee(state, compilable)
        if self.source is None or not isinstance(own_call, types.FunctionType) or not compilable(own_call):
            return None
        # Python calls the override, bound to the module; its `super().__call__(...)` comes back to forward
        # (`bound_callee`), so a break under it leaves both captured
        state.ctx.guard_class_lookup(type(self.module), "__call__")
        return own_call, self

    def bound_callee(self, state, fn, compilable):
        """`nn.Module.__call__` (or `_call_impl`) bound to the module, as an override's `super().__call__` reads it,
        runs hooks then forward: forward's compiled copy stands for it under the same conditions as for a call of
        the module itself."""
        if fn in _MODULE_CALLS:
            return self._forward_callee(state, compilable)
        return super().bound_callee(state, fn, compilable)

    def _forward_callee(self, state, compilable):
        """The compiled copy of the class's forward may run in place of nn.Module's call of it, while the module has
        no hooks (guarded, as for an inlined forward) and no forward of its own."""
        forward = getattr(type(self.module), "forward", None)
        wrapper = _wrapper_kind(self.module)
        if wrapper is not None and self.source is not None:
            # the module's class (hence its kind) is fixed by the identity guard on the module
            return wrapper, self
        if self.source is None or self._hooked() or not isinstance(forward, types.FunctionType) \
                or not compilable(forward) or "forward" in self.module.__dict__:
            return None
        self._guard_not_on_instance(state, "forward")
        state.ctx.guard_class_lookup(type(self.module), "forward")
        self.guard_no_hooks(state.ctx)
        return forward, self

    def _hooked(self) -> bool:
        return _hooked(self.module)

    # -- containers (Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict) ------------------------
    def _table(self) -> str:
        """The module dict a container's items live in."""
        module = self.module
        if isinstance(module, _CONTAINERS):
            return "_modules"
        if isinstance(module, _PARAM_CONTAINERS) and len(module) == len(module._parameters):
            return "_parameters"
        raise GraphBreak("unsupported_value", f"iterating a {type(module).__name__}")

    def _items(self):
        return list(getattr(self.module, self._table()).items())

    def _read_items(self, state):
        """The container's (key, item) pairs, with their keys guarded: which items there are and in what order is
        what the captured code relied on (a layer appended later must recompile). Items are guarded one by one
        where they are read."""
        table, items = self._table(), self._items()
        if self.source is not None:
            state.ctx.guard(AttrSource(self.source, table), DictKeysMatch(tuple(k for k, _ in items)))
        return table, items

    def _keyed(self) -> bool:
        return isinstance(self.module, (torch.nn.ModuleDict, torch.nn.ParameterDict))

    def length(self, state):
        return len(self._read_items(state)[1])

    def contains(self, state, item):
        """`in`: ModuleDict / ParameterDict test their keys (their own __contains__); ModuleList, Sequential and
        ParameterList have none, so Python iterates them comparing each item (identity first, then ==)."""
        if not isinstance(self.module, _CONTAINERS + _PARAM_CONTAINERS) or \
                _class_lookup(type(self.module), "__contains__") not in _CONTAINS_SLOTS:
            return super().contains(state, item)
        table, items = self._read_items(state)
        if self._keyed():
            k = item.constant()
            if k is NOT_CONSTANT:
                raise GraphBreak("unsupported_value", f"`in` on a {type(self.module).__name__} with a "
                                                      f"{item.kind_name}")
            return const(any(k == name for name, _ in items))
        target = item.identity()
        for name, member in items:
            child = self._child(state, table, name, member)  # each item compared is relied on
            if child is item or (target is not None and member is target):
                return const(True)
            if item.is_tensor():
                raise GraphBreak("unsupported_value", "`in` comparing a tensor by value (==)")
            if target is None and item.constant() is NOT_CONSTANT and not item.is_tensor():
                raise GraphBreak("unsupported_value", f"`in` on a {type(self.module).__name__} with a "
                                                      f"{item.kind_name}")
        return const(False)

    def truth(self, state):
        """bool(module) as Python answers it: the class's own __bool__, else its __len__ (a container is false when
        empty), else True. The lookups are guarded; a hook written in Python is traced."""
        cls = type(self.module)
        for name in ("__bool__", "__len__"):
            hook = relied_class_lookup(state, cls, name)
            if hook is _MISSING:
                continue
            if name == "__len__" and getattr(hook, "__module__", "") == _CONTAINERS_MODULE:
                return self.length(state) != 0
            answer = state.inline_call(hook, [self], {}).constant()
            if answer is NOT_CONSTANT or type(answer) not in (bool, int):
                raise GraphBreak("unsupported_value", f"truth value of a {cls.__name__} ({name} is not a constant)")
            return bool(answer)
        return True

    def iterate(self, state):
        table, items = self._read_items(state)
        if self._keyed():
            return [const(k) for k, _ in items]
        return [self._child(state, table, k, m) for k, m in items]

    def getitem(self, state, key):
        k = key.constant()
        table = self._table()
        if self._keyed() and isinstance(k, str):
            found = getattr(self.module, table)
            if k not in found:
                raise GraphBreak.raises(KeyError, f"{k!r}")
            return self._child(state, table, k, found[k])
        if isinstance(k, (int, slice)) and not self._keyed():
            _, items = self._read_items(state)
        if isinstance(k, int) and not self._keyed():
            try:
                name, m = items[k]
            except IndexError:
                raise GraphBreak.raises(IndexError, "index out of range") from None
            return self._child(state, table, name, m)
        if isinstance(k, slice) and not self._keyed():
            return ListValue([self._child(state, table, n, m) for n, m in items[k]])
        raise GraphBreak("unsupported_value", f"indexing a {type(self.module).__name__} with {key.kind_name}")

    def call_method(self, state, name, args, kwargs):
        if self._keyed() and name in ("keys", "values", "items") and not args:
            table, items = self._read_items(state)
            if name == "keys":
                return ListValue([const(k) for k, _ in items])
            children = [self._child(state, table, k, m) for k, m in items]
            if name == "values":
                return ListValue(children)
            return ListValue([TupleValue([const(k), c]) for (k, _), c in zip(items, children)])
        if name in ("parameters", "named_parameters", "children", "modules", "buffers"):
            raise GraphBreak("unsupported_call", f"Module.{name}() inside a compiled function")
        return super().call_method(state, name, args, kwargs)


#: __contains__ of the containers as torch defines them (None: no __contains__, Python iterates)
_CONTAINS_SLOTS = (None, torch.nn.ModuleDict.__contains__, torch.nn.ParameterDict.__contains__)


def _has_twin(table: dict, module) -> bool:
    """Does `table` (a module's `_modules`) hold another module of `module`'s exact type?"""
    kind = type(module)
    return any(type(other) is kind and other is not module for other in table.values())


def _module_call(state, fn, args, kwargs):
    """`nn.Module.__call__(module, ...)` written out, as a `super().__call__(...)` in an override does."""
    if not args or not isinstance(args[0], ModuleValue):
        return NotImplemented
    return args[0].module_call(state, list(args[1:]), kwargs)


for _impl in _MODULE_CALLS:
    register_callable(_impl, KNOWN_CALLABLE, CallRule(f"nn.Module.{_impl.__name__}", Meaning.LOOKASIDE, _module_call))


def _class_lookup(cls, name):
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return None




class NewModuleValue(ModuleValue):
    """A torch.nn module built inside the captured function, without parameters or buffers (an activation, a
    container of them, a user module holding constants). The real object is built at capture time and is the model
    of the one each call makes: its attributes are constants of the graph, and writes of constants (`m.s = 4.0`,
    `m.eval()`) are applied to it as the trace reaches them. Each call that lets it escape gets a fresh copy."""

    __slots__ = ()
    needs_identity = True

    @property
    def kind_name(self):
        return f"new {type(self.module).__name__} module"

    def _child(self, state, dict_name, key, value):
        if isinstance(value, torch.nn.Module):
            return NewModuleValue(value)
        return super()._child(state, dict_name, key, value)

    def _instance_attribute(self, state, name, value):
        return new_module_attribute(state, value)

    def _guard_not_on_instance(self, state, name):
        """Nothing to guard: each call builds the module anew with the code just traced, so its own dict is the one
        capture modelled (a guard on the capture-time object would fail once that object is gone)."""

    def getattr(self, state, name):
        if name in ("train", "eval") and name not in self.module.__dict__:
            return MethodCallValue(self, name)
        return super().getattr(state, name)

    def call_method(self, state, name, args, kwargs):
        if name in ("train", "eval") and not kwargs and len(args) <= (1 if name == "train" else 0):
            mode = args[0].constant() if args else True
            if type(mode) is not bool:
                raise GraphBreak("unsupported_value", f"{type(self.module).__name__}.train() of a non-constant")
            getattr(self.module, name)(*([mode] if args else []))
            return self
        return super().call_method(state, name, args, kwargs)

    def setattr(self, state, name, value):
        real = new_module_argument(value)
        if not _immutable(real) or name.startswith("_") or name == "forward":
            raise GraphBreak("side_effect", f"setting {type(self.module).__name__}.{name} to {value.kind_name} "
                                            "on a module made inside the function")
        setattr(self.module, name, real)
        check_stateless(self.module)

    def reconstruct(self, codegen):
        return f"{codegen.constant_object(copy.deepcopy, 'deepcopy')}({codegen.constant_object(self.module, 'module')})"


NOT_REAL = object()


def new_module_argument(value):
    """The real object a constructor argument or attribute stands for: a constant, a module made inside, a
    function, a method of a module made inside, a functools.partial of those, or a list / tuple of those;
    `NOT_REAL` for anything else (a tensor, an object the trace models, a method of an object that existed)."""
    if isinstance(value, NewModuleValue):
        return value.module
    if isinstance(value, UserFunctionValue):
        return value.fn
    if isinstance(value, UserMethodValue):
        owner = value.self_value
        if not isinstance(owner, NewModuleValue) or not isinstance(value.fn, types.FunctionType):
            return NOT_REAL
        return types.MethodType(value.fn, owner.module)
    if isinstance(value, PartialValue):
        parts = [new_module_argument(v) for v in (value.fn, *value.args, *value.keywords.values())]
        if NOT_REAL in parts or value.instance_dict is not None:
            return NOT_REAL
        return functools.partial(parts[0], *parts[1:1 + len(value.args)],
                                 **dict(zip(value.keywords, parts[1 + len(value.args):])))
    if isinstance(value, (ListValue, TupleValue)) and value.python_type() in (list, tuple):
        items = value.sequence_items()
        items = None if items is None else [new_module_argument(v) for v in items]
        if items is None or any(i is NOT_REAL for i in items):
            return NOT_REAL
        return list(items) if isinstance(value, ListValue) else tuple(items)
    c = value.constant()
    return NOT_REAL if c is NOT_CONSTANT or isinstance(c, torch.Tensor) else c


def _immutable(real) -> bool:
    """A value an attribute of a module made inside may hold as a constant: later reads wrap the real object again,
    so it must not be one the trace could mutate (a list) -- or a module made inside, itself modelled. Functions
    count: the module's deepcopy (what each call that lets it escape gets) shares them, as Python's copy does, and
    a method of the module made inside is bound to the copy (Note [Callables on a module made inside])."""
    if isinstance(real, tuple):
        return all(_immutable(r) for r in real)
    if type(real) is functools.partial:
        return _immutable(real.func) and _immutable(real.args) and all(map(_immutable, real.keywords.values()))
    if type(real) is types.MethodType:
        return isinstance(real.__self__, torch.nn.Module) and _immutable(real.__func__)
    return isinstance(real, torch.nn.Module) or type(real) in _IMMUTABLE_TYPES


# Note [Callables on a module made inside]
# A module built inside forward often picks its function in __init__: transformers' GELUActivation stores
# `self.act = nn.functional.gelu`, GELUTanh a functools.partial of it, the Python variants a bound method of
# the module itself (`self.act = self._gelu_python`). The real module made at capture time holds the real callable
# (new_module_argument); a read gives it back as a value again (new_module_attribute), a method bound to the
# module made inside as that module's method, so calling it inlines the function on the modelled module. Only
# methods of modules made inside qualify: a method of a module that existed would have its module deep-copied with
# the new one when it escapes.
_IMMUTABLE_TYPES = (int, float, bool, str, complex, type(None), torch.dtype, torch.device, torch.Size,
                    types.FunctionType, types.BuiltinFunctionType, torch._ops.OpOverload,
                    torch._ops.OpOverloadPacket)


def new_module_attribute(state, real):
    """The value of an attribute of a module made inside, from the real object it holds (Note [Callables on a
    module made inside])."""
    if type(real) is types.MethodType and isinstance(real.__self__, torch.nn.Module):
        return UserMethodValue(real.__func__, NewModuleValue(real.__self__))
    if type(real) is functools.partial:
        return PartialValue(new_module_attribute(state, real.func), [wrap(state, a, None) for a in real.args],
                            {k: wrap(state, v, None) for k, v in real.keywords.items()})
    return wrap(state, real, None)


def check_stateless(module):
    if next(module.parameters(), None) is not None or next(module.buffers(), None) is not None:
        raise GraphBreak("unsupported_call", f"creating a {type(module).__qualname__} module with parameters or "
                                             "buffers inside a compiled function")
