"""Checks on torch state: one tensor's metadata (TensorMatch), where a view starts in its storage
(StorageOffsetMatch), torch's global state (GlobalStateMatch) and a module tree's parameters, buffers, submodules
and hooks at once (BatchIdentityMatch).

Same protocol as guards/checks.py (render / explain / describe, compared by value). Imports torch and the standard
library only; never jitcore.
"""
from __future__ import annotations

import itertools
import operator as _operator
import weakref

import torch

from jitcore.guards.checks import Check, Relation, _value_key, same_value
from jitcore.guards.dict_tags import read_tag, tag_views
from jitcore.guards.render import Namespace, distinct_type_names, literal, short_repr, type_name

__all__ = ["TensorMatch", "StorageOffsetMatch", "UnitStrideMatch", "MEMORY_FORMAT_NDIMS", "StorageOverlapMatch", "storage_pattern", "GlobalStateMatch", "BatchIdentityMatch"]


class BatchIdentityMatch(Check):
    """A root check standing for many per-item checks on module state: each `containers[i][keys[i]]` is still the
    object it was (parameters, buffers, submodules, `training` flags), the first `n_grads` of those objects keep
    their requires_grad, every dict in `empty` is still empty (hook dicts), and every dict in `keyed` still has
    exactly the keys `keyed_keys` in that order (a container module's table that captured code iterated, indexed
    or measured: a layer appended to a ModuleList must fail it).

    It is one check however many items it covers: the items are read with C-level `map`, so a model with
    hundreds of parameters costs microseconds, not one Python-level check per parameter. The containers are the
    modules' own dicts captured at compile time (nn.Module never replaces them). `names[i]` is the user's name
    of item i, for failures. `held` lists (namespace, name, table, label) tuples: each namespace (a module's `__dict__`
    or a Python module's globals) must still hold that very table, since the items and keys above are read from
    the tables captured at compile time (`del` on a ModuleList or Sequential replaces its `_modules`).

    `consts` are (module `__dict__`, name, value, user's name) for module attributes the graph took as constants
    (a convolution's `stride`, a norm's `eps`): Note [Constant module attributes] in runtime/guard_batch.py.
    """

    __slots__ = ("containers", "keys", "ids", "n_grads", "grads", "empty", "names", "empty_names", "keyed",
                 "keyed_keys", "keyed_names", "absent", "absent_keys", "absent_names", "held_in", "held_names", "held", "held_labels", "_objects", "_metadata",
                 "_native", "_live", "const_tables", "const_keys", "const_values", "const_names", "_const_lists",
                 "_missing", "hooks_in", "hooks_keys", "hooks_names", "_lists_at", "_list_lengths", "_list_ids", "_list_types", "const_paths", "_const_replaced",
                 "_tensors", "_tagged", "_tag_views", "_seen", "_refreshes", "__weakref__")
    cost = 4
    late = True

    def __init__(self, containers, keys, objects, n_grads, empty, names, empty_names, owners=(), keyed=(),
                 keyed_keys=(), keyed_names=(), absent=(), absent_keys=(), absent_names=(), held=(),
                 consts=(), hooks=()) -> None:
        self.containers = tuple(containers)
        self.keys = tuple(keys)
        self._objects = tuple(objects)
        self.ids = [id(o) for o in objects]
        self.n_grads = n_grads
        tensors = list(objects[:n_grads])
        self.grads = [t.requires_grad for t in tensors]
        self._metadata = [_metadata(t) for t in tensors]
        # the first n_grads objects are tensors: one C++ TensorGuards call checks dtype, device, shape, strides
        # and requires_grad of them all (so an in-place `.data` swap is caught too)
        self._native = _native_tensor_check(*tensors) if tensors else None
        self.empty = tuple(empty)
        self.names = tuple(names)
        self.empty_names = tuple(empty_names)
        self.keyed = tuple(keyed)
        self.keyed_keys = [tuple(k) for k in keyed_keys]
        self.keyed_names = tuple(keyed_names)
        # names a module's own __dict__ must still lack (a `forward` assigned to the instance after the call)
        self.absent = tuple(absent)
        self.absent_keys = tuple(absent_keys)
        self.absent_names = tuple(absent_names)
        self.held_in = tuple(item[0] for item in held)
        self.held_names = tuple(item[1] for item in held)
        self.held = tuple(item[2] for item in held)
        self.held_labels = tuple(item[3] for item in held)
        self.const_tables = tuple(item[0] for item in consts)
        self.const_keys = tuple(item[1] for item in consts)
        # a list: the slow path swaps in an equal object it met, so the next call passes on identity again
        self.const_values = [item[2] for item in consts]
        self.const_names = tuple(item[3] for item in consts)
        # for failures: each attribute's path and the (path, user name, check) triples it stands for, which the
        # slow path re-runs so that automatic dynamic sees the number that changed (runtime/policy.py)
        self.const_paths = tuple(item[4] for item in consts)
        self._const_replaced = tuple(item[5] for item in consts)
        # a list's identity says nothing about its items (it can be changed in place): its items and their types
        # as captured, compared on every call
        self._const_lists = tuple((index, tuple(value), tuple(map(type, value)))
                                  for index, value in enumerate(self.const_values) if type(value) is list)
        # the fast test for all the lists at once: the same item objects (ids of the captured items, which
        # _const_lists keeps alive) and lengths; anything else goes to the exact comparison
        at = [index for index, _, _ in self._const_lists]
        self._lists_at = _operator.itemgetter(*at) if len(at) > 1 else (lambda now, i=at[0]: (now[i],)) if at else None
        self._list_lengths = [len(items) for _, items, _ in self._const_lists]
        self._list_ids = [id(item) for _, items, _ in self._const_lists for item in items]
        self._list_types = [list] * len(at)
        # hook dicts read through their module's __dict__ (`hooks_in[i][hooks_keys[i]]`), which must be empty
        self.hooks_in = tuple(item[0] for item in hooks)
        self.hooks_keys = tuple(item[1] for item in hooks)
        self.hooks_names = tuple(item[2] for item in hooks)
        self._missing = (_MISSING,) * len(consts)
        # Note [Dict version tags] (guards/dict_tags.py): every dict the identity, key and absence checks read;
        # while none of their tags moved, those checks hold as they did when the tags were read, and a call checks
        # only what no tag covers: the hook dicts' emptiness, the global hook dicts, list constants' items and the
        # tensors' metadata
        self._tensors = tuple(tensors)
        self._tagged = tuple({id(d): d for d in (*self.held_in, *self.containers, *self.absent, *self.hooks_in,
                                                 *self.const_tables, *self.keyed)}.values())
        self._tag_views = tag_views(self._tagged)
        #: (the tags at the last pass that read every item, the hook dicts the modules held then): one attribute,
        #: so that two threads passing at once cannot pair one's tags with the other's hook dicts
        self._seen = (None, ())
        self._refreshes = 0
        self._live = True
        # the containers are the owners' own dicts, which hold the parameters: when an owner (a module) dies,
        # let go of everything, so this check never keeps a dropped model's tensors alive; it fails from then on
        this = weakref.ref(self)
        for owner in {id(o): o for o in owners}.values():
            weakref.finalize(owner, _release_batch, this)

    def _read(self):
        return list(map(_dict_getitem, self.containers, self.keys))

    def holds(self) -> bool:
        if not self._live:
            return False
        views = self._tag_views
        if views is None:
            return self._holds_read()
        tags = list(map(read_tag, views))  # read before the checks: a change made after them moves a tag
        seen = self._seen
        if tags == seen[0]:
            self._refreshes = 0
            return self._holds_untouched(seen[1])
        hook_tables = tuple(map(_dict_getitem, self.hooks_in, self.hooks_keys))
        if not self._holds_read():
            return False
        self._refreshes += 1
        # a model that writes its own module state on every call (a counter attribute) would read every tag for
        # nothing: after a few refreshes in a row the check reads items on every call, as it would without tags
        if self._refreshes > _TAG_REFRESHES:
            self._tag_views = None
        else:
            # the hook dicts the modules hold now: one replaced by another empty dict passes, and is the one to watch
            self._seen = (tags, hook_tables)
        return True

    def _holds_untouched(self, hook_tables) -> bool:
        """holds() when no dict the items are read from has changed since the last pass: the rest."""
        if any(self.empty) or any(hook_tables):
            return False
        if self._lists_at is not None and not self._lists_hold(self.const_values):
            return False
        native = self._native
        if native is not None:
            return native(*self._tensors)
        return list(map(_requires_grad, self._tensors)) == self.grads

    def _holds_read(self) -> bool:
        """holds() reading every item."""
        if not all(map(_is, map(_dict_get, self.held_in, self.held_names), self.held)):
            return False
        values = list(map(_dict_getitem, self.containers, self.keys))
        if not all(map(_is, values, self._objects)) or any(self.empty) \
                or list(map(tuple, self.keyed)) != self.keyed_keys or any(map(_contains, self.absent, self.absent_keys)):
            return False
        if self.const_tables and not self._consts_hold():
            return False
        if any(map(_dict_getitem, self.hooks_in, self.hooks_keys)):
            return False
        native = self._native
        if native is not None:
            return native(*values[:self.n_grads])
        return list(map(_requires_grad, values[:self.n_grads])) == self.grads

    def _consts_hold(self) -> bool:
        # Note [Constant module attributes]: the same objects pass at C speed; an attribute rebound to an equal
        # value (a large int or a float computed again) passes the exact comparison instead, as EqualsMatch would
        now = list(map(_dict_get, self.const_tables, self.const_keys, self._missing))
        expected = self.const_values
        if not all(map(_is, now, expected)):
            for index, (old, new) in enumerate(zip(expected, now)):
                if new is old:
                    continue
                if type(old) is list:
                    # another list object: its items are compared below, as on every call
                    if type(new) is not list:
                        return False
                elif new is _MISSING or not same_value(old, new):
                    return False
                expected[index] = new
        return self._lists_at is None or self._lists_hold(now)

    def _lists_hold(self, now) -> bool:
        """The list constants among the attribute values `now` still have their items."""
        lists = self._lists_at(now)
        if list(map(type, lists)) == self._list_types and list(map(len, lists)) == self._list_lengths \
                and list(map(id, _chain(*lists))) == self._list_ids:
            return True
        return all(_same_list(items, types, now[index]) for index, items, types in self._const_lists)

    def failed_constants(self) -> list[tuple]:
        """The checks this batch stands for that fail now, as `(path, user_name, check, value, explanation)`
        (GuardFunction.failed_checks' form): the per-item view of a constant attribute that changed."""
        failed = []
        for table, key, base, replaced in zip(self.const_tables, self.const_keys, self.const_paths,
                                              self._const_replaced):
            if key not in table:
                continue
            for path, user_name, check in replaced:
                value = table[key]
                try:
                    for step in path[len(base):]:
                        value = value[step[1]]
                    why = check.explain(value)
                except Exception as error:
                    failed.append((path, user_name, check, None, f"could not be read ({type(error).__name__})"))
                    continue
                if why is not None:
                    failed.append((path, user_name, check, value, why))
        return failed

    def render(self, var: str, ns: Namespace) -> str:
        return f"{ns.constant(self.holds, 'module_state')}()"

    def explain(self, value: object = None) -> str | None:
        for label, name, namespace, table in zip(self.held_labels, self.held_names, self.held_in, self.held):
            if namespace.get(name) is not table:
                return f"{label} was replaced by another dict (a container's items renumbered by del, or reassigned)"
        try:
            values = self._read()
        except Exception as error:
            return f"module state could not be read ({type(error).__name__}: {error})"
        for name, old, new in zip(self.names, self._objects, values):
            if new is not old:
                if isinstance(old, (bool, int, float, str, type(None))):
                    return f"{name} changed {short_repr(old)} -> {short_repr(new)}"
                return f"{name} was replaced ({short_repr(old)} -> {short_repr(new)})"
        for name, old, new in zip(self.names, self.grads, values):
            if new.requires_grad is not old:
                return f"{name}.requires_grad changed {old} -> {new.requires_grad}"
        for name, old, new in zip(self.names, self._metadata, values):
            now = _metadata(new)
            for what, before, after in zip(("dtype", "device", "shape", "stride"), old, now):
                if before != after:
                    return f"{name}.{what} changed {before} -> {after} (its data was replaced in place)"
        for name, table, key, old in zip(self.const_names, self.const_tables, self.const_keys, self.const_values):
            new = table.get(key, _MISSING)
            if new is _MISSING:
                return f"{name} was deleted"
            if type(old) is list:
                if not _same_list(tuple(old), tuple(map(type, old)), new):
                    return f"{name} changed {short_repr(old)} -> {short_repr(new)}"
            elif new is not old and not same_value(old, new):
                return f"{name} changed {short_repr(old)} -> {short_repr(new)}"
        for name, namespace, key in zip(self.hooks_names, self.hooks_in, self.hooks_keys):
            hooks = namespace.get(key)
            if hooks is None or len(hooks):
                return f"{name} is no longer empty (a hook was added)"
        for name, hooks in zip(self.empty_names, self.empty):
            if len(hooks):
                return f"{name} is no longer empty (a hook was added)"
        for name, table, key in zip(self.absent_names, self.absent, self.absent_keys):
            if key in table:
                return f"{name} was set on the instance ({short_repr(table[key])})"
        for name, table, before in zip(self.keyed_names, self.keyed, self.keyed_keys):
            now = tuple(table)
            if now != before:
                return f"{name} keys changed {short_repr(before)} -> {short_repr(now)}"
        return None

    def describe(self) -> str:
        keyed = f", {len(self.keyed)} container key lists" if self.keyed else ""
        consts = f", {len(self.const_keys)} constant attributes" if self.const_keys else ""
        consts += f", {len(self.hooks_keys)} module hook dicts" if self.hooks_keys else ""
        return (f"BatchIdentityMatch({len(self.keys)} module items, {self.n_grads} with requires_grad, "
                f"{len(self.empty)} empty hook dicts{keyed}{consts})")

    def _key(self) -> tuple:
        return (tuple(map(id, self.containers)), self.keys, tuple(self.ids), tuple(self.grads),
                tuple(map(id, self.empty)), tuple(map(id, self.keyed)), tuple(self.keyed_keys),
                tuple(map(id, self.absent)), self.absent_keys, tuple(map(id, self.held_in)), self.held_names,
                tuple(map(id, self.const_tables)), self.const_keys, tuple(map(_const_key, self.const_values)),
                tuple(map(id, self.hooks_in)), self.hooks_keys)


