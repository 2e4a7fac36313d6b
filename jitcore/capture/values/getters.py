"""operator.itemgetter / attrgetter / methodcaller objects and functools.lru_cache wrappers made while tracing.

A getter is its arguments; calling it asks the item, attribute or method-call protocol of its argument, as
Modules/_operator.c does (`itemgetter(1, 2)(x)` is `(x[1], x[2])`, `attrgetter("a.b")(x)` is `x.a.b`). A function
wrapped by functools.lru_cache inside the traced code is traced on a miss; a hit (the same constant or
same-object arguments again) returns the remembered value without running it again, as the cache would.
Registered as CONSTRUCT rules on the three classes and on functools' C `_lru_cache_wrapper`.
"""
from __future__ import annotations

import functools
import operator

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.base import Value, NOT_CONSTANT
from jitcore.capture.values.call_rules import CallRule, Meaning, KNOWN_CALLABLE, register_callable, call
from jitcore.capture.values.dunders import attribute
from jitcore.capture.values.mapping import DictValue
from jitcore.capture.values.sequence import TupleValue
from jitcore.capture.values.wrapping import wrap

__all__ = ["GetterValue", "LruCacheValue", "GETTER_TYPES", "getter_from_object"]


class GetterValue(Value):
    """An itemgetter, attrgetter or methodcaller: `getter_type` and the arguments it was made with."""

    __slots__ = ("getter_type", "args", "kwargs")

    def __init__(self, getter_type, args, kwargs):
        super().__init__(None)
        self.getter_type = getter_type
        self.args = list(args)
        self.kwargs = dict(kwargs)

    def python_type(self):
        return self.getter_type

    def children(self):
        return self.args + list(self.kwargs.values())

    def call(self, state, args, kwargs):
        if len(args) != 1 or kwargs:
            raise GraphBreak.raises(TypeError, f"{self.getter_type.__name__} expected 1 argument, "
                                               f"got {len(args)}")
        target = args[0]
        if self.getter_type is operator.methodcaller:
            name = self.args[0].constant()
            return attribute(state, target, name).call(state, self.args[1:], self.kwargs)
        picked = [self._one(state, target, arg) for arg in self.args]
        return picked[0] if len(picked) == 1 else TupleValue(picked)

    def _one(self, state, target, arg):
        if self.getter_type is operator.itemgetter:
            return call(state, operator.getitem, [target, arg], {})
        value = target
        for name in arg.constant().split("."):
            value = attribute(state, value, name)
        return value

    def reconstruct(self, codegen):
        if self.source is not None:
            return self.source.emit(codegen)  # the very object passed in
        args = "".join(f"{codegen.load(a)}, " for a in self.args)
        kwargs = "".join(f"{k}={codegen.load(v)}, " for k, v in self.kwargs.items())
        return f"{codegen.constant_object(self.getter_type, 'type')}({args}{kwargs})"


def getter_from_object(state, getter) -> "GetterValue":
    """The value of a real getter passed in (guarded by identity by the caller): rebuilt from what it pickles as
    (`itemgetter(1).__reduce__()` is `(itemgetter, (1,))`; a methodcaller with keywords reduces to a partial)."""
    maker, args = getter.__reduce__()[:2]
    kwargs = {}
    if isinstance(maker, functools.partial):
        args, kwargs = maker.args + args, dict(maker.keywords)
    return GetterValue(type(getter), [wrap(state, a, None) for a in args],
                       {k: wrap(state, v, None) for k, v in kwargs.items()})


#: the getter types, whose objects passed in become GetterValues (values/__init__.py)
GETTER_TYPES = (operator.itemgetter, operator.attrgetter, operator.methodcaller)


def _getter(state, cls, args, kwargs):
    if not args or (kwargs and cls is not operator.methodcaller):
        return NotImplemented
    if cls is not operator.itemgetter and any(type(a.constant()) is not str for a in args[:1 if cls is
                                                                                       operator.methodcaller else None]):
        return NotImplemented  # attribute and method names must be strings: Python's TypeError
    return GetterValue(cls, args, kwargs)


for _cls in (operator.itemgetter, operator.attrgetter, operator.methodcaller):
    register_callable(_cls, KNOWN_CALLABLE, CallRule(f"operator.{_cls.__name__}", Meaning.CONSTRUCT, _getter))


class LruCacheValue(Value):
    """functools.lru_cache(fn) made while tracing: results remembered by their arguments' keys."""

    __slots__ = ("fn", "results", "attrs")

    def __init__(self, fn):
        super().__init__(None)
        self.fn = fn
        #: argument key -> the value the call returned
        self.results = {}
        #: attributes set on the wrapper (functools.update_wrapper copies __name__, __doc__ ... onto it)
        self.attrs = {}

    def python_type(self):
        return functools._lru_cache_wrapper

    def children(self):
        return [self.fn]

    def getattr(self, state, name):
        if name in self.attrs:
            return self.attrs[name]
        if name == "__wrapped__":
            return self.fn
        if name == "__dict__":
            return DictValue(self.attrs)  # shares the attribute storage, as an instance's __dict__ does
        return super().getattr(state, name)

    def setattr(self, state, name, value):
        self.attrs[name] = value  # the wrapper was made while tracing: nothing outside has seen it

    def call(self, state, args, kwargs):
        key = tuple(_key(v) for v in args) + tuple((k, _key(v)) for k, v in sorted(kwargs.items()))
        if key not in self.results:
            self.results[key] = self.fn.call(state, args, kwargs)
        return self.results[key]


def _key(value):
    """How the cache tells arguments apart: a constant by value, a tensor by the object (its hash is its id)."""
    c = value.constant()
    if c is not NOT_CONSTANT:
        try:
            hash(c)
        except TypeError as exc:
            raise GraphBreak.raises(TypeError, f"{exc}") from None
        return ("value", type(c), c)
    if value.is_tensor():
        return ("object", id(value))
    raise GraphBreak("unsupported_value", f"an lru_cache argument that is a {value.kind_name}")


def _lru_cache_wrapper(state, cls, args, kwargs):
    if len(args) != 4 or kwargs:
        return NotImplemented
    return LruCacheValue(args[0])


register_callable(functools._lru_cache_wrapper, KNOWN_CALLABLE,
                  CallRule("functools lru_cache", Meaning.CONSTRUCT, _lru_cache_wrapper))
