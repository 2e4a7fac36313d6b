"""Where a value came from, as a tree of small frozen dataclasses.

Each source has exactly three faces: `path` (a tuple of plain access steps, the only thing guards/ sees),
`user_name` (how the user would write it: `self.fc.weight`, `G.scale`) and `emit(codegen)` (a Python expression that
reloads the value inside generated code). Sources hash by structure, so one value read twice shares its guards.
"""
from __future__ import annotations

import dataclasses
import functools

from jitcore.guards.arrays import array_tensor
from jitcore.guards.context_vars import current_value
from jitcore.guards.iterators import iterator_state, remaining_items
from jitcore.guards.tree import Held

__all__ = ["Source", "LocalSource", "GlobalSource", "ModuleGlobalSource", "BuiltinSource", "CellSource",
           "CellObjectSource",
           "AttrSource", "ItemSource", "DictItemSource", "ModuleDictSource", "IteratorRestSource",
           "IteratorStateSource", "HeldSource", "ArrayTensorSource", "TensorSizeSource", "ContextVarValueSource"]


class Source:
    __slots__ = ()

    @property
    def path(self) -> tuple:
        raise NotImplementedError

    @property
    def user_name(self) -> str:
        raise NotImplementedError

    def emit(self, codegen) -> str:
        raise NotImplementedError

    def __str__(self) -> str:
        return self.user_name


@dataclasses.dataclass(frozen=True, eq=True)
class LocalSource(Source):
    """An argument of the captured frame (locals of the root frame at its first instruction)."""
    name: str

    @property
    def path(self):
        return (("local", self.name),)

    @property
    def user_name(self):
        return self.name

    def emit(self, codegen):
        return codegen.local(self.name)


@dataclasses.dataclass(frozen=True, eq=True)
class GlobalSource(Source):
    """A name in the captured frame's own globals."""
    name: str

    @property
    def path(self):
        return (("global", self.name),)

    @property
    def user_name(self):
        return f"G.{self.name}"

    def emit(self, codegen):
        return f"{codegen.globals_name()}[{self.name!r}]"


@dataclasses.dataclass(frozen=True, eq=True)
class ModuleGlobalSource(Source):
    """A global of another Python module (read by an inlined function defined there)."""
    module: str
    name: str

    @property
    def path(self):
        return (("module", self.module), ("attr", self.name))

    @property
    def user_name(self):
        return f"{self.module}.{self.name}"

    def emit(self, codegen):
        return f"{codegen.module_globals(self.module)}[{self.name!r}]"


@dataclasses.dataclass(frozen=True, eq=True)
class BuiltinSource(Source):
    name: str

    @property
    def path(self):
        return (("builtin", self.name),)

    @property
    def user_name(self):
        return self.name

    def emit(self, codegen):
        return f"{codegen.builtins_name()}[{self.name!r}]"


@dataclasses.dataclass(frozen=True, eq=True)
class CellSource(Source):
    """The contents of closure cell `index` of the root frame's function (`co_freevars[index]`)."""
    index: int
    name: str

    @property
    def path(self):
        return (("cell", self.index),)

    @property
    def user_name(self):
        return self.name

    def emit(self, codegen):
        return f"{codegen.cells_name()}[{self.index}].cell_contents"


@dataclasses.dataclass(frozen=True, eq=True)
class CellObjectSource(Source):
    """Closure cell `index` of the root frame's function itself (what CellSource reads the contents of)."""
    index: int
    name: str

    @property
    def path(self):
        return (("cellobj", self.index),)

    @property
    def user_name(self):
        return f"{self.name} (cell)"

    def emit(self, codegen):
        return f"{codegen.cells_name()}[{self.index}]"


@dataclasses.dataclass(frozen=True, eq=True)
class AttrSource(Source):
    base: Source
    name: str

    @property
    def path(self):
        return self.base.path + (("attr", self.name),)

    @property
    def user_name(self):
        return f"{self.base.user_name}.{self.name}"

    def emit(self, codegen):
        return f"{self.base.emit(codegen)}.{self.name}"


@dataclasses.dataclass(frozen=True, eq=True)
class ItemSource(Source):
    """`base[key]` for a constant key (an int, a str, or a tuple of them)."""
    base: Source
    key: object

    @property
    def path(self):
        return self.base.path + (("item", self.key),)

    @property
    def user_name(self):
        return f"{self.base.user_name}[{self.key!r}]"

    def emit(self, codegen):
        return f"{self.base.emit(codegen)}[{codegen.constant(self.key)}]"


@dataclasses.dataclass(frozen=True, eq=True)
class DictItemSource(ItemSource):
    """`dict.__getitem__(base, key)`: an item of a dict subclass whose own __getitem__ computes something else
    (transformers' ClassInstantier makes a module from the entry), read from the dict itself, as the traced
    `super().__getitem__(key)` read it."""

    @property
    def path(self):
        return self.base.path + (("dictitem", self.key),)

    def emit(self, codegen):
        getitem = codegen.constant_object(dict.__getitem__, "dict_getitem")
        return f"{getitem}({self.base.emit(codegen)}, {codegen.constant(self.key)})"