_dict_getitem = dict.__getitem__
_dict_get = dict.get
_requires_grad = _operator.attrgetter("requires_grad")
_is = _operator.is_
_contains = _operator.contains
_chain = itertools.chain


#: what a constant attribute reads as once it has been deleted from its module's __dict__
_MISSING = object()
#: passes in a row on changed tags after which a batch stops reading tags (Note [Dict version tags])
_TAG_REFRESHES = 8


def _same_list(items: tuple, types: tuple, value) -> bool:
    """`value` is a list with these items, each of exactly these types (a list constant's exact comparison)."""
    return type(value) is list and tuple(value) == items and tuple(map(type, value)) == types


def _const_key(value) -> object:
    return (list, tuple(map(_value_key, value))) if type(value) is list else _value_key(value)


def _metadata(t) -> tuple:
    return (t.dtype, t.device, tuple(t.shape), tuple(t.stride()) if t.layout == torch.strided else None)


def _release_batch(ref) -> None:
    check = ref()
    if check is not None:
        check._live = False  # the check fails from now on
        check.containers, check.keys, check._objects, check.empty, check.keyed = (), (), (), (), ()
        check.absent, check.absent_keys = (), ()
        check.held_in, check.held_names, check.held, check.held_labels = (), (), (), ()
        check.const_tables, check.const_keys, check.const_values, check.const_names = (), (), [], ()
        check.const_paths, check._const_replaced = (), ()
        check._const_lists, check._lists_at = (), None
        check.hooks_in, check.hooks_keys, check.hooks_names = (), (), ()
        check.keyed_keys = []
        check._native = None
        check._tensors, check._tagged, check._tag_views, check._seen = (), (), None, (None, ())


