"""How checks write source and name things: the Namespace of a generated function, literals, short reprs.

Shared by guards/checks.py (rendering and messages) and guards/compile.py (paths). Imports the standard library
only; never jitcore, bytecode or torch.
Entry points: Namespace, literal, constant_source, type_name, distinct_type_names, short_repr.
"""

from __future__ import annotations

import math
import types

import torch

from jitcore.guards.identity import address

__all__ = ["Namespace", "constant_source", "distinct_type_names", "literal", "short_repr", "type_name"]


class Namespace(dict):
    """The globals of one generated guard function.

    Every name it hands out starts with `___`, so it can never collide with a parameter that compile.py keeps.
    `constant(value)` binds a value once (a second request for the same object returns the same name);
    `temp()` reserves a name for a local variable (a walrus target) without binding anything.
    """

    def __init__(self) -> None:
        super().__init__()
        self._names_by_id: dict[int, str] = {}  # ids stay valid: the dict itself holds every bound value
        self._counters: dict[str, int] = {}

    def constant(self, value: object, hint: str = "c") -> str:
        """Bind `value` under a fresh name (or the name it already has) and return that name."""
        name = self._names_by_id.get(address(value))
        if name is None:
            name = self._fresh(hint)
            self[name] = value
            self._names_by_id[address(value)] = name
        return name

    def temp(self, hint: str = "t") -> str:
        """Return a fresh local-variable name."""
        return self._fresh(hint)

    def _fresh(self, hint: str) -> str:
        count = self._counters.get(hint, 0)
        while f"___{hint}{count}" in self:
            count += 1
        self._counters[hint] = count + 1
        return f"___{hint}{count}"


def literal(value: object) -> str | None:
    """Source text that evaluates to `value` as a compile-time constant, or None if there is none.

    Literals become co_consts of the generated function (LOAD_CONST), cheaper than a global and built once.
    """
    kind = type(value)
    if value is None or kind in (bool, int, str, bytes):
        return repr(value)
    if kind is float and math.isfinite(value):
        return repr(value)  # repr round-trips exactly; -0.0 folds to the constant -0.0
    if kind is tuple:
        items = [literal(item) for item in value]
        if None in items:
            return None
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    return None


def constant_source(value: object, ns: Namespace, hint: str = "c") -> str:
    """A literal where one exists, else a name bound in `ns`."""
    text = literal(value)
    return text if text is not None else ns.constant(value, hint)


def type_name(kind: type) -> str:
    """The name users know a type by: `Tensor`, `Parameter`, `int`."""
    return kind.__qualname__


def distinct_type_names(expected: type, got: type) -> tuple[str, str]:
    """Type names for a message, module-qualified when the bare names would read the same."""
    left, right = type_name(expected), type_name(got)
    if left == right:
        return f"{expected.__module__}.{left}", f"{got.__module__}.{right}"
    return left, right


def short_repr(obj: object, limit: int = 60) -> str:
    """A one-line description of `obj` for trees and messages: its repr if short, else `<Type at 0x...>`."""
    if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, type)):
        return f"<{type(obj).__name__} {getattr(obj, '__qualname__', obj.__name__)}>"
    if isinstance(obj, types.ModuleType):
        return f"<module {obj.__name__}>"
    if type(obj).__repr__ is object.__repr__:  # `<pkg.mod.Foo object at 0x...>` says no more than this
        return f"<{type_name(type(obj))} at {id(obj):#x}>"
    if isinstance(obj, torch.Tensor):
        # a tensor's repr reads its data: slow for a large one, and a crash for one whose storage was freed
        # (FSDP2 resizes an unsharded parameter's storage to 0 after forward)
        return f"<{type_name(type(obj))} {str(obj.dtype).removeprefix('torch.')}{list(obj.shape)} at {id(obj):#x}>"
    try:
        text = repr(obj)
    except Exception:  # a user repr may fail; the message must not
        text = ""
    if not text or len(text) > limit or "\n" in text:
        return f"<{type_name(type(obj))} at {id(obj):#x}>"
    return text
