"""Call rules for calling a class: which value kind `cls(*args, **kwargs)` makes while tracing.

Registered into the call-rule registry (values/call_rules.py) with meaning CONSTRUCT: known classes by identity (the
grad-mode and autocast regions, torch's constant types) and kinds of class by predicate, in priority order (a
namedtuple, an nn.Module, an exception, a dict subclass, a plain Python class). A class nothing claims is a break.
The builtin classes (int, list, dict, super, functools.partial ...) are builtins' rules (values/builtins.py).
"""
from __future__ import annotations

import types

import torch

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.base import Value, NOT_CONSTANT
from jitcore.capture.values.call_rules import (CallRule, Meaning, register_callable, register_predicate,
                                               KNOWN_CALLABLE, NAMEDTUPLE_CLASS, MODULE_CLASS, EXCEPTION_CLASS,
                                               DICT_CLASS, PLAIN_CLASS, BY_TYPE)
from jitcore.capture.values.constant import const, fold
from jitcore.capture.values.context import context_for, REGION_CLASSES
from jitcore.capture.values.dict_object import NewDictObjectValue, dict_constructible
from jitcore.capture.values.module import NewModuleValue, new_module_argument, NOT_REAL, check_stateless
from jitcore.capture.values.function import UserFunctionValue, UserMethodValue
from jitcore.capture.values.exception import exception_constructible, construct_exception
from jitcore.capture.values.sequence import SequenceValue, TupleValue
from jitcore.capture.values.user_object import (NewObjectValue, constructible, class_lookup, relied_class_lookup,
                                                _MISSING)

# torch.compile replaces nn.Module.__init__ with a wrapper the first time it runs (Dynamo's
# install_generation_tagging_init): the rule holds for torch's own __init__ and for whatever nn.Module's class dict
# holds now, so a program that used torch.compile once still builds its modules made inside in the graph
_MODULE_INIT = torch.nn.Module.__init__

__all__ = []


def _region(state, cls, args, kwargs):
    """A grad-mode or autocast region; other arguments construct the class like any other."""
    region = context_for(state, cls, args, kwargs)
    return NotImplemented if region is None else region


def _fold_constant(state, cls, args, kwargs):
    """torch.Size, torch.device ... of constants are constants; a torch.Size of ints some of which are symbolic
    sizes (`torch.Size([x.shape[0], 2])`) is a Size of those values, which pins none of them."""
    if cls is torch.Size and len(args) == 1 and not kwargs and isinstance(args[0], SequenceValue):
        items = list(args[0].sequence_items())
        if any(v.is_symbolic_number() for v in items) and all(v.python_type() is int for v in items):
            return TupleValue(items, tuple_type=torch.Size)
    a = [v.constant() for v in args]
    if NOT_CONSTANT in a or kwargs:
        return NotImplemented
    return const(fold(state, cls, *a))


def _is_namedtuple(cls) -> bool:
    return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")


def _namedtuple(state, cls, args, kwargs):
    names = list(cls._fields)
    bound = list(args) + [None] * (len(names) - len(args))
    for k, v in kwargs.items():
        if k not in names:
            raise GraphBreak.raises(TypeError, f"{cls.__name__}() got an unexpected keyword '{k}'")
        bound[names.index(k)] = v
    defaults = getattr(cls, "_field_defaults", {})
    for i, name in enumerate(names):
        if bound[i] is None:
            if name not in defaults:
                raise GraphBreak.raises(TypeError, f"{cls.__name__}() missing argument '{name}'")
            bound[i] = const(defaults[name])
    return TupleValue(bound, tuple_type=cls)


def _is_module_class(cls) -> bool:
    return isinstance(cls, type) and issubclass(cls, torch.nn.Module)


def _torch_nn_class(cls) -> bool:
    """A module class whose every constructor is torch.nn's own (no user code runs when it is built)."""
    return all(klass.__module__.startswith("torch.nn.") for klass in cls.__mro__
               if klass is not object and "__init__" in klass.__dict__)


