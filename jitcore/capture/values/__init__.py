"""Value kinds, and `wrap()`: the one place a real Python object becomes a value (with its guards).

Each kind registers the exact types it claims (`_BY_TYPE`) or a predicate with an explicit priority
(`_BY_PREDICATE`); a test fails if two kinds claim one type. The tables are installed into values/wrapping.py,
where `wrap()` lives so that kind modules can import it at their top. Wrapping an object read from a source
installs the guard that the kind relies on (a tensor's metadata, a constant's value, a module's identity).
"""
from __future__ import annotations

import collections
import contextvars
import enum
import functools
import math
import os
import sys
import types

import torch

from jitcore.guards import (TensorMatch, TypeMatch, IdMatch, EqualsMatch, LengthMatch, DictKeysMatch, SetMatch,
                            ReduceMatch)
from jitcore.capture.breaks import GraphBreak
from jitcore.capture.sources import ItemSource, AttrSource, DictItemSource, LocalSource, ModuleDictSource
from jitcore.capture.values import constructors, torch_rules, torch_probes  # noqa: F401 (they register call rules)
from jitcore.capture.values import sets  # noqa: F401 (it registers set and frozenset with const())
from jitcore.capture.values import cached_call, copy_rules, dunders, getters, heapq_rules, itertools_rules, module_conversion  # noqa: F401 (call rules)
from jitcore.capture.values import vmap  # noqa: F401 (torch.vmap's call rule)
from jitcore.capture.values import function_mode_rules  # noqa: F401 (TorchFunctionMode's call rules)
from jitcore.capture.values import module_buffers  # noqa: F401 (nn.Module.register_buffer's call rule)
from jitcore.capture.values.numpy_rules import is_numpy_function
from jitcore.capture.values.ndarray import array_input, np
from jitcore.capture.values.collections_kinds import OrderedDictValue, DefaultDictValue, DequeValue
from jitcore.capture.values.sets import SetValue
from jitcore.capture.values.base import Value, NOT_CONSTANT, NULL, NullValue
from jitcore.capture.values.builtins import BuiltinValue
from jitcore.capture.values.call_rules import Meaning, first_rule
from jitcore.capture.values.constant import ConstantValue, CONSTANT_TYPES, ANNOTATION_TYPES, const
from jitcore.capture.values.function import (LookasideValue, UserFunctionValue, TorchFunctionValue, UserMethodValue,
                                             structural_function)
from jitcore.capture.values.partial import PartialValue
from jitcore.capture.values.registry_dict import RegistryDictValue, identity_class, identity_hashed
from jitcore.capture.values.getters import GETTER_TYPES, getter_from_object
from jitcore.capture.values.user_object import UserObjectValue, is_plain_instance
from jitcore.capture.values.mapping import DictValue
from jitcore.capture.values.module import ModuleValue, structural_module
from jitcore.capture.values.objects import PythonModuleValue, ClassValue, is_trusted_module
from jitcore.capture.values.opaque import OpaqueValue, NativeFunctionValue
from jitcore.capture.values.sequence import TupleValue, ListValue
from jitcore.capture.values.tensor import TensorValue
from jitcore.capture.values.wrapping import wrap, install
from jitcore.capture.values.symint import make_dynamic_int
from jitcore.capture.values.dict_object import DictObjectValue
from jitcore.capture.values.environ import EnvironValue
from jitcore.capture.values.context_vars import wrap_context_var
from jitcore.capture.values.iterator_input import ITERATOR_INPUT_TYPES, wrap_iterator

__all__ = ["wrap", "Value", "NOT_CONSTANT", "NULL", "NullValue", "const", "claimed_types"]


_NO_TORCH_FUNCTION = torch._C._disabled_torch_function_impl


def _guard(state, source, check):
    if source is not None:
        state.ctx.guard(source, check)


def _wrap_tensor(state, value, source):
    if source is None:
        raise GraphBreak("unsupported_value", "a tensor jitcore cannot reload at run time (no source)")
    _guard(state, source, TensorMatch(value))
    if type(value) is not torch.Tensor and type(value).__torch_function__ is not _NO_TORCH_FUNCTION:
        # a subclass's __torch_function__ runs on every operation and types the results: eager semantics only
        brk = GraphBreak("tensor_subclass", f"{source.user_name} is a {type(value).__qualname__}")
        brk.whole_frame = True
        raise brk
    node, fake = state.graph.add_input(source, value)
    tv = TensorValue(node, fake, source, type(value), getattr(value, "__dict__", None))
    state.graph.inputs[source] = tv
    return tv


