"""heapq's C functions (_heapq: heapify, heappush, heappop, ..., and the _max variants heapq.nlargest and
Counter.most_common use) over a list value whose items are constants: the real function runs on a list of those
constants and the list value takes the result, in place, as the C function changes its list. Items that are not
constants (tensors, objects) make the call decline, and it breaks as before.
"""
from __future__ import annotations

import _heapq

from jitcore.capture.values.base import NOT_CONSTANT
from jitcore.capture.values.call_rules import CallRule, Meaning, KNOWN_CALLABLE, register_callable
from jitcore.capture.values.constant import const, fold
from jitcore.capture.values.sequence import ListValue

__all__ = []


def _constants(value):
    """The list value's items as constants, or None."""
    if not isinstance(value, ListValue) or value.python_type() is not list:
        return None
    items = [v.constant() for v in value.realize()]
    return None if any(item is NOT_CONSTANT for item in items) else items


def _heap_rule(fn):
    def run(state, _fn, args, kwargs):
        if not args or kwargs:
            return NotImplemented
        heap = _constants(args[0])
        extra = [a.constant() for a in args[1:]]
        if heap is None or NOT_CONSTANT in extra:
            return NotImplemented
        result = fold(state, fn, heap, *extra)
        target = args[0]
        target._mutable(state, f"heapq.{fn.__name__}()")
        target.items[:] = [const(item) for item in heap]
        return const(result)
    return run


for _name in ("heapify", "heappush", "heappop", "heappushpop", "heapreplace", "_heapify_max", "_heappop_max",
              "_heapreplace_max"):
    _fn = getattr(_heapq, _name, None)
    if _fn is not None:
        register_callable(_fn, KNOWN_CALLABLE, CallRule(f"heapq.{_name}", Meaning.BUILTIN, _heap_rule(_fn)))