def _module(state, cls, args, kwargs):
    """A module made inside the function, without parameters or buffers: torch.nn's classes are built at capture
    time from constant arguments (their constructors only store them); a user class is made by nn.Module.__init__
    and its own __init__ is traced on it."""
    if _torch_nn_class(cls):
        real_args = [new_module_argument(v) for v in args]
        real_kwargs = {k: new_module_argument(v) for k, v in kwargs.items()}
        if NOT_REAL in real_args or NOT_REAL in real_kwargs.values():
            raise GraphBreak("unsupported_call", f"creating a {cls.__qualname__} module from values that are not "
                                                 "constants inside a compiled function")
        with torch.random.fork_rng(devices=[]):
            module = fold(state, cls, *real_args, **real_kwargs)
        check_stateless(module)
        return NewModuleValue(module)
    init = class_lookup(cls, "__init__")
    if cls.__new__ is not torch.nn.Module.__new__ and cls.__new__ is not object.__new__ \
            or not isinstance(init, types.FunctionType):
        raise GraphBreak("unsupported_call", f"creating a {cls.__qualname__} module inside a compiled function")
    module = cls.__new__(cls)
    _MODULE_INIT(module)
    value = NewModuleValue(module)
    state.inline_call(init, [value, *args], kwargs)
    check_stateless(module)
    return value


def _module_init(state, fn, args, kwargs):
    """nn.Module.__init__(self) on a module made inside (a user class's `super().__init__()`): torch's own code,
    run on the real object."""
    if len(args) != 1 or kwargs or not isinstance(args[0], NewModuleValue):
        return NotImplemented
    _MODULE_INIT(args[0].module)
    return const(None)


def _dict_object(state, cls, args, kwargs):
    obj = NewDictObjectValue(cls)
    init = relied_class_lookup(state, cls, "__init__")
    if isinstance(init, types.FunctionType):
        state.inline_call(init, [obj, *args], kwargs)
    else:
        obj.builtin_call_method(state, "__init__", args, kwargs)
    return obj


def _plain_object(state, cls, args, kwargs):
    if getattr(cls, "__abstractmethods__", None):
        try:
            object.__new__(cls)  # an abstract class: object.__new__ raises, with the message Python gives
        except TypeError as exc:
            raise GraphBreak.raises(TypeError, str(exc)) from None
    obj = NewObjectValue(cls)
    init = relied_class_lookup(state, cls, "__init__")
    if init is not _MISSING and init is not object.__init__:
        if not hasattr(init, "__code__"):
            raise GraphBreak("unsupported_call", f"{cls.__qualname__}.__init__ is not a Python function")
        state.inline_call(init, [obj, *args], kwargs)
    elif args or kwargs:
        raise GraphBreak.raises(TypeError, f"{cls.__qualname__}() takes no arguments")
    return obj


def _unmodelled(state, cls, args, kwargs):
    raise GraphBreak("unsupported_call", f"creating a {getattr(cls, '__qualname__', cls)} object")


def _tuple_new(state, fn, args, kwargs):
    """tuple.__new__(cls, iterable=()): a namedtuple's _make and __new__ build their tuple with it."""
    if kwargs or not 1 <= len(args) <= 2:
        return NotImplemented
    cls = args[0].constant()
    if not _is_namedtuple(cls) and cls is not tuple:
        return NotImplemented
    items = args[1].iterate(state) if len(args) == 2 else []
    return TupleValue(items, tuple_type=None if cls is tuple else cls)


register_callable(tuple.__new__, KNOWN_CALLABLE, CallRule("tuple.__new__", Meaning.BUILTIN, _tuple_new))

