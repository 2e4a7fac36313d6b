"""Batching the guards on module state into one check per cache entry (DESIGN §5, issue 6).

A model's forward reads every parameter, buffer, submodule, hook dict, container key list and `training` flag it
uses; guarding each one separately costs one Python-level check per item on every call. `batch_module_guards`
replaces those checks with one BatchIdentityMatch that compares them all at C speed. Only checks on module state
are batched; what the user passes in is guarded as before.
"""
from __future__ import annotations

import sys

import torch

from jitcore.guards import BatchIdentityMatch, DictKeysMatch, EqualsMatch, IdMatch, InstanceDictAbsent, LengthMatch, TensorMatch
from jitcore.guards.tree import read_step
from jitcore.capture.sources import AttrSource, ModuleDictSource, ModuleGlobalSource, Source

__all__ = ["batch_module_guards", "source_reader"]

_HOOK_DICTS = frozenset({"_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks"})
#: a module's own tables of parameters, buffers and submodules
_TABLES = frozenset({"_parameters", "_buffers", "_modules"})
#: below this many module items the per-item checks are as cheap as the batch
_MIN_ITEMS = 4


def source_reader(params, args, cells, fn_globals, builtins):
    """read(source) -> the object the source names for these live arguments. Each source is read once: a source
    whose base was read already takes only its own steps from there (the batch reads every parameter of a model
    through the same chains of submodules)."""
    memo = {}

    def read(source):
        try:
            return memo[source]
        except (KeyError, TypeError):
            pass
        base = getattr(source, "base", None)
        if isinstance(base, Source):
            value = read(base)
            for step in source.path[len(base.path):]:
                value = read_step(value, step)
        else:
            value = _read_path(source.path)
        try:
            memo[source] = value
        except TypeError:  # a source over an unhashable key is read again next time
            pass
        return value

    def _read_path(path):
        kind, key = path[0]
        if kind == "local":
            value = args[params.index(key)]
        elif kind == "global":
            value = fn_globals[key]
        elif kind == "builtin":
            value = builtins[key]
        elif kind == "cell":
            value = cells[key].cell_contents
        elif kind == "cellobj":
            value = cells[key]
        elif kind == "held":
            value = key.obj
        else:
            value = sys.modules[key]
        for step in path[1:]:
            value = read_step(value, step)
        return value
    return read


def batch_module_guards(collected: list, read, pinned: dict | None = None, structural=frozenset()) -> list:
    """collected (source, check) pairs -> the same guards with module-state checks folded into one.

    `pinned`, when given, receives source -> object for every tensor the batch pins by identity: an entry may
    pass those objects to its graph directly instead of reloading them through the module tree on every call.
    Checks on a path under `structural` (modules captured by structure: Note [Instances shared by structure])
    stay as they are: they must pass for every instance, not the one the batch would pin.
    """
    tensors, others, empty, keyed, kept, owners, absent, held = [], [], [], [], [], [], [], {}
    for source, check in collected:
        if structural and source is not None and _under(source, structural):
            kept.append((source, check))
            continue
        if source is None and isinstance(check, InstanceDictAbsent) and isinstance(check.obj, torch.nn.Module):
            absent.append((check.obj.__dict__, check.key, check.label))
            owners.append(check.obj)
            continue
        try:
            item = _module_item(source, check, read)
        except Exception:
            item = None
        if item is None:
            kept.append((source, check))
            continue
        owner = _owner(source, read)
        if owner is not None:
            owners.append(owner)
        holder = _holder(source, read)
        if holder is not None:
            held[(id(holder[0]), holder[1])] = holder
        if item[0] == "tensor":
            tensors.append(item[1:] + (source,))
        elif item[0] == "object":
            others.append(item[1:])
        elif item[0] == "keys":
            keyed.append(item[1:])
        else:
            empty.append(item[1:])
    if len(tensors) + len(others) + len(empty) + len(keyed) + len(absent) < _MIN_ITEMS:
        return collected
    items = tensors + others
    if pinned is not None:
        pinned.update((source, obj) for _, _, obj, _, source in tensors)
        pinned[None] = owners
    batch = BatchIdentityMatch(
        containers=[item[0] for item in items], keys=[item[1] for item in items],
        objects=[item[2] for item in items], n_grads=len(tensors),
        empty=[d for d, _ in empty], names=[item[3] for item in items], empty_names=[n for _, n in empty],
        owners=owners, keyed=[d for d, _, _ in keyed], keyed_keys=[k for _, k, _ in keyed],
        keyed_names=[n for _, _, n in keyed], absent=[d for d, _, _ in absent],
        absent_keys=[k for _, k, _ in absent], absent_names=[n for _, _, n in absent],
        held=list(held.values()))
    return kept + [(None, batch)]


