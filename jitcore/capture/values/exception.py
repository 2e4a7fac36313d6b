"""Exceptions raised and caught inside traced code (`try: ... except IndexError: ...`, `assert`, `raise`).

An exception object made while tracing is an ExceptionValue: its class, its constructor arguments and the
attributes its Python `__init__` set. Raising one throws `TracedException` through the interpreter, which unwinds
the frames it traces by their exception tables exactly as CPython would; one that no traced frame catches stops
the capture there, so the raising instruction runs in Python and raises for real.

Chaining follows CPython (Note [Implicit chaining]): a raise with arguments, and an error an operation raises,
take the exception being handled as `__context__` (`chain_context`); `raise X from Y` and assigning `__cause__` set
`__suppress_context__`; a bare `raise` and RERAISE change nothing.
"""
from __future__ import annotations

import sys
import traceback
import types

from jitcore.capture.breaks import GraphBreak, TracedException
from jitcore.capture.values.base import MethodCallValue, Value, NOT_CONSTANT
from jitcore.capture.values.call_rules import KNOWN_CALLABLE, CallRule, Meaning, register_callable
from jitcore.capture.values.constant import const
from jitcore.capture.values.objects import ClassValue
from jitcore.capture.values.sequence import TupleValue
from jitcore.capture.values.user_object import class_lookup, _class_attribute, _MISSING

