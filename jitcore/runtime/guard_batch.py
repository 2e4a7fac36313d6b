"""Batching the guards on module state into one check per cache entry (DESIGN §5, issue 6).

A model's forward reads every parameter, buffer, submodule, hook dict, container key list and `training` flag it
uses; guarding each one separately costs one Python-level check per item on every call. `batch_module_guards`
replaces those checks with one BatchIdentityMatch that compares them all at C speed. Only checks on module state
are batched; what the user passes in is guarded as before.
"""
from __future__ import annotations

import sys

import torch

from jitcore.guards import (BatchIdentityMatch, DictKeysMatch, EqualsMatch, IdMatch, InstanceDictAbsent, LengthMatch, TensorMatch,
                            TypeMatch, immutable_constant)
from jitcore.guards.checks import Relation as GuardRelation
from jitcore.guards.tree import read_step
from jitcore.capture.sources import AttrSource, ItemSource, ModuleDictSource, ModuleGlobalSource, Source

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
    tensors, others, empty, keyed, kept, owners, absent, held, hooks = [], [], [], [], [], [], [], {}, []
    constants, consts = _constant_attributes(collected, read, structural), {}
    related = _related_paths(collected) if constants else frozenset()
    for source, check in collected:
        if structural and source is not None and _under(source, structural):
            kept.append((source, check))
            continue
        attribute = _attribute_of(source) if constants else None
        if attribute in constants:
            table, name, value, module, replaced = constants[attribute]
            consts[attribute] = (table, name, value, attribute.user_name, attribute.path, replaced)
            owners.append(module)
            if source.path in related:  # a relation reads this path: the guard tree needs a leaf check there
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
        if item[0] == "hooks":
            hooks.append(item[1:])
            continue
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
    if len(tensors) + len(others) + len(empty) + len(keyed) + len(absent) + len(consts) + len(hooks) < _MIN_ITEMS:
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
        held=list(held.values()), consts=list(consts.values()), hooks=hooks)
    return kept + [(None, batch)]


# Note [Constant module attributes]
# A module's configuration (a convolution's stride, padding, dilation and groups, a norm's eps and
# normalized_shape, an activation's `approximate`) is read by forward and baked into the graph, so each value is
# guarded: a type, a length and an equality per item, hundreds of Python-level checks on every call of a CNN
# (ConvNeXt-T: ~690 of its ~720). When the checks on an attribute pin its whole value (an EqualsMatch on it, or
# its exact type and length and an EqualsMatch on every item), the batch stands for them: it holds the module's
# own `__dict__` and the object read there, and a call passes when the same object is still there (C-level
# `map`, like the parameters). An attribute rebound to an equal object passes an exact comparison instead (the
# same meaning as EqualsMatch: a counter that keeps its value must not recompile); a list is compared item by
# item on every call, since its identity says nothing about its contents. Only attributes that plain attribute
# access reads from the instance `__dict__` qualify: no data descriptor of that name on the class, no
# `__getattribute__` of its own. Checks that do not pin the value (a type check alone, on an int that automatic
# dynamic made a graph input) stay as they are.
_PINNING = (TypeMatch, EqualsMatch, LengthMatch)
_SCALARS = frozenset({int, float, bool, str, type(None), complex, bytes})


def _attribute_of(source):
    """The module attribute a source reads, through any items of it (`self.conv.stride[0]`), or None."""
    return _attribute_and_keys(source)[0]


def _attribute_and_keys(source):
    """(the AttrSource a source reads through items of, the item keys from it in order), or (None, keys)."""
    keys = []
    while type(source) is ItemSource:  # not DictItemSource: the batch reads items with `[]`
        keys.append(source.key)
        source = source.base
    return (source if isinstance(source, AttrSource) else None), tuple(reversed(keys))


def _constant_attributes(collected, read, structural) -> dict:
    """{AttrSource: (module.__dict__, name, value, module, replaced)} for module attributes whose checks pin their
    value; `value` is what the checks expect (the frame may have rebound the attribute since), `replaced` the
    (path, user name, check) triples the batch stands for."""
    by_attribute: dict = {}
    for source, check in collected:
        if source is None or not isinstance(check, _PINNING):
            continue
        attribute, keys = _attribute_and_keys(source)
        if attribute is not None:
            checks = by_attribute.setdefault(attribute, ({}, []))
            checks[0].setdefault(keys, []).append(check)
            checks[1].append((source.path, source.user_name, check))
    found = {}
    for attribute, (checks, replaced) in by_attribute.items():
        if attribute.name in _TABLES or attribute.name in _HOOK_DICTS or (structural and _under(attribute, structural)):
            continue
        try:
            module = read(attribute.base)
        except Exception:
            continue
        if not isinstance(module, torch.nn.Module) or not _plain_instance_attribute(module, attribute.name):
            continue
        value = _pinned((), checks)
        if value is not _UNPINNED:
            found[attribute] = (module.__dict__, attribute.name, value, module, replaced)
    # every check on a pinned attribute must be one the batch implies, or the attribute stays unbatched
    for source, check in collected:
        attribute = _attribute_of(source)
        if attribute in found and not isinstance(check, _PINNING):
            del found[attribute]
    return found


_UNPINNED = object()


def _pinned(path, checks):
    """The value the checks at `path` and below fix entirely (exact type at every level, every item), or
    _UNPINNED."""
    here = checks.get(path, ())
    for check in here:
        if isinstance(check, EqualsMatch):
            value = check.value
            return value if immutable_constant(value) else _UNPINNED
    kinds = [check.tp for check in here if isinstance(check, TypeMatch) and check.tp in (tuple, list)]
    lengths = [check.length for check in here if isinstance(check, LengthMatch)]
    if not kinds or not lengths:
        return _UNPINNED
    items = [_pinned(path + (index,), checks) for index in range(lengths[0])]
    if any(item is _UNPINNED for item in items):
        return _UNPINNED
    if kinds[0] is list:  # compared item by item on every call: only a flat list of scalars
        return items if not path and all(type(item) in _SCALARS for item in items) else _UNPINNED
    return tuple(items)


def _related_paths(collected) -> set:
    """The paths relations read (aliasing, storage overlap, shapes across inputs): the guard function reads a
    relation's paths through nodes that must keep a leaf check of their own."""
    related = set()
    for source, check in collected:
        if isinstance(check, GuardRelation):
            related.update(check.other_paths)
            if source is not None and hasattr(source, "path"):
                related.add(source.path)
        for other in getattr(source, "sources", ()):
            related.add(other.path)
    return related


def _plain_instance_attribute(module, name) -> bool:
    cls = type(module)
    if cls.__getattribute__ is not object.__getattribute__ or name not in module.__dict__:
        return False
    for klass in cls.__mro__:
        entry = klass.__dict__.get(name)
        if entry is not None and (hasattr(type(entry), "__set__") or hasattr(type(entry), "__delete__")):
            return False
    return True


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
        # read through the module's own __dict__ on every call: one lookup, and no check that the module still
        # holds the dict captured now (which a table read from the capture would need)
        return ("hooks", vars(read(source.base)), source.name, source.user_name)
    if isinstance(source, ModuleGlobalSource) and isinstance(check, LengthMatch) and check.length == 0:
        return ("empty", read(source), source.user_name)
    if isinstance(source, AttrSource) and source.name == "training" and isinstance(check, EqualsMatch):
        module = read(source.base)
        if isinstance(module, torch.nn.Module) and "training" in module.__dict__:
            return ("object", module.__dict__, "training", module.__dict__["training"], source.user_name)
    return None
