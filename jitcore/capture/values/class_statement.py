"""A `class` statement inside the captured code: its body is traced and the class is a value made inside the call.

Note [Classes made inside]: Python makes a new class each time a class statement runs, so the class cannot be
guarded by identity (the code after it would recompile on every call). Instead the capture traces the body (a
function run over a namespace: opcodes/names.py) and builds a *stand-in*: a real class made at capture time from
that namespace, whose functions are real functions over the same code (with empty cells: they never run). The
rest of the capture reasons about the stand-in as about any class (MRO, descriptors, isinstance, NewObjectValue
instances), and every place that would run or embed one of its objects uses the value it stands for instead
(`CaptureContext.standin`): a method is traced as the function value the body made (with its real closure cells),
and the entry rebuilds the class once per call, as `type(name, bases, namespace)` with the traced namespace,
wherever the stand-in would be embedded (`EntryCodegen.constant_object`). So no guard is taken on the new class,
and instances, `isinstance`, `super()`, class attributes and methods behave as in Python: each call makes a new
class and runs its body's side effects.

Modelled: metaclass `type` or `abc.ABCMeta`, no class keywords, bases that are plain Python classes (or classes
made inside) without a custom `__init_subclass__`, a namespace of constants and functions (decorated by
property, staticmethod or classmethod), `__class__` cells (zero-argument super()). Anything else is a graph break
at the statement, where the class is made natively (kind `class_statement`), as before. Writes to such a class
break (they would have to be replayed on the new class).
"""
from __future__ import annotations

import abc
import builtins
import types

import torch

from jitcore.capture.breaks import GraphBreak
from jitcore.capture.values.base import Value, NOT_CONSTANT
from jitcore.capture.values.cells import CellBox
from jitcore.capture.values.constant import CONSTANT_TYPES
from jitcore.capture.values.descriptors import DescriptorValue
from jitcore.capture.values.function import NestedFunctionValue
from jitcore.capture.values.mapping import DictValue
from jitcore.capture.values.objects import ClassValue
from jitcore.capture.values.opaque import NativeFunctionValue

__all__ = ["BuildClassValue", "NewClassValue", "ClassNamespaceValue"]

_METACLASSES = (type, abc.ABCMeta)


class ClassNamespaceValue(Value):
    """What LOAD_LOCALS pushes in a class body: its namespace, read by LOAD_FROM_DICT_OR_DEREF."""

    __slots__ = ("namespace",)

    def __init__(self, namespace: dict):
        super().__init__(None)
        self.namespace = namespace


class BuildClassValue(NativeFunctionValue):
    """`__build_class__` as LOAD_BUILD_CLASS pushes it: a class statement it can model is traced (Note [Classes
    made inside]); any other is a break where the statement runs natively."""

    __slots__ = ()

    def __init__(self):
        super().__init__(builtins.__build_class__, kind="class_statement")

    def call(self, state, args, kwargs):
        return _build(state, args, kwargs)


def _not_modelled(why: str):
    raise GraphBreak("class_statement", f"builtins.__build_class__() ({why})")


def _build(state, args, kwargs):
    if kwargs:
        _not_modelled(f"class keywords {', '.join(kwargs)}")
    if len(args) < 2 or not isinstance(args[0], NestedFunctionValue) or type(args[1].constant()) is not str:
        _not_modelled("not a class statement's arguments")
    body, name = args[0], args[1].constant()
    bases = args[2:]
    real_bases = []
    for base in bases:
        cls = base.constant() if isinstance(base, ClassValue) else NOT_CONSTANT
        if not isinstance(cls, type):
            _not_modelled(f"a base that is a {base.kind_name}")
        real_bases.append(cls)
    meta = type
    for cls in real_bases:
        if not _plain_base(cls):
            _not_modelled(f"base class {cls.__qualname__}")
        if issubclass(type(cls), meta):
            meta = type(cls)
    if meta not in _METACLASSES:
        _not_modelled(f"metaclass {meta.__qualname__}")
    namespace: dict = {}
    cell = state.run_class_body(body, namespace)
    if not isinstance(cell, CellBox):
        if cell.constant() is not None:
            _not_modelled("its body returned something other than its __class__ cell")
        cell = None
    value = NewClassValue(meta, name, list(bases), namespace, cell)
    value.make_standin(state, real_bases)
    return value


def _plain_base(cls) -> bool:
    """A base whose subclass is made exactly by `type(...)`: object, or a Python class with default construction
    and no __init_subclass__ of its own along its MRO (which would run user code at class creation). Not a module
    class: a module made inside is a real object of its class, which would carry the stand-in out."""
    if cls is object:
        return True
    if not cls.__flags__ & (1 << 9) or cls.__new__ is not object.__new__ or issubclass(cls, torch.nn.Module):
        return False
    return all(klass is object or ("__init_subclass__" not in vars(klass) and not vars(klass).get("__slots__"))
               for klass in cls.__mro__)