__all__ = ["ExceptionValue", "HandledOutside", "TracedException", "chain_context", "exception_constructible",
           "exception_from_break", "exception_of", "TracebackValue"]


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
    __slots__ = ("cls", "args", "attrs", "origin", "real", "made")
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
        #: Note [Exceptions with state of their own]: the exception CPython's constructor made from constant
        #: arguments (its errno, filename, lineno, encoding ... and str()), and how to make it again at run time:
        #: (new_args, init, init_args, init_kwargs) as constants; None where construction is BaseException's
        self.real = None
        self.made = None

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
            value = self.attrs[name]
            if isinstance(value, HandledOutside):
                # what the caller is handling is known only when the entry runs: read it there, in Python
                raise GraphBreak("unsupported_value", f"{name} of a {self.kind_name} raised while the caller of "
                                                      f"the compiled function may be handling an exception")
            return value
        if name == "args":
            return TupleValue(list(self._known_args()))
        if self.real is not None and name not in _CHAIN_ATTRS and _c_attribute(self.real, name):
            return const(getattr(self.real, name))
        if name == "value" and issubclass(self.cls, StopIteration):
            # StopIteration.__init__ keeps its first argument as .value (None without arguments)
            args = self._known_args()
            return args[0] if args else const(None)
        if name == "__class__":
            return ClassValue(self.cls)
        if name == "with_traceback":
            return MethodCallValue(self, name)
        if name in ("__cause__", "__context__"):
            return const(None)
        if name == "__suppress_context__":
            return const(False)
        raw = class_lookup(self.cls, name)
        if isinstance(raw, (types.FunctionType, property, staticmethod, classmethod)):
            return _class_attribute(state, self, self.cls, name, raw)
        raise GraphBreak("unsupported_value", f"attribute {name!r} of a {self.kind_name}")

    def setattr(self, state, name, value):
        if name == "__traceback__":
            if isinstance(value, TracebackValue) and value.exc is self or value.constant() is None:
                # contextlib's __exit__ puts the exception's own traceback back; raising it again (or the
                # entry rebuilding it) gives it a traceback of its own anyway
                return
            raise GraphBreak("unsupported_value", "assigning the traceback of another exception")
        if name in _CHAIN_ATTRS:
            self._set_chain(name, value)
        else:
            self.attrs[name] = value

    def raw_setattr(self, state, name, value):
        self.setattr(state, name, value)

    def _set_chain(self, name, value):
        """BaseException's setters: `__cause__`/`__context__` take None or an exception (setting `__cause__` also
        sets `__suppress_context__`), `__suppress_context__` a bool."""
        if name == "__suppress_context__":
            if not isinstance(value.constant(), bool):
                raise GraphBreak("unsupported_value", f"__suppress_context__ set to a {value.kind_name}")
            self.attrs[name] = value
            return
        if value.constant() is not None and not isinstance(value, ExceptionValue):
            raise GraphBreak.raises(TypeError, f"exception {name[2:-2]} must be None or derive from BaseException")
        self.attrs[name] = value
        if name == "__cause__":
            self.attrs["__suppress_context__"] = const(True)

    def builtin_call_method(self, state, name, args, kwargs):
        """BaseException's own methods reached through `super()`: __init__ records the arguments."""
        if name == "__init__":
            init = _builtin_init(self.cls)
            if init is BaseException.__init__ and not kwargs:
                self.args = list(args)
                return const(None)
            # a builtin __init__ with state of its own (OSError's errno, ImportError's name=): run it on an
            # instance made by the class's builtin __new__, as CPython runs it (Note [Exceptions with state ...])
            consts = [a.constant() for a in args]
            named = {k: v.constant() for k, v in kwargs.items()}
            new_args = [a.constant() for a in self.made[0]] if self.made else NOT_CONSTANT
            if NOT_CONSTANT in consts or NOT_CONSTANT in named.values() or new_args is NOT_CONSTANT or \
                    NOT_CONSTANT in new_args:
                raise GraphBreak("unsupported_call", f"{init.__qualname__}() with arguments that are not constants")
            real = self.cls.__new__(self.cls, *new_args)
            try:
                init(real, *consts, **named)
            except Exception as exc:  # noqa: BLE001 - the program's error, raised where Python raises it
                raise GraphBreak.raises(type(exc), str(exc)) from None
            self.real, self.made = real, (tuple(new_args), init, tuple(consts), named)
            self.args = [const(a) for a in real.args]
            return const(None)
        raise GraphBreak("unsupported_call", f"BaseException.{name}() on a traced exception")

    def call_method(self, state, name, args, kwargs):
        if name == "with_traceback" and len(args) == 1 and not kwargs and class_lookup(self.cls, name) is \
                BaseException.with_traceback:
            # the traceback is not kept by the model: setting it (to None, or to its own) changes nothing seen
            self.setattr(state, "__traceback__", args[0])
            return self
        return self.getattr(state, name).call(state, args, kwargs)

    def text(self, state, conversion):
        """str()/repr(): a Python __str__/__repr__ of the class is traced; BaseException's (and the builtin
        subclasses') run on a real exception made from the constant arguments."""
        name = "__str__" if conversion == "str" else "__repr__"
        raw = class_lookup(self.cls, name)
        if isinstance(raw, types.FunctionType):
            result = self.call_method(state, name, [], {})
            if not isinstance(result.constant(), str):
                raise GraphBreak("unsupported_value", f"{self.cls.__name__}.{name} returned a non-constant")
            return result
        extra = [n for n in self.attrs if n not in _CHAIN_ATTRS]
        if self.real is not None:
            values = {n: self.attrs[n].constant() for n in extra}
            if NOT_CONSTANT in values.values():
                raise GraphBreak("unsupported_value", f"{conversion}() of a {self.kind_name} with attributes that "
                                                      f"are not constants")
            real = _make_exception(self.cls, *self.made, values)
            return const(str(real) if conversion == "str" else repr(real))
        args = [a.constant() for a in self._known_args()]
        if NOT_CONSTANT in args or (extra and issubclass(self.cls, (OSError, SyntaxError, ImportError))):
            # those three read attributes of their own in __str__
            raise GraphBreak("unsupported_value", f"{conversion}() of a {self.kind_name} with arguments that are "
                                                  f"not constants")
        real = self.cls.__new__(self.cls, *args)
        BaseException.__init__(real, *args)
        return const(str(real) if conversion == "str" else repr(real))

    def reconstruct(self, codegen):
        if self.made is not None:
            make = codegen.constant_object(_make_exception, "make_exception")
            parts = ", ".join(codegen.constant_object(part, "exception_part") for part in self.made)
            attrs = "".join(f"{name!r}: {codegen.load(v)}, " for name, v in self.attrs.items())
            return f"{make}({codegen.constant_object(self.cls, 'cls')}, {parts}, {{{attrs}}})"
        args = self._known_args()
        build = codegen.constant_object(_build_exception, "build_exception")
        cls = codegen.constant_object(self.cls, "cls")
        items = "".join(f"{codegen.load(a)}, " for a in args)
        attrs = "".join(f"{name!r}: {codegen.load(v)}, " for name, v in self.attrs.items())
        return f"{build}({cls}, ({items}), {{{attrs}}})"

    def children(self):
        return [*(self.args or ()), *self.attrs.values()]


class TracebackValue(Value):
    """The traceback of a traced exception, as `__exit__` receives it: it can be passed on, compared with None
    and stored back as `__traceback__`; reading it needs the real frames (a graph break)."""

    __slots__ = ("exc",)

    def __init__(self, exc):
        super().__init__(None)
        self.exc = exc

    def python_type(self):
        return types.TracebackType

    def truth(self, state):
        return True


#: BaseException's own slots, set through its setters (never the instance dict), in this order: setting the
#: cause sets __suppress_context__, which the recorded value then overrides
_CHAIN_ATTRS = ("__cause__", "__context__", "__suppress_context__")


def _build_exception(cls, args, attrs):
    exc = cls.__new__(cls, *args)
    BaseException.__init__(exc, *args)
    _set_attributes(exc, attrs)
    return exc


