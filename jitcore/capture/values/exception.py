"""Exceptions raised and caught inside traced code (`try: ... except IndexError: ...`, `assert`, `raise`).

An exception object made while tracing is an ExceptionValue: its class, its constructor arguments and the
attributes its Python `__init__` set. Raising one throws `TracedException` through the interpreter, which unwinds
the frames it traces by their exception tables exactly as CPython would; one that no traced frame catches stops
the capture there, so the raising instruction runs in Python and raises for real.
"""
from __future__ import annotations

import types

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.base import Value, NOT_CONSTANT
from jitcore.capture.values.constant import const
from jitcore.capture.values.objects import ClassValue
from jitcore.capture.values.sequence import TupleValue
from jitcore.capture.values.user_object import class_lookup, _class_attribute, _MISSING

__all__ = ["ExceptionValue", "TracedException", "exception_constructible", "exception_from_break"]


class TracedException(Exception):
    """Python-level carrier of a traced `raise`: unwinds the interpreter's frames to a handler they contain.
    `origin` is where the root frame was when it was raised: a graph break inside the handler is moved there."""

    def __init__(self, value, origin):
        super().__init__(value.cls.__name__)
        self.value = value
        self.origin = origin


def exception_constructible(cls) -> bool:
    """An exception class whose construction can be modelled: builtin constructors, or Python __init__ methods
    (inlined; their `super().__init__(...)` reaches BaseException's, which records args)."""
    if not isinstance(cls, type) or not issubclass(cls, BaseException):
        return False
    for klass in cls.__mro__:
        if klass is BaseException:
            return True
        d = vars(klass)
        if "__new__" in d and klass.__flags__ & (1 << 9):
            return False
        init = d.get("__init__")
        if init is not None and klass.__flags__ & (1 << 9) and not isinstance(init, types.FunctionType):
            return False
    return True


class ExceptionValue(Value):
    __slots__ = ("cls", "args", "attrs", "origin")
    needs_identity = True
    has_raw_setattr = True
    has_builtin_methods = True

    def __init__(self, cls, args):
        super().__init__(None)
        self.cls = cls
        #: root-frame (offset, visit) where it was first raised
        self.origin = None
        #: constructor arguments as values; None when only the type is known (an error jitcore's model found)
        self.args = args
        self.attrs: dict = {}

    @property
    def kind_name(self):
        return f"{self.cls.__name__} exception"

    def python_type(self):
        return self.cls

    def _known_args(self):
        if self.args is None:
            raise GraphBreak("user_exception", f"reading a {self.cls.__name__} raised by an operation")
        return self.args

    def getattr(self, state, name):
        if name in self.attrs:
            return self.attrs[name]
        if name == "args":
            return TupleValue(list(self._known_args()))
        if name == "__class__":
            return ClassValue(self.cls)
        if name in ("__cause__", "__context__"):
            return const(None)
        if name == "__suppress_context__":
            return const(False)
        raw = class_lookup(self.cls, name)
        if isinstance(raw, (types.FunctionType, property, staticmethod, classmethod)):
            return _class_attribute(state, self, self.cls, name, raw)
        raise GraphBreak("unsupported_value", f"attribute {name!r} of a {self.kind_name}")

    def setattr(self, state, name, value):
        self.attrs[name] = value

    def raw_setattr(self, state, name, value):
        self.attrs[name] = value

    def builtin_call_method(self, state, name, args, kwargs):
        """BaseException's own methods reached through `super()`: __init__ records the arguments."""
        if name == "__init__" and not kwargs:
            self.args = list(args)
            return const(None)
        raise GraphBreak("unsupported_call", f"BaseException.{name}() on a traced exception")

    def call_method(self, state, name, args, kwargs):
        return self.getattr(state, name).call(state, args, kwargs)

    def reconstruct(self, codegen):
        args = self._known_args()
        build = codegen.constant_object(_build_exception, "build_exception")
        cls = codegen.constant_object(self.cls, "cls")
        items = "".join(f"{codegen.load(a)}, " for a in args)
        attrs = "".join(f"{name!r}: {codegen.load(v)}, " for name, v in self.attrs.items())
        return f"{build}({cls}, ({items}), {{{attrs}}})"

    def children(self):
        return [*(self.args or ()), *self.attrs.values()]


def _build_exception(cls, args, attrs):
    exc = cls.__new__(cls, *args)
    BaseException.__init__(exc, *args)
    exc.__dict__.update(attrs)
    return exc


def construct_exception(state, cls, args, kwargs):
    """`cls(*args, **kwargs)` for an exception class: a Python __init__ is inlined, a builtin one keeps args."""
    exc = ExceptionValue(cls, list(args))
    init = class_lookup(cls, "__init__")
    if isinstance(init, types.FunctionType):
        exc.args = []
        state.inline_call(init, [exc, *args], kwargs)
    elif kwargs:
        raise GraphBreak.raises(TypeError, f"{cls.__name__}() takes no keyword arguments")
    return exc


def exception_from_break(brk) -> ExceptionValue | None:
    """The exception an operation jitcore models would have raised (a break made by `GraphBreak.raises` with a
    builtin exception type), so traced `except` clauses can catch it; None for anything else."""
    cls = brk.exc_type
    if cls is None or not issubclass(cls, Exception) or cls.__module__ != "builtins":
        return None
    return ExceptionValue(cls, None)


def matches(state, exc, classinfo) -> bool:
    """`except classinfo:` for a traced exception."""
    target = classinfo.constant()
    if target is NOT_CONSTANT:
        raise GraphBreak("unsupported_value", "an except clause with a class jitcore does not know")
    classes = target if isinstance(target, tuple) else (target,)
    if not all(isinstance(c, type) and issubclass(c, BaseException) for c in classes):
        raise GraphBreak.raises(TypeError, "catching classes that do not inherit from BaseException "
                                           "is not allowed")
    return issubclass(exc.cls, classes)