def _native_tensor_check(*examples, sizes=None, strides=None):
    """torch._C._dynamo.guards.TensorGuards(*examples).check, or None where this torch does not have it.

    It stores the examples' metadata, not the tensors. `sizes`/`strides` (one list per example, None at a dynamic
    dim) replace the examples' own. Used only when it accepts the examples themselves (a cheap self-check against
    a changed signature)."""
    try:
        from torch._C._dynamo.guards import TensorGuards
        if _any_autocast is None or _any_autocast():
            # autocast lives in the dispatch-key TLS that TensorGuards records: a check made inside an autocast
            # region would fail outside it
            return None
        guard = TensorGuards(*examples, dynamic_dims_sizes=sizes or [list(e.size()) for e in examples],
                             dynamic_dims_strides=strides or [list(e.stride()) for e in examples])
        if not guard.check(*examples):
            return None
        return guard.check
    except Exception:
        return None


def _format_dims(values: tuple) -> str:
    """`(2, 3)`, with `*` for a dynamic dim: `(*, 3)`."""
    parts = ["*" if item is None else str(item) for item in values]
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


class TensorMatch(Check):
    """The tensor metadata a graph was specialised on: exact type, dtype, device, requires_grad, layout, ndim, and
    sizes and strides except the dims in `dynamic_dims` (and the strides in `dynamic_strides`, by default the
    same dims): a graph over symbolic sizes leaves them to its shape relations (ShapeRelationMatch).

    Only metadata is stored, never the example tensor. `sizes`/`strides` hold None at dynamic dims; `strides` is
    None for layouts without strides. The rendered test reads as few attributes as possible (see Note [Fast tensor
    test]).
    """

    __slots__ = ("tensor_type", "dtype", "device", "requires_grad", "layout", "sizes", "strides", "dynamic_dims",
                 "inference", "_native")
    cost = 10

    def __init__(self, example: torch.Tensor, dynamic_dims: frozenset[int] = frozenset(),
                 dynamic_strides: frozenset[int] | None = None) -> None:
        if not isinstance(example, torch.Tensor):
            raise TypeError(f"TensorMatch needs a tensor, got {type_name(type(example))}; use EqualsMatch or TypeMatch")
        if isinstance(example, torch._subclasses.FakeTensor):
            raise TypeError("TensorMatch needs the real tensor the function was called with, not its fake tensor")
        # a subclass's __torch_function__ must not see the guard's metadata reads (they are not the user's calls)
        with torch._C.DisableTorchFunctionSubclass():
            self._init(example, dynamic_dims, dynamic_strides)

    def _init(self, example, dynamic_dims, dynamic_strides) -> None:
        ndim = example.dim()
        dynamic_dims = frozenset(dynamic_dims)
        if any(type(dim) is not int or not 0 <= dim < ndim for dim in dynamic_dims):
            raise ValueError(f"dynamic_dims must be dims of a {ndim}-d tensor (0..{ndim - 1}), got {sorted(dynamic_dims)}")
        self.tensor_type = type(example)
        self.dtype = example.dtype
        self.device = example.device
        self.requires_grad = example.requires_grad
        self.layout = example.layout
        #: made under torch.inference_mode() (torch's native check tells such tensors apart by dispatch keys)
        self.inference = example.is_inference()
        dynamic_strides = dynamic_dims if dynamic_strides is None else frozenset(dynamic_strides)
        self.dynamic_dims = dynamic_dims | dynamic_strides  # a test reads size() once where either is dynamic
        self.sizes = tuple(None if dim in dynamic_dims else size for dim, size in enumerate(example.size()))
        self.strides = None
        if self.layout is torch.strided:
            # the stride of a dim of size 1 never takes part in an address (Note [Strides of size-1 dims])
            unit_free = ndim not in MEMORY_FORMAT_NDIMS
            self.strides = tuple(None if dim in dynamic_strides or (size == 1 and unit_free) else stride
                                 for dim, (size, stride) in enumerate(zip(example.size(), example.stride())))
        self._native = None
        if self.strides is not None:
            # TensorGuards takes None at a dynamic size or stride
            self._native = _native_tensor_check(example, sizes=[list(self.sizes)], strides=[list(self.strides)])

    # Note [Fast tensor test]
    # Measured on CPython 3.12.1 / torch 2.14 (ns per term): `type(v) is T` 15, `v.dtype is D` 55 (dtypes are
    # singletons), `v.is_cpu` 45 against `v.device == dev` 73 (a new device object per read), `v.size() == (2, 3)`
    # 147 against `v.shape == ...` 181 and `v.dim()` 102, `v.size(i)` 368 (argument parsing). So: compare whole
    # size()/stride() tuples against literal tuples (co_consts, no allocation); with dynamic dims read size() once
    # into a local and index it. Exact sizes imply ndim.
    def render(self, var: str, ns: Namespace) -> str:
        if self._native is not None:
            # torch's own C++ tensor check: the same facts (exact type, dtype, device, requires_grad, sizes,
            # strides, plus dispatch keys) at a fraction of the attribute reads' cost
            return f"{ns.constant(self._native, 'tensor_check')}({var})"
        if self.tensor_type is not torch.Tensor and self.tensor_type is not torch.nn.Parameter:
            # attribute reads on a subclass would run its __torch_function__: test it with that switched off
            return (f"type({var}) is {ns.constant(self.tensor_type, 'T')} and "
                    f"{ns.constant(self._quiet_holds, 'subclass_check')}({var})")
        terms = [f"type({var}) is {ns.constant(self.tensor_type, 'T')}", f"{var}.dtype is {ns.constant(self.dtype, 'dtype')}"]
        if self.device.type == "cpu":
            terms.append(f"{var}.is_cpu")
        else:
            terms.append(f"{var}.device == {ns.constant(self.device, 'device')}")
        terms.append(f"{var}.requires_grad" if self.requires_grad else f"not {var}.requires_grad")
        terms.append(f"{var}.is_inference()" if self.inference else f"not {var}.is_inference()")
        if self.layout is not torch.strided:
            terms.append(f"{var}.layout is {ns.constant(self.layout, 'layout')}")
        terms += self._dims_terms(f"{var}.size()", self.sizes, ns, check_ndim=True)
        if self.strides is not None:
            terms += self._dims_terms(f"{var}.stride()", self.strides, ns, check_ndim=False)
        return " and ".join(terms)

    @property
    def native_check(self):
        """torch's C++ test of this check (None where it is not used: dynamic dims, no strides, autocast)."""
        return self._native

    @staticmethod
    def combined_check(examples, checks=None):
        """One native check over several tensors that each pass their TensorMatch's native check (`checks`, in
        the same order): the same tests in one C++ call (None where torch cannot build it)."""
        if checks is None:
            return _native_tensor_check(*examples)
        return _native_tensor_check(*examples, sizes=[list(c.sizes) for c in checks],
                                    strides=[list(c.strides) for c in checks])

    def _dims_terms(self, read: str, expected: tuple, ns: Namespace, check_ndim: bool) -> list[str]:
        if None not in expected:
            return [f"{read} == {literal(expected)}"]
        static = [(dim, value) for dim, value in enumerate(expected) if value is not None]
        if not static:
            return [f"len({read}) == {len(expected)}"] if check_ndim else []
        if not check_ndim and len(static) == 1:
            dim, value = static[0]
            return [f"{read}[{dim}] == {value}"]
        local = ns.temp("dims")  # read once, index many times
        if check_ndim:
            terms = [f"len({local} := {read}) == {len(expected)}"]
        else:
            dim, value = static.pop(0)
            terms = [f"({local} := {read})[{dim}] == {value}"]
        terms += [f"{local}[{dim}] == {value}" for dim, value in static]
        return terms

    def _quiet_holds(self, value) -> bool:
        with torch._C.DisableTorchFunctionSubclass():
            return self.explain(value) is None

    def explain(self, value: object) -> str | None:
        if type(value) is not self.tensor_type:
            expected, got = distinct_type_names(self.tensor_type, type(value))
            return f"type changed {expected} -> {got}"
        if value.dtype is not self.dtype:
            return f"dtype changed {self.dtype} -> {value.dtype}"
        if value.device != self.device:
            return f"device changed {self.device} -> {value.device}"
        if value.requires_grad != self.requires_grad:
            return f"requires_grad changed {self.requires_grad} -> {value.requires_grad}"
        if value.layout is not self.layout:
            return f"layout changed {self.layout} -> {value.layout}"
        if value.is_inference() != self.inference:
            return f"is_inference() changed {self.inference} -> {value.is_inference()}"
        sizes = tuple(value.size())
        if len(sizes) != len(self.sizes):
            return f"ndim changed {len(self.sizes)} -> {len(sizes)}"
        for dim, (want, got) in enumerate(zip(self.sizes, sizes)):
            if want is not None and want != got:
                return f"shape[{dim}] changed {want} -> {got}"
        if self.strides is not None:
            strides = tuple(value.stride())
            if any(want is not None and want != got for want, got in zip(self.strides, strides)):
                return f"stride changed {_format_dims(self.strides)} -> {_format_dims(strides)}"
        return None

    def describe(self) -> str:
        dtype = str(self.dtype).removeprefix("torch.")
        parts = [dtype, str(self.device), f"shape={_format_dims(self.sizes)}"]
        if self.strides is not None:
            parts.append(f"stride={_format_dims(self.strides)}")
        if self.layout is not torch.strided:
            parts.append(f"layout={self.layout}")
        parts.append(f"requires_grad={self.requires_grad}")
        if self.inference:
            parts.append("inference")
        kind = "" if self.tensor_type is torch.Tensor else f"{type_name(self.tensor_type)}, "
        return f"TensorMatch({kind}{', '.join(parts)})"

    def _key(self) -> tuple:
        return (self.tensor_type, self.dtype, self.device, self.requires_grad, self.layout, self.sizes, self.strides,
                self.inference)


