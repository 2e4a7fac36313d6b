"""Marks users put on their functions, read by every layer: disabled (never traced), allowed in graph (one graph
node), and `is_compiling()` (which capture folds to True); torch's own not-to-compile marks count as disabled. A
leaf module: it imports nothing of jitcore.

Marks never keep a function alive longer than the user does, except `allow_in_graph`'s, which holds the function
as torch.compile's does (the mark is a promise about that function object).
"""
from __future__ import annotations

import os

import torch

__all__ = ["mark_disabled", "is_disabled", "is_marked_disabled", "disabled_by_torch", "TORCH_DISABLE_WRAPPERS", "allow_in_graph", "is_allowed_in_graph", "is_compiling", "generation", "mark_dynamic",
           "maybe_mark_dynamic", "mark_static"]

_DISABLED_ATTR = "__jitcore_disabled__"
#: an identity key without the audited `id()`: Note [Identity keys without id()] (guards/identity.py), not
#: imported from there so that this module stays a leaf
_address = object.__hash__
#: functions that take no attribute (builtins, bound methods of C types): _address -> the object, kept alive
_disabled_ids: dict = {}
#: functions marked with jit.allow_in_graph: _address -> the function
_allowed: dict = {}
#: marks set so far, so that what capture learnt from the marks can tell they changed (`generation`)
_marks_set = 0


def generation() -> int:
    """Changes whenever a function is marked (jit.disable, jit.allow_in_graph)."""
    return _marks_set


def mark_disabled(fn) -> None:
    global _marks_set
    _marks_set += 1
    target = getattr(fn, "__func__", fn)
    try:
        setattr(target, _DISABLED_ATTR, True)
    except (AttributeError, TypeError):
        _disabled_ids[_address(target)] = target


def is_disabled(fn) -> bool:
    """Marked not to compile: with jit.disable, or by torch (`disabled_by_torch`)."""
    return is_marked_disabled(fn) or disabled_by_torch(fn)


def is_marked_disabled(fn) -> bool:
    """Marked with jit.disable."""
    target = getattr(fn, "__func__", fn)
    return getattr(target, _DISABLED_ATTR, False) is True or _address(target) in _disabled_ids


def disabled_by_torch(fn) -> bool:
    """A function torch marks as not-to-compile: the wrapper `torch._dynamo.disable` returns (it carries
    `_torchdynamo_disable`), or the one `torch._disable_dynamo` returns (torch's own decorator, on
    `Optimizer.zero_grad` and friends: recognised by its code). Dynamo runs both in Python, never traced."""
    target = getattr(fn, "__func__", fn)
    if getattr(target, "_torchdynamo_disable", False) is True:
        return True
    # the wrappers are defined in two torch modules: only a function of theirs can run one's code. Reading
    # `__globals__` raises no audit event, reading `__code__` does (Note [Audited reads], function_words.py), and
    # capture asks this of every function it meets
    fn_globals = getattr(target, "__globals__", None)
    if type(fn_globals) is not dict or fn_globals.get("__name__") not in _TORCH_DISABLE_MODULES:
        return False
    code = getattr(target, "__code__", None)
    return code is not None and (code.co_filename, code.co_qualname) in TORCH_DISABLE_WRAPPERS


def _torch_disable_wrappers() -> frozenset:
    """(filename, qualname) of the wrapper functions of torch's disable decorators, found without importing
    torch._dynamo (torch imports torch._compile itself)."""
    root = os.path.dirname(torch.__file__)
    return frozenset({(os.path.join(root, "_compile.py"), "_disable_dynamo.<locals>.inner"),
                      (os.path.join(root, "_dynamo", "eval_frame.py"), "DisableContext.__call__.<locals>._fn")})


#: the code locations of torch's disable wrappers: a frame running one runs a region torch keeps uncompiled
TORCH_DISABLE_WRAPPERS = _torch_disable_wrappers()
#: the modules those wrappers are defined in
_TORCH_DISABLE_MODULES = frozenset({"torch._compile", "torch._dynamo.eval_frame"})


def allow_in_graph(fn) -> None:
    global _marks_set
    _marks_set += 1
    _allowed[_address(fn)] = fn


def is_allowed_in_graph(fn) -> bool:
    return _allowed.get(_address(fn)) is fn


def is_compiling() -> bool:
    """False when run natively; True inside code jitcore traces (capture replaces this call with True)."""
    return False


# -- shape marks on tensors -----------------------------------------------------------------------------------------
# Stored on the tensor under torch._dynamo's own attribute names, so that a tensor marked with
# torch._dynamo.mark_dynamic is dynamic for jitcore too (capture/shapes.py reads them).
class DimRange:
    """The min/max given to mark_dynamic for one dim (the fields torch's own range marks have)."""
    __slots__ = ("dim", "min", "max")

    def __init__(self, dim: int, min: int | None, max: int | None):
        self.dim, self.min, self.max = dim, min, max

    def __repr__(self):
        return f"DimRange(dim={self.dim}, min={self.min}, max={self.max})"


def _dims(t, dim) -> list:
    dims = [dim] if isinstance(dim, int) else list(dim)
    for d in dims:
        if type(d) is not int or not -t.dim() <= d < max(t.dim(), 1):
            raise ValueError(f"dim {d!r} is not a dim of a {t.dim()}-d tensor")
    return [d % t.dim() for d in dims]


def _index_set(t, name: str) -> set:
    found = getattr(t, name, None)
    if found is None:
        found = set()
        setattr(t, name, found)
    return found


def mark_dynamic(t, dim, min: int | None = None, max: int | None = None) -> None:
    """Compile `t`'s size at `dim` (an int or a list of ints) as a symbol from the first call: one graph for every
    size (within min..max, when given). When the traced code needs the size as a constant anyway, the entry is
    specialised to it and a message says so."""
    for d in _dims(t, dim):
        _index_set(t, "_dynamo_dynamic_indices").add(d)
        if min is not None or max is not None:
            _index_set(t, "_dynamo_dynamic_range").add(DimRange(d, min, max))


def maybe_mark_dynamic(t, dim) -> None:
    """Like mark_dynamic, but a traced code that needs the size as a constant specialises it without a message."""
    for d in _dims(t, dim):
        _index_set(t, "_dynamo_weak_dynamic_indices").add(d)


def mark_static(t, dim) -> None:
    """Keep `t`'s size at `dim` static (a new size compiles a new entry), whatever the shape policy says."""
    for d in _dims(t, dim):
        _index_set(t, "_dynamo_static_indices").add(d)