def _wrap_op(state, value, source):
    """torch.ops.<namespace>.<op> (an OpOverloadPacket or one overload): one graph node, guarded by identity."""
    _guard(state, source, IdMatch(value))
    return TorchFunctionValue(value, source)


def _dynamic_argument(state, value, source) -> bool:
    """An int or float argument under `dynamic=True`, or one an argument's tuple, list or dict holds, is symbolic
    from the first call, as torch.compile's (specialize_float=False; its assume_static_by_default is off there).
    A NaN or an infinity stays a constant: the ShapeEnv cannot guard one (torch specialises them too)."""
    if type(value) is float and not math.isfinite(value):
        return False
    while isinstance(source, ItemSource):
        source = source.base
    if not isinstance(source, LocalSource):
        return False
    choice = state.graph.shape_choice
    return choice is not None and choice.mode is True


def _wrap_constant(state, value, source):
    if type(value) is slice and not all(type(part) in _SLICE_PART_TYPES for part in
                                        (value.start, value.stop, value.step)):
        # A slice Python built around a tensor (a resume function's stack after the break at BUILD_SLICE): equality
        # would compare the tensor elementwise and pass for the same tensor written in place, and its fake would
        # meet a real tensor; the indexing runs in Python, as it did where the slice was built.
        raise GraphBreak("data_dependent" if any(isinstance(part, torch.Tensor) for part in
                                                 (value.start, value.stop, value.step)) else "unsupported_value",
                         "a slice bound that is not a Python constant")
    if type(value) in (int, float) and source is not None and (source.path in state.ctx.dynamic_paths
                                                               or _dynamic_argument(state, value, source)):
        _guard(state, source, TypeMatch(type(value)))
        return make_dynamic_int(state, value, source)
    _guard(state, source, EqualsMatch(value))
    return ConstantValue(value, source)


#: what a slice's bounds may be for the slice to be one constant: `__index__` of anything else may run user code
_SLICE_PART_TYPES = (int, bool, type(None))


def _wrap_tuple(state, value, source):
    # Note [A torch.Size read from a source]: a torch.Size argument (one a resume function receives after a break at
    # `t.shape` of a data-dependent size, or one the user passes) is a tuple of ints, each guarded on its own, so a
    # size that changes between calls becomes a dynamic int (automatic dynamic) as torch.compile's SizeVariable
    # items do, instead of one equality guard on the whole Size that recompiles for every size.
    _guard(state, source, TypeMatch(type(value)))
    _guard(state, source, LengthMatch(len(value)))
    items = [wrap(state, item, ItemSource(source, i) if source is not None else None) for i, item in
             enumerate(value)]
    return TupleValue(items, source, tuple_type=None if type(value) is tuple else type(value))


def _wrap_list(state, value, source):
    if source is None:
        raise GraphBreak("unsupported_value", "a list jitcore cannot reload at run time (no source)")
    _guard(state, source, TypeMatch(list))
    return ListValue.lazy(state, value, source)


def _is_namespace(state, value) -> bool:
    """A module's globals (what `globals()` or `vars(module)` returns): capture models globals by name (LOAD_GLOBAL,
    STORE_GLOBAL, DELETE_GLOBAL), so a dict value of the same namespace would be a second, unsynchronised model."""
    if value is state.ctx.globals:
        return True
    name = value.get("__name__")
    module = sys.modules.get(name) if type(name) is str else None
    return module is not None and getattr(module, "__dict__", None) is value