def _make_exception(cls, new_args, init, init_args, init_kwargs, attrs):
    """The exception CPython's constructor makes (`cls(*args, **kwargs)` is `cls.__new__` then the builtin
    `__init__`), with the attributes written afterwards."""
    exc = cls.__new__(cls, *new_args)
    init(exc, *init_args, **init_kwargs)
    _set_attributes(exc, dict(attrs))
    return exc


def _set_attributes(exc, attrs):
    """Attributes written while tracing: the chain through its setters (last), builtin slots (errno, filename)
    through theirs, anything else into the instance dict (never a Python setter again)."""
    chain = {name: attrs.pop(name) for name in _CHAIN_ATTRS if name in attrs}
    for name, value in attrs.items():
        if _c_attribute(exc, name):
            setattr(exc, name, value)
        else:
            exc.__dict__[name] = value
    for name, value in chain.items():
        setattr(exc, name, value)


def _c_attribute(exc, name) -> bool:
    """A data attribute a builtin exception class keeps in its own slots (OSError.errno, SyntaxError.lineno)."""
    return isinstance(getattr(type(exc), name, None), (types.MemberDescriptorType, types.GetSetDescriptorType)) \
        and name not in ("__traceback__", "__dict__", "__notes__")


def _builtin_init(cls):
    """The builtin __init__ that `cls(...)` runs, or a `super().__init__(...)` from Python code reaches:
    BaseException's (it only keeps the arguments) unless a class with state of its own comes first."""
    for klass in cls.__mro__:
        if klass in _STATEFUL:
            return vars(klass)["__init__"]
    return BaseException.__init__


#: builtin exception classes whose __init__ (or __new__) keeps more than the arguments
_STATEFUL = frozenset({OSError, SyntaxError, ImportError, UnicodeEncodeError, UnicodeDecodeError,
                       UnicodeTranslateError, StopIteration, SystemExit, AttributeError, NameError,
                       BaseExceptionGroup})


# Note [Implicit chaining]
# CPython (_PyErr_SetObject) gives an exception raised with arguments, or by an operation, the exception being
# handled as __context__: the innermost one of the thread's handlers, unless it is the exception itself; before that
# it cuts the handled exception's context chain where it would reach the new one (no cycles). With nothing handled
# it leaves __context__ as it was. A bare `raise` and RERAISE re-raise without chaining. Traced code keeps the
# handlers it runs in `ctx.exc_stack` (a generator's own are set aside while it is suspended, as CPython's
# gi_exc_state does). Below them is what the compiled function's caller is handling, unknown while tracing: a
# HandledOutside value, which the entry reads with sys.exception() when it rebuilds the exception; reading it
# inside traced code is a graph break.

class HandledOutside(Value):
    """The context of an exception raised while no traced handler runs: what the caller of the compiled
    function handles, else the context it had (`previous`). Rebuilt by the entry, where sys.exception() is the
    caller's."""

    __slots__ = ("previous",)

    def __init__(self, previous):
        super().__init__(None)
        self.previous = previous

    @property
    def kind_name(self):
        return "exception handled by the caller"

    def reconstruct(self, codegen):
        outer = codegen.constant_object(_handled_or, "handled_or")
        return f"{outer}({codegen.load(self.previous)})"

    def children(self):
        return [self.previous]


def _handled_or(previous):
    handled = sys.exception()
    return previous if handled is None else handled


def chain_context(state, exc) -> None:
    """Set `exc.__context__` as CPython does when it is raised (Note [Implicit chaining])."""
    stack = state.ctx.exc_stack
    if not stack:
        previous = exc.attrs.get("__context__", const(None))
        if isinstance(previous, HandledOutside):
            previous = previous.previous
        exc.attrs["__context__"] = HandledOutside(previous)
        return
    handled = stack[-1]
    if handled is exc:
        return
    link, seen = handled, set()
    while isinstance(link, ExceptionValue) and id(link) not in seen:
        seen.add(id(link))
        context = link.attrs.get("__context__")
        if context is exc:
            link.attrs["__context__"] = const(None)
            break
        if isinstance(context, HandledOutside) and _reaches(context.previous, exc):
            # whether the cycle is cut depends on what the caller handles
            raise GraphBreak("unsupported_value", "an exception chain that may loop through what the caller of "
                                                  "the compiled function handles")
        link = context
    exc.attrs["__context__"] = handled


def _reaches(link, exc) -> bool:
    seen = set()
    while isinstance(link, (ExceptionValue, HandledOutside)) and id(link) not in seen:
        if link is exc:
            return True
        seen.add(id(link))
        link = link.previous if isinstance(link, HandledOutside) else link.attrs.get("__context__")
    return False


