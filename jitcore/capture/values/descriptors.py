"""`property(f)`, `staticmethod(f)`, `classmethod(f)` over functions made inside the captured code (what a class
body decorates its methods with; values/class_statement.py builds them into the class it makes), and a property's
`.setter(g)` / `.getter` / `.deleter`. Any other argument leaves the call to the next rule."""
from __future__ import annotations

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.base import Value
from jitcore.capture.values.call_rules import CallRule, Meaning, register_callable, KNOWN_CALLABLE
from jitcore.capture.values.constant import const
from jitcore.capture.values.function import NestedFunctionValue

__all__ = ["DescriptorValue"]

_WRAPPERS = (property, staticmethod, classmethod)

class DescriptorValue(Value):
    """`property(f)`, `staticmethod(f)`, `classmethod(f)` (and a property's `.setter(g)` ...) over functions made
    inside: what a class body decorates its methods with. `funcs`: the functions (fget, fset, fdel, or the one
    wrapped), None where unset."""

    __slots__ = ("wrapper", "funcs")

    def __init__(self, wrapper, funcs):
        super().__init__(None)
        self.wrapper = wrapper
        self.funcs = funcs

    def python_type(self):
        return self.wrapper

    def getattr(self, state, name):
        if self.wrapper is property and name in _PROPERTY_SLOTS:
            return _PropertyCopy(self, _PROPERTY_SLOTS[name])
        if self.wrapper is property and name in ("fget", "fset", "fdel"):
            found = self.funcs[("fget", "fset", "fdel").index(name)]
            return const(None) if found is None else found
        if self.wrapper is not property and name in ("__func__", "__wrapped__"):
            return self.funcs[0]
        return super().getattr(state, name)

    def children(self):
        return [f for f in self.funcs if f is not None]

    def rebuilt(self, codegen) -> str:
        inner = ", ".join("None" if f is None else f.reconstruct_with_attributes(codegen) for f in self.funcs)
        return f"{codegen.constant_object(self.wrapper, self.wrapper.__name__)}({inner})"

    def reconstruct(self, codegen):
        return self.rebuilt(codegen)


_PROPERTY_SLOTS = {"getter": 0, "setter": 1, "deleter": 2}


class _PropertyCopy(Value):
    """`prop.setter` (getter, deleter): called with a function, a copy of the property with it in that slot."""

    __slots__ = ("prop", "slot")

    def __init__(self, prop, slot):
        super().__init__(None)
        self.prop = prop
        self.slot = slot

    def call(self, state, args, kwargs):
        if kwargs or len(args) != 1 or not isinstance(args[0], NestedFunctionValue):
            raise GraphBreak("unsupported_call", "a property's setter/getter/deleter over something other than a "
                                                 "function made inside")
        funcs = list(self.prop.funcs)
        funcs[self.slot] = args[0]
        return DescriptorValue(property, funcs)


def _descriptor(state, wrapper, args, kwargs):
    most = 3 if wrapper is property else 1
    if kwargs or not 1 <= len(args) <= most:
        return NotImplemented
    funcs = []
    for arg in args:
        if isinstance(arg, NestedFunctionValue):
            funcs.append(arg)
        elif arg.constant() is None and funcs:
            funcs.append(None)
        else:
            return NotImplemented
    if wrapper is property:
        funcs += [None] * (3 - len(funcs))
    return DescriptorValue(wrapper, funcs)


for _wrapper in _WRAPPERS:
    register_callable(_wrapper, KNOWN_CALLABLE, CallRule(f"{_wrapper.__name__} over a function made inside",
                                                         Meaning.CONSTRUCT, _descriptor))