def _wrap_dict(state, value, source):
    keys = tuple(value.keys())
    # classes as keys (a TestCase's _type_equality_funcs) hash and compare by identity, as plain `type`s do, and
    # so do those of metaclasses that keep type's (ABCMeta); annotations compare by value (a validator's table)
    if _is_namespace(state, value):
        return OpaqueValue(value, source)
    if not all(type(k) in (str, int, type) or type(k) in ANNOTATION_TYPES or identity_class(k) for k in keys):
        # Note [Lookups in a registry dict] (values/registry_dict.py)
        return RegistryDictValue(value, source) if type(value) is dict else OpaqueValue(value, source)
    if id(value) in state.ctx.wrapping:
        return OpaqueValue(value, source)  # a dict that holds itself: the inner reference is used natively
    _guard(state, source, TypeMatch(type(value)))
    _guard(state, source, DictKeysMatch(keys))
    state.ctx.wrapping.add(id(value))
    try:
        # a subclass's own __getitem__ (ClassInstantier builds a module) is not how the items are read back
        item_source = ItemSource if type(value).__getitem__ is dict.__getitem__ else DictItemSource
        items = {k: wrap(state, v, item_source(source, k) if source is not None else None) for k, v in value.items()}
    finally:
        state.ctx.wrapping.discard(id(value))
    if type(value) is collections.OrderedDict:
        return OrderedDictValue(items, source)
    if type(value) is collections.defaultdict:
        factory = value.default_factory
        factory_source = AttrSource(source, "default_factory") if source is not None else None
        _guard(state, factory_source, IdMatch(factory))  # a missing key calls it: which one is relied on
        return DefaultDictValue(items, None if factory is None else wrap(state, factory, factory_source), source)
    if source is not None and type(value) is not dict and type(getattr(value, "__dict__", None)) is dict:
        return DictObjectValue(value, items, source)
    return DictValue(items, source, dict_type=type(value))


def _wrap_module(state, value, source):
    if state.ctx.by_structure(source):
        return structural_module(state, value, source)
    _guard(state, source, IdMatch(value))
    return ModuleValue(value, source)


#: the value kind for a callable, by the meaning of its first call rule (NATIVE also takes the rule's break kind)
_CALLABLE_KINDS = {Meaning.GRAPH: TorchFunctionValue, Meaning.LOOKASIDE: LookasideValue, Meaning.BUILTIN: BuiltinValue,
                   Meaning.INLINE: UserFunctionValue, Meaning.OPAQUE: OpaqueValue}


def _is_pybind_function(value) -> bool:
    """A module-level function pybind11 made (torch._C._get_tracing_state): a builtin bound to pybind's own record
    of the function, one object for the life of the module like any module function."""
    return type(value.__self__).__module__ == "pybind11_builtins"


def _wrap_callable(state, value, source):
    """A function or builtin: the value kind its first call rule's meaning asks for, guarded by identity where it
    was read from (a global rebound to another function, another function passed in, a module attribute switched
    must recompile, whatever the meaning); a builtin bound to an instance, by type."""
    rule = first_rule(value, state.ctx.rule_answers)
    owner = getattr(value, "__self__", None)
    if type(value) is types.BuiltinMethodType and isinstance(owner, type):
        # a C classmethod read from its class (dict.fromkeys) is a new object on every read, equal to the last
        _guard(state, source, EqualsMatch(value))
        return _CALLABLE_KINDS.get(rule.meaning if rule else Meaning.OPAQUE, OpaqueValue)(value, source)
    if source is None and type(value) is types.MethodWrapperType and rule is not None \
            and rule.meaning is Meaning.LOOKASIDE:
        # made by capture itself (a tensor property's getter handed to a TorchFunctionMode): its rule models it
        return LookasideValue(value, None)
    if owner is not None and not isinstance(owner, (types.ModuleType, type)) and not _is_pybind_function(value):
        # a builtin method bound to an instance is a fresh object on every read: identity never matches
        _guard(state, source, TypeMatch(type(value)))
        return OpaqueValue(value, source)
    if type(value) is types.FunctionType and state.ctx.by_structure(source) and (
            rule is None or rule.meaning is Meaning.INLINE):
        # a function made by each call (a lambda, a closure) shared by code: Note [Instances shared by structure]
        return structural_function(state, value, source)
    _guard(state, source, IdMatch(value))
    if rule is None:  # a callable no rule claims (a Cython function): not looked into
        return OpaqueValue(value, source)
    if rule.meaning is Meaning.NATIVE:
        return NativeFunctionValue(value, source, rule.break_kind)
    return _CALLABLE_KINDS[rule.meaning](value, source)


def _wrap_method(state, value, source):
    self_value = wrap(state, value.__self__, AttrSource(source, "__self__") if source is not None else None)
    fn = value.__func__
    if not hasattr(fn, "__code__"):
        return OpaqueValue(value, source)
    _guard(state, AttrSource(source, "__func__") if source is not None else None, IdMatch(fn))
    return UserMethodValue(fn, self_value, source)


def _wrap_pymodule(state, value, source):
    """A user module by identity; torch or the standard library by type only: what capture reads from it (a
    function, a constant) is guarded on the attribute's own source, so `lib` switching from torch to a namespace
    whose `relu` is tanh, or torch.relu monkeypatched, recompiles."""
    _guard(state, source, IdMatch(value) if not is_trusted_module(value.__name__) else TypeMatch(type(value)))
    return PythonModuleValue(value, source)


