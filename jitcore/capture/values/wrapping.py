"""`wrap()`: the one place a real Python object becomes a value (with the guards its kind relies on).

This module sits low in the package so that every kind module imports `wrap` at its top. It holds the dispatch
tables only; values/__init__.py, which imports every kind, fills them with `install()` (exact types, predicates with
explicit priorities, the fallback for everything else). Imports nothing of jitcore but `jitcore.guards.identity`.
"""
from __future__ import annotations

from jitcore.guards.identity import address

__all__ = ["wrap", "install", "reserve", "reserved_value"]

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


def _wrapper_of(value):
    wrapper = _BY_TYPE.get(type(value))
    if wrapper is None:
        for _, predicate, candidate in _BY_PREDICATE:
            if predicate(value):
                return candidate
        return _FALLBACK[0]
    return wrapper


def wrap(state, value, source):
    """The value for a real object read from `source` (None: made or found without a reloadable source)."""
    if source is not None:
        cached = state.ctx.wrapped.get(source)
        if cached is not None:
            return cached
    wrapper = _wrapper_of(value)
    kind = _IDENTITY_KIND[0](wrapper, source, state.ctx) if source is not None else None
    reserved = False
    if kind is not None:
        seen = state.ctx.by_identity.get(address(value))
        if seen is not None and seen[0] is value:
            # one object reached from two sources (`f(x, l, l)`, a tensor passed twice): one value, guarded `is`
            if seen[2] != source:
                state.ctx.guard_same(seen[2], source)
            if seen[1] is not None:
                state.ctx.wrapped[source] = seen[1]
                return seen[1]
            reserved = True  # by reserve(): wrapped now, its identity already guarded
    result = wrapper(state, value, source)
    if source is not None:
        state.ctx.wrapped[source] = result
    if kind is not None:
        state.ctx.by_identity[address(value)] = (value, result, source)
        if kind == "distinct" and not reserved:
            state.ctx.guard_distinct(source)
    return result


def reserve(state, value, source) -> None:
    """Claim `value`'s identity for `source` without wrapping it (an iterator's container, whose items need not be
    read: Note [Iterators carried across a break]): a later wrap() of the same object from any source gets one
    value for both, guarded `is`, and another object stays guarded distinct."""
    if source in state.ctx.wrapped:
        return
    kind = _IDENTITY_KIND[0](_wrapper_of(value), source, state.ctx)
    seen = state.ctx.by_identity.get(address(value))
    if seen is not None and seen[0] is value:
        if seen[2] != source:
            state.ctx.guard_same(seen[2], source)
        return
    if kind is not None:
        state.ctx.by_identity[address(value)] = (value, None, source)
        if kind == "distinct":
            state.ctx.guard_distinct(source)


def reserved_value(ctx, value):
    """The value wrap() made for `value` in this capture (`ctx`), or None (not wrapped, or only reserved)."""
    seen = ctx.by_identity.get(address(value))
    return seen[1] if seen is not None and seen[0] is value else None
