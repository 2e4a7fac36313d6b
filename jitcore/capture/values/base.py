"""The value protocol: every question the interpreter may ask about a value it tracks.

Each question defaults to a graph break naming the kind and the operation; a kind overrides only what it supports.
Questions return answers (`constant()` returns NOT_CONSTANT rather than raising). Kinds live one per module in this
package; `wrap()` in values/__init__.py is the one place values are created from real Python objects.
"""
from __future__ import annotations

import types

from jitcore.guards import HasAttrMatch

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.side_effects import DELETED

__all__ = ["Value", "NOT_CONSTANT", "NullValue", "NULL", "MethodCallValue", "KnownObjectValue"]


class _NotConstant:
    __slots__ = ()

    def __repr__(self):
        return "NOT_CONSTANT"


#: what `Value.constant()` answers for a value that is not a compile-time Python constant
NOT_CONSTANT = _NotConstant()


class Value:
    """A value as the interpreter knows it. `source` is where it came from (None for values made while tracing).

    The protocol below is every question code may ask of a value; nothing probes a value for optional attributes.
    Each question has a safe default (an answer meaning "not known", or a graph break naming the kind and the
    operation); a kind overrides only what it models. Groups: identity and type, constants, children, attributes,
    items, iteration, calling, context managers, graph plumbing and reconstruction.
    """

    __slots__ = ("source",)
    #: its dunder methods are its builtin type's slots, unless the type overrides them (values/dunders.py)
    builtin_dunders = False

    #: a value made while tracing that must stay one object when rebuilt (a list, dict, set, new object): codegen
    #: loads it once into a temporary so that two references to it rebuild as one object
    needs_identity = False
    #: a container passed in whose write-back reads another container through it (a list iterator's list): its
    #: replay runs after every other write (capture/side_effects.py)
    replay_last = False
    #: a container passed in whose replay must see every other container as the call found it (an iterator
    #: advanced by next(), Note [Iterators carried across a break]): its replay runs before every other write
    replay_first = False
    #: plain_getattr models object.__getattribute__ for this kind (the lookup under a class's own __getattribute__)
    has_plain_getattr = False
    #: raw_setattr models object.__setattr__ for this kind (the store under a class's own __setattr__)
    has_raw_setattr = False
    #: builtin_call_method models the builtin base's own methods where a subclass overrides them (super().name)
    has_builtin_methods = False

    def __init__(self, source=None):
        self.source = source

    # -- identity and type ------------------------------------------------------------------------------------
    @property
    def kind_name(self) -> str:
        return type(self).__name__.removesuffix("Value").lower()

    def python_type(self) -> type:
        raise GraphBreak("unsupported_value", f"the type of a {self.kind_name} value is unknown")

    def identity(self):
        """The real object this value stands for, when jitcore knows that very object (for `is`), else None."""
        return None

    def is_tensor(self) -> bool:
        return False

    def is_symbolic_number(self) -> bool:
        """True for a Python number that is a symbol of the graph (a dynamic int), not a constant."""
        return False

    # -- constants --------------------------------------------------------------------------------------------
    def constant(self):
        """The Python value if it is a compile-time constant, else NOT_CONSTANT."""
        return NOT_CONSTANT

    # -- children: the values this one holds (for graph outputs and reconstruction) ----------------------------
    def children(self) -> list:
        """The values this value holds and would rebuild from (items, attributes, a bound self)."""
        return []

    # -- attributes -------------------------------------------------------------------------------------------
    def getattr(self, state, name: str) -> "Value":
        raise GraphBreak("unsupported_value", f"attribute {name!r} of a {self.kind_name}")

    def setattr(self, state, name: str, value: "Value") -> None:
        raise GraphBreak("side_effect", f"setting attribute {name!r} of a {self.kind_name}")

    def delattr(self, state, name: str) -> None:
        raise GraphBreak("side_effect", f"deleting attribute {name!r} of a {self.kind_name}")

    def has_attr(self, state, name: str) -> bool:
        """hasattr(obj, name): an attribute written earlier in the call is there; else asked of the real object
        where jitcore knows it (guarded: the answer is relied on), else answered by reading the attribute (an
        AttributeError the modelled read raises means False)."""
        real = self.identity()
        if real is not None:
            pending = state.ctx.side_effects.load_attr(real, name)
            if pending is None:
                present = hasattr(real, name)
                if self.source is not None:
                    state.ctx.guard(self.source, HasAttrMatch(name, present))
                return present
            if pending is not DELETED:
                return True
        elif self.constant() is not NOT_CONSTANT:
            return hasattr(self.constant(), name)
        try:
            self.getattr(state, name)
            return True
        except GraphBreak as exc:
            if exc.exc_type is not None and issubclass(exc.exc_type, AttributeError):
                return False
            raise

    def plain_getattr(self, state, name: str) -> "Value":
        """object.__getattribute__(obj, name); modelled where `has_plain_getattr`."""
        raise GraphBreak("unsupported_value", f"object.__getattribute__ on a {self.kind_name}")

    def raw_setattr(self, state, name: str, value: "Value") -> None:
        """object.__setattr__(obj, name, value); modelled where `has_raw_setattr`."""
        raise GraphBreak("side_effect", f"object.__setattr__ on a {self.kind_name}")

    # -- items ------------------------------------------------------------------------------------------------
    def getitem(self, state, key: "Value") -> "Value":
        raise GraphBreak("unsupported_value", f"indexing a {self.kind_name}")

    def setitem(self, state, key: "Value", value: "Value") -> None:
        raise GraphBreak("side_effect", f"item assignment on a {self.kind_name}")

    def delitem(self, state, key: "Value") -> None:
        raise GraphBreak("side_effect", f"item deletion on a {self.kind_name}")

    def sequence_items(self) -> list | None:
        """The item values of a tuple, list or iterator of known items, else None. A list passed in has its
        items read here (see ListValue.realize: the caller relies on them, so their number is guarded)."""
        return None

    # -- iteration and truth ----------------------------------------------------------------------------------
    def truth(self, state) -> bool:
        raise GraphBreak("unsupported_value", f"truth value of a {self.kind_name}")

    def length(self, state) -> int:
        raise GraphBreak("unsupported_value", f"len() of a {self.kind_name}")

    def iterate(self, state) -> list:
        """All items, for unrolling a loop or unpacking."""
        raise GraphBreak("unsupported_value", f"iterating a {self.kind_name}")

    def live_iterator(self, state):
        """iter(self) as an iterator that reads this container as it is at each step (a list's index, a dict's or
        a set's size checked), or None when iterating means taking `iterate()` once."""
        return None

    def next_item(self, state):
        """The next item of an iterator, or None when it is exhausted (FOR_ITER, next())."""
        raise GraphBreak("unsupported_value", f"advancing a {self.kind_name} (its items are not known)")

    def contains(self, state, item: "Value") -> "Value":
        raise GraphBreak("unsupported_value", f"`in` on a {self.kind_name}")

    def text(self, state, conversion: str) -> "Value":
        """str(self) (conversion "str") or repr(self) ("repr") as a constant string value, for a value that is
        not a constant itself (a constant is folded by the builtin)."""
        raise GraphBreak("unsupported_value", f"{conversion}() of a {self.kind_name}")

    # -- operators --------------------------------------------------------------------------------------------
    def binary_op(self, state, op: str, other: "Value", reflected: bool) -> "Value":
        """`self <op> other` (or `other <op> self` when reflected); NotImplemented lets the other side try."""
        return NotImplemented

    def unary_op(self, state, op: str) -> "Value":
        raise GraphBreak("unsupported_value", f"unary {op} of a {self.kind_name}")

    # -- calling ----------------------------------------------------------------------------------------------
    def call(self, state, args: list, kwargs: dict) -> "Value":
        raise GraphBreak("unsupported_call", f"calling a {self.kind_name}")

    def call_method(self, state, name: str, args: list, kwargs: dict) -> "Value":
        return self.getattr(state, name).call(state, args, kwargs)

    def builtin_call_method(self, state, name: str, args: list, kwargs: dict) -> "Value":
        """The builtin base's method `name` even where a subclass overrides it; modelled where
        `has_builtin_methods`, else the ordinary method call."""
        return self.call_method(state, name, args, kwargs)

    # -- context managers -------------------------------------------------------------------------------------
    def enter(self, state) -> tuple:
        """BEFORE_WITH: enter this context manager; returns (the bound __exit__, the __enter__ result)."""
        exit_method = self.getattr(state, "__exit__")
        result = self.call_method(state, "__enter__", [], {})
        return exit_method, result

    def is_rebuildable_exit(self) -> bool:
        """True for the __exit__ of a with-block whose context a resume function can rebuild after a break."""
        return False

    # -- graph plumbing and reconstruction --------------------------------------------------------------------
    def as_fx_arg(self, state):
        """The object to put into an FX node's args (a Node for tensors, a plain value for constants)."""
        raise GraphBreak("unsupported_value", f"passing a {self.kind_name} to a tensor operation")

    def as_fake(self, state):
        """The object to pass when running an operation on fake tensors."""
        raise GraphBreak("unsupported_value", f"passing a {self.kind_name} to a tensor operation")

    def reconstruct(self, codegen) -> str:
        """A Python expression that rebuilds this value after the graph ran (the source, if nothing else, or the
        very object when jitcore knows it and it was not made while tracing)."""
        if self.source is not None:
            return self.source.emit(codegen)
        if self.identity() is not None:
            return codegen.constant_object(self.identity(), "obj")
        raise GraphBreak("unsupported_output", f"rebuilding a {self.kind_name} made inside the function")

    def compiled_callee(self, state, compilable):
        """A graph break runs a call to this value natively: (function, receiver value or None) when the call may
        run the function's compiled copy instead (bound to the receiver), or None to call the value itself.
        `compilable(fn)` says whether fn has a compiled copy; a kind guards here whatever the swap relies on."""
        return None

    def bound_callee(self, state, fn, compilable):
        """A graph break runs `fn` bound to this value natively (a method read from it): (function, receiver value)
        whose compiled copy may run instead, or None to call the method itself."""
        return (fn, self) if compilable(fn) else None

    def __repr__(self):
        return f"{type(self).__name__}({self.source.user_name if self.source else ''})"