# Note [Strides of size-1 dims]: a dim of size 1 is only ever indexed at 0, so its stride takes part in no
# address: torch's contiguity and view rules skip it, and Inductor's own input check (assert_size_stride) ignores
# it. It still varies with data: the rows of a (k, 1) `nonzero()` result have stride (k,), so a loop over them that
# breaks would miss its entry for every new k. TensorMatch leaves such strides free; the one way the captured code
# can depend on one is reading it into Python (`x.stride()`), and there UnitStrideMatch pins it. Except for 4-d
# and 5-d tensors: torch's memory-format guess (suggest_memory_format, channels_last) does look at the stride of a
# size-1 dim, and it decides the layout of every result (a conv's output), so there they stay guarded.
MEMORY_FORMAT_NDIMS = (4, 5)


class UnitStrideMatch(Check):
    """`v.stride(d) == s` at the dims of size 1 that TensorMatch leaves free (Note [Strides of size-1 dims]): added
    only where the captured code read a stride into Python."""

    __slots__ = ("strides",)
    cost = 11  # after TensorMatch (cost 10), which settles the type and the sizes

    def __init__(self, strides: dict) -> None:
        if not strides or any(type(d) is not int or type(s) is not int for d, s in strides.items()):
            raise ValueError(f"UnitStrideMatch needs {{dim: stride}} of ints, got {strides!r}")
        self.strides = tuple(sorted(strides.items()))

    def render(self, var: str, ns: Namespace) -> str:
        return " and ".join(f"{var}.stride({dim}) == {stride}" for dim, stride in self.strides)

    def explain(self, value: object) -> str | None:
        if not isinstance(value, torch.Tensor):
            return f"expected a tensor, got {type_name(type(value))}"
        for dim, stride in self.strides:
            if dim >= value.dim() or value.stride(dim) != stride:
                got = value.stride(dim) if dim < value.dim() else "no such dim"
                return f"stride({dim}) changed {stride} -> {got}"
        return None

    def describe(self) -> str:
        return f"UnitStrideMatch({dict(self.strides)})"

    def _key(self) -> tuple:
        return self.strides