def _wrap_class(state, value, source):
    # torch's classes too: `Kind = torch.Tensor` rebound to torch.nn.Parameter changes what isinstance answers
    _guard(state, source, IdMatch(value))
    return ClassValue(value, source)


def _wrap_code(state, value, source):
    _guard(state, source, IdMatch(value))
    return ConstantValue(value, source)


#: (exact type, wrapper) in the order the kinds claim them: a type claimed twice is a bug (test_opcode_table)
_CLAIMS = [(t, _wrap_constant) for t in CONSTANT_TYPES + ANNOTATION_TYPES if t is not torch.Size] + [
    (types.CodeType, _wrap_code),
    (tuple, _wrap_tuple),
    # Note [A torch.Size read from a source]
    (torch.Size, _wrap_tuple),
    (list, _wrap_list),
    (dict, _wrap_dict),
    (types.FunctionType, _wrap_callable),
    (types.BuiltinFunctionType, _wrap_callable),
    (types.MethodDescriptorType, _wrap_callable),
    (types.WrapperDescriptorType, _wrap_callable),
    (types.MethodWrapperType, _wrap_callable),
    (types.ClassMethodDescriptorType, _wrap_callable),
    (types.MethodType, _wrap_method),
    (types.ModuleType, _wrap_pymodule),
]
_BY_TYPE = dict(_CLAIMS)

#: (priority, predicate, wrapper): higher priority first; used when the exact type is not in _BY_TYPE
_BY_PREDICATE = [
    (30, lambda v: isinstance(v, torch.Tensor), _wrap_tensor),
    (25, torch_rules.is_op_overload, _wrap_op),
    (20, lambda v: isinstance(v, torch.nn.Module), _wrap_module),
    (10, lambda v: isinstance(v, type), _wrap_class),
    (7, lambda v: isinstance(v, types.ModuleType), _wrap_pymodule),
    (6, lambda v: isinstance(v, enum.Enum), _wrap_constant),
    (5, lambda v: isinstance(v, tuple) and hasattr(type(v), "_fields"), _wrap_tuple),
    (4, lambda v: isinstance(v, dict), _wrap_dict),
    (3, is_numpy_function, _wrap_callable),
]


def claimed_types() -> list:
    """(type, wrapper name) for every claim in order, for the test that no type is claimed twice."""
    return [(t, w.__name__) for t, w in _CLAIMS]


def _wrap_opaque(state, value, source):
    _guard(state, source, TypeMatch(type(value)))
    if is_plain_instance(value):
        return UserObjectValue(value, source)
    return OpaqueValue(value, source)


def _wrap_iterator(state, value, source):
    wrapped = wrap_iterator(state, value, source)
    return wrapped if wrapped is not None else _wrap_opaque(state, value, source)


def _wrap_environ(state, value, source):
    if value is not os.environ:
        return _wrap_opaque(state, value, source)
    _guard(state, source, IdMatch(value))
    return EnvironValue(value, source)


def _wrap_partial(state, value, source):
    _guard(state, source, TypeMatch(type(value)))
    sub = (lambda name: AttrSource(source, name)) if source is not None else (lambda name: None)
    fn = wrap(state, value.func, sub("func"))
    args = wrap(state, value.args, sub("args"))
    keywords = wrap(state, value.keywords, sub("keywords"))
    if not isinstance(keywords, DictValue):
        return OpaqueValue(value, source)
    return PartialValue(fn, list(args.iterate(state)), dict(keywords.items), source)


_BY_TYPE[functools.partial] = _wrap_partial


def _wrap_script_function(state, value, source):
    """A torch.jit.script function: the Python function it was compiled from, which torch.jit.script keeps on it
    for torch.compile (`_torchdynamo_inline`), traced in its place; both compute the same."""
    original = getattr(value, "_torchdynamo_inline", None)
    if type(original) is not types.FunctionType:
        return _wrap_opaque(state, value, source)
    _guard(state, source, IdMatch(value))
    return wrap(state, original, AttrSource(source, "_torchdynamo_inline") if source is not None else None)


_BY_TYPE[torch.jit.ScriptFunction] = _wrap_script_function
_BY_TYPE[functools._lru_cache_wrapper] = _wrap_callable  # asked of the real cache: values/cached_call.py
_BY_TYPE.update(dict.fromkeys(ITERATOR_INPUT_TYPES, _wrap_iterator))
_BY_TYPE[type(os.environ)] = _wrap_environ