@dataclasses.dataclass(frozen=True, eq=True)
class ModuleDictSource(Source):
    """A parameter, buffer or submodule read straight from `module._parameters` / `_buffers` / `_modules`.

    Reading the dict skips nn.Module.__getattr__ (a Python call per access) on every dispatch; the user still reads
    `self.fc.weight` in reports.
    """
    base: Source
    dict_name: str
    key: str

    @property
    def path(self):
        return self.base.path + (("attr", self.dict_name), ("dictitem", self.key))

    @property
    def user_name(self):
        return f"{self.base.user_name}.{self.key}"

    def emit(self, codegen):
        return f"{self.base.emit(codegen)}.{self.dict_name}[{self.key!r}]"


@dataclasses.dataclass(frozen=True, eq=True)
class IteratorRestSource(Source):
    """The items the iterator at `base` has not produced yet, as a tuple, read without advancing it
    (guards.iterators.remaining_items)."""
    base: Source

    @property
    def path(self):
        return self.base.path + (("rest", 0),)

    @property
    def user_name(self):
        return f"{self.base.user_name}(rest)"

    def emit(self, codegen):
        return f"{codegen.constant_object(remaining_items, 'remaining_items')}({self.base.emit(codegen)})"


@dataclasses.dataclass(frozen=True, eq=True)
class IteratorStateSource(Source):
    """A part of the iterator at `base`, read without advancing it (guards.iterators.iterator_state): a list
    iterator's list ("seq") or position ("pos"), a dict iterator's dict ("dict"), the i-th argument of a zip /
    enumerate / map (an int), whether a zip is strict ("strict")."""
    base: Source
    part: object

    @property
    def path(self):
        return self.base.path + (("iterstate", self.part),)

    @property
    def user_name(self):
        return f"{self.base.user_name}({self.part})"

    def emit(self, codegen):
        read = codegen.constant_object(iterator_state, "iterator_state")
        return f"{read}({self.base.emit(codegen)}, {self.part!r})"


@dataclasses.dataclass(frozen=True, eq=True)
class HeldSource(Source):
    """An object the guards and the entry hold themselves (a closure cell of a function inlined without a source:
    a method found on its class); `name` is how the user knows it."""
    held: Held
    name: str

    @property
    def path(self):
        return (("held", self.held),)

    @property
    def user_name(self):
        return self.name

    def emit(self, codegen):
        return codegen.constant_object(self.held.obj, "held")


@dataclasses.dataclass(frozen=True, eq=True)
class ArrayTensorSource(Source):
    """The tensor that shares the memory of the NumPy array at `base` (`torch.from_numpy`): how a graph reads an
    array passed in, so that its in-place writes reach the user's array."""
    base: Source

    @property
    def path(self):
        return self.base.path + (("from_numpy", 0),)

    @property
    def user_name(self):
        return self.base.user_name

    def emit(self, codegen):
        return f"{codegen.constant_object(array_tensor, 'from_numpy')}({self.base.emit(codegen)})"


@dataclasses.dataclass(frozen=True, eq=True)
class ContextVarValueSource(Source):
    """The value the ContextVar at `base` holds in the running context when the call starts (guards.context_vars
    .current_value: UNSET when it holds none), read without raising."""
    base: Source

    @property
    def path(self):
        return self.base.path + (("ctxvar", 0),)

    @property
    def user_name(self):
        return f"{self.base.user_name}.get()"

    def emit(self, codegen):
        return f"{codegen.constant_object(current_value, 'ctxvar')}({self.base.emit(codegen)})"


@dataclasses.dataclass(frozen=True, eq=True)
class TensorSizeSource(Source):
    """Size `dim` of the tensor at `base`: a graph's SymInt input (the symbol of that dynamic dim), read per call
    with `x.size(dim)` as torch.compile's graphs receive it."""
    base: Source
    dim: int

    @property
    def path(self):
        return self.base.path + (("size", self.dim),)

    @property
    def user_name(self):
        return f"{self.base.user_name}.shape[{self.dim}]"

    def emit(self, codegen):
        return f"{self.base.emit(codegen)}.size({self.dim})"


def _memoize(cls) -> None:
    """A source is immutable and asked for its path, user name and hash again and again (wrap()'s cache, the
    guard tree, module-state batching, messages), each of which walks its whole chain of bases: compute each once
    per source object. (cached_property stores into the instance dict, which a frozen dataclass allows.)"""
    for name in ("path", "user_name"):
        prop = getattr(cls, name)
        if isinstance(prop, property):
            cached = functools.cached_property(prop.fget)
            cached.__set_name__(cls, name)
            setattr(cls, name, cached)
    plain_hash = cls.__hash__

    def __hash__(self, _plain=plain_hash):
        try:
            return self.__dict__["_hash"]
        except KeyError:
            value = self.__dict__["_hash"] = _plain(self)
            return value
    cls.__hash__ = __hash__


for _cls in (LocalSource, GlobalSource, ModuleGlobalSource, BuiltinSource, CellSource, CellObjectSource, AttrSource,
             ItemSource, ModuleDictSource, IteratorRestSource, IteratorStateSource, HeldSource,
             ArrayTensorSource, TensorSizeSource):
    _memoize(_cls)