def construct_exception(state, cls, args, kwargs):
    """`cls(*args, **kwargs)` for an exception class: a Python __init__ is inlined, a builtin one keeps args."""
    exc = ExceptionValue(cls, list(args))  # BaseException.__new__ keeps the arguments as args
    init = class_lookup(cls, "__init__")
    if isinstance(init, types.FunctionType):
        exc.made = (list(args), None, (), {})  # the arguments __new__ saw (for a builtin __init__ reached later)
        state.inline_call(init, [exc, *args], kwargs)
        if exc.real is None:
            exc.made = None
        return exc
    consts = [a.constant() for a in args]
    named = {k: v.constant() for k, v in kwargs.items()}
    if NOT_CONSTANT not in consts and NOT_CONSTANT not in named.values():
        # Note [Exceptions with state of their own]: CPython's constructor runs now, on the constants
        try:
            real = cls(*consts, **named)
        except Exception as error:  # noqa: BLE001 - the program's error, raised where Python raises it
            raise GraphBreak.raises(type(error), str(error)) from None
        exc = ExceptionValue(type(real), [const(a) for a in real.args])  # OSError(2, ...) is a FileNotFoundError
        exc.real, exc.made = real, (tuple(consts), _builtin_init(cls), tuple(consts), named)
        return exc
    if kwargs or _builtin_init(cls) is not BaseException.__init__:
        raise GraphBreak("unsupported_call", f"{cls.__name__}() with arguments that are not constants")
    return exc


def exception_of(state, value) -> ExceptionValue:
    """What `raise value` raises: the exception itself, or a class called with no arguments."""
    if isinstance(value, ExceptionValue):
        return value
    cls = value.constant() if isinstance(value, ClassValue) else None
    if isinstance(cls, type) and exception_constructible(cls):
        return construct_exception(state, cls, [], {})
    raise GraphBreak("user_exception", f"raising a {value.kind_name}")


def exception_from_break(brk) -> ExceptionValue | None:
    """The exception an operation jitcore models would have raised (a break made by `GraphBreak.raises` with a
    builtin exception type), so traced `except` clauses can catch it; None for anything else."""
    cls = brk.exc_type
    if cls is None or not issubclass(cls, Exception) or cls.__module__ != "builtins":
        return None
    return ExceptionValue(cls, None if brk.exc_args is None else [const(a) for a in brk.exc_args])


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


class CallerExcInfo(Value):
    """Item `index` of sys.exc_info() read where no traced handler runs: what the caller of the compiled function
    handles, unknown while tracing. Its type is unknown, so any use of it (`is None`, an attribute) breaks the
    graph; kept or passed along, it is rebuilt by the entry, where sys.exc_info() is the caller's (contextlib's
    ExitStack.__exit__ reads it on every exit and looks at it only when a callback raised)."""

    __slots__ = ("index",)

    def __init__(self, index: int):
        super().__init__(None)
        self.index = index

    @property
    def kind_name(self):
        return "sys.exc_info() item handled by the caller"

    def reconstruct(self, codegen):
        return f"{codegen.constant_object(sys.exc_info, 'exc_info')}()[{self.index}]"


def _sys_exception(state, fn, args, kwargs):
    """`sys.exception()` inside a traced handler is the exception it handles; elsewhere it is what the caller
    handles (CallerExcInfo)."""
    if args or kwargs:
        return NotImplemented
    return state.ctx.exc_stack[-1] if state.ctx.exc_stack else CallerExcInfo(1)


def _sys_exc_info(state, fn, args, kwargs):
    """`sys.exc_info()`: (type, exception, traceback) of the exception a traced handler handles; elsewhere what
    the caller handles (CallerExcInfo items)."""
    if args or kwargs:
        return NotImplemented
    if not state.ctx.exc_stack:
        return TupleValue([CallerExcInfo(0), CallerExcInfo(1), CallerExcInfo(2)])
    exc = state.ctx.exc_stack[-1]
    if not isinstance(exc, ExceptionValue):
        return NotImplemented
    return TupleValue([ClassValue(exc.cls), exc, exc.getattr(state, "__traceback__")])


register_callable(sys.exception, KNOWN_CALLABLE, CallRule("sys.exception", Meaning.LOOKASIDE, _sys_exception))
register_callable(sys.exc_info, KNOWN_CALLABLE, CallRule("sys.exc_info", Meaning.LOOKASIDE, _sys_exc_info))


def _clear_frames(state, fn, args, kwargs):
    """traceback.clear_frames(tb) of a traced exception's traceback (unittest's assertRaises __exit__): it only
    frees the locals of frames that have finished; nothing the program can observe without the traceback."""
    if len(args) == 1 and not kwargs and isinstance(args[0], TracebackValue):
        return const(None)
    return NotImplemented


register_callable(traceback.clear_frames, KNOWN_CALLABLE,
                  CallRule("traceback.clear_frames", Meaning.LOOKASIDE, _clear_frames))