def _wrap_context_var(state, value, source):
    """A ContextVar from a source: its get/set/reset are modelled (Note [Context variables],
    values/context_vars.py); one without a source stays opaque."""
    return wrap_context_var(state, value, source) if source is not None else _wrap_opaque(state, value, source)


_BY_TYPE[contextvars.ContextVar] = _wrap_context_var


def _wrap_getter(state, value, source):
    """operator.itemgetter / attrgetter / methodcaller passed in: immutable, so one made with the same constant
    arguments behaves the same (ReduceMatch: a new getter per call does not recompile); else by identity."""
    maker, args = value.__reduce__()[:2]
    if maker is type(value) and all(type(a) in (int, str, bool, float, type(None)) for a in args):
        _guard(state, source, ReduceMatch(type(value), args))
    else:
        _guard(state, source, IdMatch(value))
    getter = getter_from_object(state, value)
    getter.source = source
    return getter


for _getter_type in GETTER_TYPES:
    _BY_TYPE[_getter_type] = _wrap_getter


def _wrap_set(state, value, source):
    """A set or frozenset passed in: members and their iteration order guarded (SetMatch), so it is read,
    iterated and changed as a SetValue (changes written back as discards and adds)."""
    if source is None or len(value) > _SET_GUARD_LIMIT or not all(
            type(m) in _SET_MEMBER_TYPES or type(value) is frozenset and (isinstance(m, type) or identity_hashed(m))
            for m in value):
        # a frozenset of classes and functions (dataclasses' _ATOMIC_TYPES, pytree's BUILTIN_TYPES with
        # collections.namedtuple) compares its members by identity: modelled too
        return _wrap_opaque(state, value, source)
    _guard(state, source, SetMatch(value))
    # a function member is known by identity, as a lookup of that function finds it (sets.member_key)
    members = [wrap(state, m, None) if callable(m) and not isinstance(m, type) else const(m) for m in value]
    return SetValue(members, source, set_type=type(value), state=state)


#: member types a set passed in may hold to be modelled (compared by value, guarded by SetMatch)
_SET_MEMBER_TYPES = frozenset({int, str, float, bool, bytes, type(None)})
#: larger sets stay opaque: SetMatch compares every member on every call
_SET_GUARD_LIMIT = 256


def _wrap_deque(state, value, source):
    if source is None:
        return _wrap_opaque(state, value, source)
    _guard(state, source, TypeMatch(collections.deque))
    return DequeValue.passed_in(state, value, source)


def _wrap_array(state, value, source):
    """An ndarray passed in: the graph reads it as the tensor sharing its memory (values/ndarray.py)."""
    array = array_input(state, value, source) if source is not None else None
    return array if array is not None else _wrap_opaque(state, value, source)


if np is not None:
    _BY_TYPE[np.ndarray] = _wrap_array
    # NumPy's scalars are immutable values, guarded like Python's numbers (exact type and value)
    _BY_TYPE.update(dict.fromkeys({t for t in np.sctypeDict.values() if issubclass(t, (np.number, np.bool_))},
                                  _wrap_constant))
_BY_TYPE[set] = _wrap_set
_BY_TYPE[frozenset] = _wrap_set
_BY_TYPE[collections.deque] = _wrap_deque

#: wrappers of objects that can change in place: one such object read from two sources is one value (guarded `is`)
_MUTABLE_KINDS = frozenset({_wrap_tensor, _wrap_list, _wrap_dict, _wrap_opaque, _wrap_module, _wrap_set,
                            _wrap_deque, _wrap_iterator, _wrap_array, _wrap_context_var})


def _identity_kind(wrapper, source, ctx):
    """How wrap() treats the identity of an object read from `source` with `wrapper`: None (a value or an object
    guarded by identity anyway), "same" (shared when reached twice), "distinct" (also guarded to stay distinct from
    the others: capture modelled it as its own object). Modules are guarded by identity, parameters and buffers with
    the module state; captured by structure, neither is pinned, so they are kept distinct like any input."""
    if wrapper not in _MUTABLE_KINDS:
        return None
    if wrapper is _wrap_context_var:
        # guarded by identity: one value for the variable however it is reached, so its changes are one log
        return "same"
    if (wrapper is _wrap_module or isinstance(source, ModuleDictSource)) and not ctx.by_structure(source):
        return "same"
    return "distinct"


install(_BY_TYPE, _BY_PREDICATE, _wrap_opaque, _identity_kind)