class StorageOffsetMatch(Check):
    """`v.storage_offset() == offset`: where a tensor starts in its storage. Graphs read tensors through their
    views, so TensorMatch leaves the offset free; this check is added only where the captured code read it (a
    `storage_offset()` call made a Python constant of it)."""

    __slots__ = ("offset",)
    cost = 11  # after TensorMatch (cost 10), which settles that the value is a tensor of the expected type

    def __init__(self, offset: int) -> None:
        if type(offset) is not int or offset < 0:
            raise ValueError(f"StorageOffsetMatch needs an offset >= 0, got {offset!r}")
        self.offset = offset

    def render(self, var: str, ns: Namespace) -> str:
        return f"{var}.storage_offset() == {self.offset}"

    def explain(self, value: object) -> str | None:
        if not isinstance(value, torch.Tensor):
            return f"expected a tensor, got {type_name(type(value))}"
        got = value.storage_offset()
        return None if got == self.offset else f"storage_offset() changed {self.offset} -> {got}"

    def describe(self) -> str:
        return f"StorageOffsetMatch({self.offset})"

    def _key(self) -> tuple:
        return (self.offset,)


# The torch global state a graph depends on: (label, reader). Readers are C functions; called with no argument.
def _autocast_reader(device_type: str):
    is_enabled = torch.is_autocast_enabled
    return lambda: is_enabled(device_type)


