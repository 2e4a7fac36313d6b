"""`wrap()`: the one place a real Python object becomes a value (with the guards its kind relies on).

This module sits low in the package so that every kind module imports `wrap` at its top. It holds the dispatch
tables only; values/__init__.py, which imports every kind, fills them with `install()` (exact types, predicates with
explicit priorities, the fallback for everything else). Imports nothing of jitcore.
"""
from __future__ import annotations

__all__ = ["wrap", "install"]

#: exact type -> wrapper(state, value, source)
_BY_TYPE: dict = {}
#: (priority, predicate, wrapper), highest priority first; asked when the exact type is not in _BY_TYPE
_BY_PREDICATE: list = []
#: the wrapper for an object no table claims
_FALLBACK: list = []


#: identity_kind(wrapper, source, ctx) -> None / "same" / "distinct" (see values/__init__.py _identity_kind)
_IDENTITY_KIND: list = []


def install(by_type: dict, by_predicate: list, fallback, identity_kind) -> None:
    """Fill the tables (values/__init__.py calls this once, after importing every kind)."""
    _BY_TYPE.update(by_type)
    _BY_PREDICATE[:] = sorted(by_predicate, key=lambda row: -row[0])
    _FALLBACK[:] = [fallback]
    _IDENTITY_KIND[:] = [identity_kind]


def wrap(state, value, source):
    """The value for a real object read from `source` (None: made or found without a reloadable source)."""
    if source is not None:
        cached = state.ctx.wrapped.get(source)
        if cached is not None:
            return cached
    wrapper = _BY_TYPE.get(type(value))
    if wrapper is None:
        for _, predicate, candidate in _BY_PREDICATE:
            if predicate(value):
                wrapper = candidate
                break
        else:
            wrapper = _FALLBACK[0]
    kind = _IDENTITY_KIND[0](wrapper, source, state.ctx) if source is not None else None
    if kind is not None:
        seen = state.ctx.by_identity.get(id(value))
        if seen is not None and seen[0] is value:
            # one object reached from two sources (`f(x, l, l)`, a tensor passed twice): one value, guarded `is`
            state.ctx.guard_same(seen[2], source)
            state.ctx.wrapped[source] = seen[1]
            return seen[1]
    result = wrapper(state, value, source)
    if source is not None:
        state.ctx.wrapped[source] = result
    if kind is not None:
        state.ctx.by_identity[id(value)] = (value, result, source)
        if kind == "distinct":
            state.ctx.guard_distinct(source)
    return result