class BareObjectValue(Value):
    """`object()` made while tracing (a sentinel): it only has its identity; it takes no attributes."""

    __slots__ = ()

    def python_type(self):
        return object

    def truth(self, state):
        return True

    def setattr(self, state, name, value):
        raise GraphBreak.raises(AttributeError, f"'object' object has no attribute '{name}'")

    def reconstruct(self, codegen):
        return f"{codegen.constant_object(object, 'type')}()"


def _bare_object(state, cls, args, kwargs):
    return BareObjectValue() if not args and not kwargs else NotImplemented


register_callable(object, KNOWN_CALLABLE, CallRule("object", Meaning.CONSTRUCT, _bare_object))


def _method_type(state, cls, args, kwargs):
    """types.MethodType(function, obj): a Python function that already existed, bound to a traced value
    (contextlib.ExitStack binds each context manager's __exit__ this way)."""
    if kwargs or len(args) != 2 or not isinstance(args[0], UserFunctionValue) \
            or not isinstance(args[0].fn, types.FunctionType):
        return NotImplemented
    return UserMethodValue(args[0].fn, args[1])


register_callable(types.MethodType, KNOWN_CALLABLE, CallRule("types.MethodType", Meaning.CONSTRUCT, _method_type))


def _simple_namespace(state, cls, args, kwargs):
    """types.SimpleNamespace(**attrs): an object made in the call whose attributes are these."""
    if args or cls is not types.SimpleNamespace:
        return NotImplemented
    obj = NewObjectValue(cls)
    for name, value in kwargs.items():
        obj.raw_setattr(state, name, value)
    return obj


register_callable(types.SimpleNamespace, KNOWN_CALLABLE,
                  CallRule("types.SimpleNamespace", Meaning.CONSTRUCT, _simple_namespace))


def _object_new(state, fn, args, kwargs):
    """object.__new__(cls): an instance without __init__ (copyreg.__newobj__ for copy and pickle, a class's own
    __new__ calling super().__new__(cls)), for the classes NewObjectValue models."""
    if kwargs or len(args) != 1:
        return NotImplemented
    cls = args[0].constant()
    if cls is object:
        return BareObjectValue()
    if cls is NOT_CONSTANT or not constructible(cls):
        return NotImplemented
    return NewObjectValue(cls)


register_callable(object.__new__, KNOWN_CALLABLE, CallRule("object.__new__", Meaning.BUILTIN, _object_new))

_REGION = CallRule("grad-mode or autocast region", Meaning.CONSTRUCT, _region)
for _cls in REGION_CLASSES:
    register_callable(_cls, KNOWN_CALLABLE, _REGION)
_CONSTANT = CallRule("torch constant", Meaning.CONSTRUCT, _fold_constant)
for _cls in (torch.Size, torch.device, torch.dtype, torch.finfo, torch.iinfo):
    register_callable(_cls, KNOWN_CALLABLE, _CONSTANT)

register_predicate(NAMEDTUPLE_CLASS, _is_namedtuple, CallRule("namedtuple", Meaning.CONSTRUCT, _namedtuple))
register_predicate(KNOWN_CALLABLE, lambda fn: fn is _MODULE_INIT or fn is torch.nn.Module.__dict__.get("__init__"),
                   CallRule("nn.Module.__init__ of a module made inside", Meaning.LOOKASIDE, _module_init))
register_predicate(MODULE_CLASS, _is_module_class, CallRule("nn.Module", Meaning.CONSTRUCT, _module))
register_predicate(EXCEPTION_CLASS, exception_constructible,
                   CallRule("exception", Meaning.CONSTRUCT, construct_exception))
register_predicate(DICT_CLASS, dict_constructible, CallRule("dict subclass", Meaning.CONSTRUCT, _dict_object))
register_predicate(PLAIN_CLASS, constructible, CallRule("Python class", Meaning.CONSTRUCT, _plain_object))
register_predicate(BY_TYPE, lambda fn: isinstance(fn, type), CallRule("class", Meaning.CONSTRUCT, _unmodelled))