_STATE_FIELDS = (
    ("grad mode", torch.is_grad_enabled),
    ("default dtype", torch.get_default_dtype),
    ("autocast (cpu)", _autocast_reader("cpu")),
    ("autocast (cuda)", _autocast_reader("cuda")),
    ("deterministic algorithms", torch._C._get_deterministic_algorithms),
    ("inference mode", torch.is_inference_mode_enabled),
    # a TorchFunctionMode decides what every torch call does: an entry serves only the depth it was made under
    # (capture runs none under a mode: Note [Torch function modes] in capture/frame.py)
    ("torch function modes", torch._C._len_torch_function_stack),
)
# One C call that says "no autocast anywhere": cheaper than asking per device (107 ns against 150-280 ns each).
_any_autocast = getattr(torch._C, "_is_any_autocast_enabled", None)


class GlobalStateMatch(Check):
    """A root check: torch global state at construction (grad mode, default dtype, autocast on cpu and cuda with
    its dtype where enabled, deterministic algorithms, inference mode, the depth of the TorchFunctionMode stack)
    must be the same when the guard runs.

    When no autocast was on anywhere, the rendered test asks "is autocast on anywhere" in one call, so turning it
    on for any device (not only cpu or cuda) fails the check; explain() reports that case too. When some autocast
    was on, cpu and cuda are asked one by one.
    """

    __slots__ = ("state", "autocast_dtypes", "no_autocast_anywhere")
    cost = 0

    def __init__(self) -> None:
        self.state = tuple(read() for _, read in _STATE_FIELDS)
        self.autocast_dtypes = tuple(
            torch.get_autocast_dtype(device) if enabled else None
            for device, enabled in (("cpu", self.state[2]), ("cuda", self.state[3]))
        )
        # Taken from the snapshot itself: with autocast on for another device (xpu, mps), "none anywhere" would
        # never hold again and every call would miss.
        self.no_autocast_anywhere = _any_autocast is not None and not _any_autocast()

    def render(self, var: str, ns: Namespace) -> str:
        grad, dtype, cpu, cuda, deterministic, inference, modes = self.state
        terms = [
            f"{ns.constant(torch.is_grad_enabled, 'is_grad_enabled')}() is {grad}",
            f"{ns.constant(torch.get_default_dtype, 'get_default_dtype')}() is {ns.constant(dtype, 'dtype')}",
        ]
        if self.no_autocast_anywhere:
            terms.append(f"{ns.constant(_any_autocast, 'is_any_autocast_enabled')}() is False")
        else:
            is_enabled = ns.constant(torch.is_autocast_enabled, "is_autocast_enabled")
            get_dtype = ns.constant(torch.get_autocast_dtype, "get_autocast_dtype")
            for device, enabled, autocast_dtype in (("cpu", cpu, self.autocast_dtypes[0]),
                                                    ("cuda", cuda, self.autocast_dtypes[1])):
                terms.append(f"{is_enabled}({device!r}) is {enabled}")
                if enabled:
                    terms.append(f"{get_dtype}({device!r}) is {ns.constant(autocast_dtype, 'dtype')}")
        terms.append(f"{ns.constant(torch._C._get_deterministic_algorithms, 'get_deterministic')}() is {deterministic}")
        terms.append(f"{ns.constant(torch.is_inference_mode_enabled, 'is_inference_mode_enabled')}() is {inference}")
        terms.append(f"{ns.constant(torch._C._len_torch_function_stack, 'len_torch_function_stack')}() == {modes}")
        return " and ".join(terms)

    def explain(self, value: object = None) -> str | None:
        """Reads the current state (`value` is ignored) and names every item that changed."""
        now = tuple(read() for _, read in _STATE_FIELDS)
        changes = [f"{label} changed {old} -> {new}"
                   for (label, _), old, new in zip(_STATE_FIELDS, self.state, now) if old != new]
        for device, index, old in (("cpu", 2, self.autocast_dtypes[0]), ("cuda", 3, self.autocast_dtypes[1])):
            if now[index] and self.state[index] and torch.get_autocast_dtype(device) is not old:
                changes.append(f"autocast dtype ({device}) changed {old} -> {torch.get_autocast_dtype(device)}")
        if not changes and self.no_autocast_anywhere and _any_autocast():
            changes.append("autocast changed False -> True (on a device other than cpu and cuda)")
        return "; ".join(changes) or None

    def describe(self) -> str:
        grad, dtype, cpu, cuda, deterministic, inference, modes = self.state
        parts = [f"grad={grad}", f"default_dtype={str(dtype).removeprefix('torch.')}",
                 f"autocast_cpu={cpu}", f"autocast_cuda={cuda}", f"deterministic={deterministic}"]
        if inference:
            parts.append("inference_mode=True")
        if modes:
            parts.append(f"torch_function_modes={modes}")
        return f"GlobalStateMatch({', '.join(parts)})"

    def _key(self) -> tuple:
        return (self.state, self.autocast_dtypes, self.no_autocast_anywhere)