class KnownObjectValue(Value):
    """A value standing for one real object jitcore knows (a function, a builtin, an object it does not model):
    its type is the object's type and `is` compares the object itself."""

    __slots__ = ("obj",)

    def __init__(self, obj, source=None):
        super().__init__(source)
        self.obj = obj

    @property
    def fn(self):
        return self.obj

    def python_type(self):
        return type(self.obj)

    def identity(self):
        return self.obj

    def truth(self, state):
        cls = type(self.obj)
        if not cls.__flags__ & (1 << 9) and not hasattr(cls, "__bool__") and not hasattr(cls, "__len__"):
            return True  # a builtin type (it cannot change) without __bool__ or __len__: always true
        return super().truth(state)


class MethodCallValue(Value):
    """`obj.name` for a method the value models through `call_method` (list.append, dict.items, ...)."""

    __slots__ = ("obj", "name", "builtin")

    def __init__(self, obj, name, builtin=False):
        super().__init__(None)
        self.obj = obj
        self.name = name
        #: call the builtin type's method even where a subclass overrides it (super().name)
        self.builtin = builtin

    def python_type(self):
        return types.BuiltinMethodType

    def call(self, state, args, kwargs):
        if self.builtin:
            return self.obj.builtin_call_method(state, self.name, args, kwargs)
        return self.obj.call_method(state, self.name, args, kwargs)

    def children(self):
        return [self.obj]

    def reconstruct(self, codegen):
        return f"{codegen.load(self.obj)}.{self.name}"


class NullValue(Value):
    """The NULL that 3.12 pushes below a callable (PUSH_NULL, method-form LOAD_ATTR, LOAD_GLOBAL with oparg & 1)."""

    __slots__ = ()

    def __repr__(self):
        return "NULL"


NULL = NullValue()