def _under(source, structural) -> bool:
    """Is the source's path, or a path it reads through, structural? (a shape Relation names several sources)"""
    if not isinstance(source, Source):
        return False
    path = source.path
    return any(path[:end] in structural for end in range(1, len(path) + 1))


def _owner(source, read):
    """The module whose state a batched source reads (the batch lets go of everything when it dies)."""
    base = getattr(source, "base", None)
    if base is None:
        return None
    obj = read(base)
    return obj if isinstance(obj, torch.nn.Module) else None


def _holder(source, read):
    """(namespace dict, name, table, label) for the table a batched source reads: a module's `_modules`,
    `_parameters`, hook dict, or a module global. The batch reads items from the table it captured, so it must also check that
    the owner still holds that table: `del layers[i]` on a ModuleList or Sequential rebinds `_modules` to a new
    dict, and the old one (which a stale entry would go on checking) keeps its former keys."""
    if isinstance(source, ModuleDictSource):
        base, name = source.base, source.dict_name
    elif isinstance(source, AttrSource) and (source.name in _TABLES or source.name in _HOOK_DICTS):
        base, name = source.base, source.name
    elif isinstance(source, ModuleGlobalSource):
        namespace = vars(sys.modules[source.module])
        return namespace, source.name, namespace[source.name], source.user_name
    else:
        return None  # `training` is read from the module's own __dict__, which the module keeps
    namespace = vars(read(base))
    return namespace, name, namespace[name], f"{base.user_name}.{name}"


def _module_item(source, check, read):
    """(kind, ...) for a check on module state that the batch can stand for, else None."""
    if isinstance(source, ModuleDictSource) and source.dict_name in _TABLES:
        if isinstance(check, TensorMatch) or isinstance(check, IdMatch) or (
                isinstance(check, EqualsMatch) and check.value is None):
            container = read(AttrSource(source.base, source.dict_name))
            obj = container[source.key]
            kind = "tensor" if isinstance(obj, torch.Tensor) else "object"
            return (kind, container, source.key, obj, source.user_name)
        return None
    if isinstance(source, AttrSource) and isinstance(check, DictKeysMatch) and source.name in _TABLES \
            and isinstance(read(source.base), torch.nn.Module):
        # the keys of a container's table (which layers a loop ran): kept in the batch, compared as one list
        return ("keys", read(source), check.keys, source.user_name)
    if isinstance(source, AttrSource) and isinstance(check, LengthMatch) and check.length == 0 \
            and source.name in _HOOK_DICTS and isinstance(read(source.base), torch.nn.Module):
        return ("empty", read(source), source.user_name)
    if isinstance(source, ModuleGlobalSource) and isinstance(check, LengthMatch) and check.length == 0:
        return ("empty", read(source), source.user_name)
    if isinstance(source, AttrSource) and source.name == "training" and isinstance(check, EqualsMatch):
        module = read(source.base)
        if isinstance(module, torch.nn.Module) and "training" in module.__dict__:
            return ("object", module.__dict__, "training", module.__dict__["training"], source.user_name)
    return None