def storage_pattern(places, written=None) -> tuple:
    """`places`: (storage data pointer, storage offset) of each tensor; `written`: the indices of the tensors the
    graph writes (None: every one). For each: the index of the first tensor sharing its storage, and, where it
    shares one that a written tensor is in, its storage offset. With shapes and strides guarded, an equal pattern
    means the same overlaps between each written tensor and the others. Offsets within a storage no write reaches
    are left out: reading views of it is the same whatever they overlap, and where they sit can change on every
    call (the rows of one `nonzero()` result handed to a loop's resume function, one per iteration)."""
    first, pattern = {}, []
    for index, (pointer, _) in enumerate(places):
        pattern.append(first.setdefault(pointer, index) if pointer else index)
    shared = {p for i, p in enumerate(pattern) if p != i}
    if written is not None:
        shared &= {pattern[i] for i in written}
    return tuple((p, places[i][1] if p in shared else None) for i, p in enumerate(pattern))


def _place(tensor) -> tuple:
    return tensor.untyped_storage().data_ptr(), tensor.storage_offset()


class StorageOverlapMatch(Relation):
    """The value (a tensor the graph writes in place) and the other tensor inputs share storage as they did when
    compiled, at the same offsets: a backend that functionalizes the graph (aot_eager, inductor) compiled the
    reads and writes for that aliasing (views of one base disjoint on one call and overlapping on the next would
    read stale values). Like Dynamo's storage-overlap guard."""

    __slots__ = ("pattern", "written")
    cost = 45

    def __init__(self, other_paths, other_names, pattern, written=None) -> None:
        super().__init__(other_paths, other_names)
        self.pattern = tuple(pattern)
        #: indices (into the others, then the value itself) of the tensors the graph writes; None: every one
        self.written = None if written is None else frozenset(written)

    def holds_for(self, values) -> bool:
        return storage_pattern(list(map(_place, values)), self.written) == self.pattern

    def render_relation(self, var: str, others: list, ns: Namespace) -> str:
        return f"{ns.constant(self.holds_for, 'overlap')}(({', '.join([*others, var])},))"

    def explain(self, value: object) -> str | None:
        own, *others = value
        if self.holds_for((*others, own)):
            return None
        return f"shares storage with {', '.join(self.other_names)} differently than when compiled (overlapping views)"

    def describe(self) -> str:
        return f"StorageOverlapMatch(with {', '.join(self.other_names)})"

    def _key(self) -> tuple:
        return (self.other_paths, self.pattern, self.written)