class NewClassValue(ClassValue):
    """A class made by a class statement inside the captured code (Note [Classes made inside]): `cls` is its
    stand-in; the entry makes the real one, once per call."""

    __slots__ = ("meta", "name", "bases", "namespace", "class_cell")
    needs_identity = True

    def __init__(self, meta, name, bases, namespace, class_cell):
        super().__init__(None)
        self.meta = meta
        self.name = name
        self.bases = bases
        self.namespace = namespace
        self.class_cell = class_cell

    @property
    def kind_name(self):
        return f"class {self.name} made inside"

    def make_standin(self, state, real_bases) -> None:
        ctx = state.ctx
        real = {}
        members = []
        for key, value in self.namespace.items():
            if key == "__classcell__":
                continue
            real[key] = self._real_member(state, key, value, members)
        try:
            cls = self.meta(self.name, tuple(real_bases), real)
        except Exception as exc:  # noqa: BLE001 - the statement then runs natively and raises there
            _not_modelled(f"{type(exc).__name__} while making the class")
        self.cls = cls
        ctx.standin(cls, self)
        for fn, member in members:
            ctx.standin(fn, member)
        if self.class_cell is not None:
            self.class_cell.contents = self

    def _real_member(self, state, key, value, members):
        if isinstance(value, NestedFunctionValue):
            return self._standin_function(state, key, value, members, ())
        if isinstance(value, DescriptorValue):
            return value.wrapper(*[None if f is None else self._standin_function(state, key, f, members, (i,))
                                   for i, f in enumerate(value.funcs)])
        if key == "__annotations__" and isinstance(value, DictValue):
            # names to classes or strings: a plain dict of them (rebuilt from the value per call)
            real = {k: v.constant() for k, v in value.items.items()}
            if NOT_CONSTANT in real.values():
                _not_modelled("an annotation that is not a constant")
            return real
        constant = value.constant()
        if constant is NOT_CONSTANT or type(constant) not in CONSTANT_TYPES:
            _not_modelled(f"class attribute {key!r} is a {value.kind_name}")
        return constant

    def _standin_function(self, state, key, nested, members, path):
        cells = tuple(types.CellType() for _ in nested.code.co_freevars)
        fn = types.FunctionType(nested.code, nested.globals, nested.code.co_name, None, cells or None)
        fn.__qualname__ = nested.qualname
        for attr, item in nested.attrs.items.items():
            constant = item.constant()
            if constant is NOT_CONSTANT or type(constant) not in CONSTANT_TYPES:
                _not_modelled(f"an attribute of {key!r} that is a {item.kind_name}")
            setattr(fn, attr, constant)
        members.append((fn, _Member(self, key, path, nested)))
        return fn

    def setattr(self, state, name, value):
        raise GraphBreak("side_effect", f"setting attribute {name!r} of a class made inside")

    def delattr(self, state, name):
        raise GraphBreak("side_effect", f"deleting attribute {name!r} of a class made inside")

    def children(self):
        return [*self.bases, *self.namespace.values()]

    def as_fx_arg(self, state):
        raise GraphBreak("unsupported_value", f"a class made inside ({self.name}) passed to a graph op")

    def as_fake(self, state):
        raise GraphBreak("unsupported_value", f"a class made inside ({self.name}) passed to a graph op")

    def reconstruct(self, codegen):
        build = codegen.constant_object(_build_class, "build_class")
        meta = codegen.constant_object(self.meta, "metaclass")
        bases = "(" + "".join(f"{codegen.load(b)}, " for b in self.bases) + ")"
        cell = "None"
        if self.class_cell is not None:
            # the functions over the __class__ cell are rebuilt over an empty one, which type() fills
            cell = codegen.bind(self.class_cell, f"{codegen.constant_object(types.CellType, 'CellType')}()")
        body = "".join(f"{key!r}: {_member_expr(codegen, value)}, " for key, value in self.namespace.items()
                       if key != "__classcell__")
        return f"{build}({meta}, {self.name!r}, {bases}, {cell}, {{{body}}})"


def _member_expr(codegen, value) -> str:
    if isinstance(value, NestedFunctionValue):
        return value.reconstruct_with_attributes(codegen)
    if isinstance(value, DescriptorValue):
        return value.rebuilt(codegen)
    return codegen.load(value)


def _build_class(meta, name, bases, cell, namespace):
    """What __build_class__ does for a class statement the capture traced: its body already ran."""
    if cell is not None:
        namespace["__classcell__"] = cell
    return meta(name, bases, namespace)


class _Member(Value):
    """A function of a class made inside, as its stand-in class holds it: called, it is the function value its
    body made; rebuilt, it is read from the class the entry made."""

    __slots__ = ("owner", "key", "path", "nested")

    def __init__(self, owner, key, path, nested):
        super().__init__(None)
        self.owner = owner
        self.key = key
        self.path = path
        self.nested = nested

    def python_type(self):
        return types.FunctionType

    def call(self, state, args, kwargs):
        return state.inline_nested(self.nested, args, kwargs)

    def children(self):
        return [self.owner]

    def reconstruct(self, codegen):
        expr = f"{codegen.load(self.owner)}.__dict__[{self.key!r}]"
        for index in self.path:
            expr = f"{codegen.constant_object(_wrapped_function, 'wrapped_function')}({expr}, {index})"
        return expr


def _wrapped_function(wrapper, index):
    """The index-th function a property / staticmethod / classmethod holds (fget, fset, fdel / __func__)."""
    if isinstance(wrapper, property):
        return (wrapper.fget, wrapper.fset, wrapper.fdel)[index]
    return wrapper.__func__

