"""A function's `__code__` and `__defaults__` compared by the addresses CPython stores in the function object,
without the attribute getters (Note [Audited reads]).

Imports the standard library only; never jitcore.
"""
from __future__ import annotations

import ctypes
import types

__all__ = ["code_defaults_view", "expected_words"]

_WORD = ctypes.c_ssize_t
_SCAN = 16


# Note [Audited reads]
# Reading `f.__code__`, `f.__defaults__` or `f.__kwdefaults__`, and calling `id()`, raise a CPython audit event.
# Once any audit hook is installed, every such read calls it: ~0.65 us against ~0.07 us without one. The filelock
# package installs a hook when imported, and torch.compile, Inductor and transformers import it, so most processes
# that run models pay this on every guard call: a Hugging Face model's guard read `__code__` and `__defaults__`
# ~90 times per call. The function object keeps both as adjacent pointers (PyFunctionObject: func_code,
# func_defaults, in 3.12 and 3.13); a ctypes view over those two words reads them without the getters (~0.1 us),
# and comparing them with the addresses of the objects a check holds alive is the same test as `is`. Where the
# function is the one the check was made for (its identity is checked first and a local holds it during the read)
# the view addresses live memory. The offset is found by probing two functions when this module is imported and
# each view is checked against the getters when it is made; if either disagrees, checks keep the getters.


def _probe_offset() -> int | None:
    def first(a=1):
        return a

    def second(b=(), c=None):
        return b, c

    offset = None
    for probe in (first, second):
        words = (_WORD * _SCAN).from_address(id(probe))
        found = [index for index in range(_SCAN - 1)
                 if words[index] == id(probe.__code__) and words[index + 1] == id(probe.__defaults__)]
        if len(found) != 1 or offset not in (None, found[0]):
            return None
        offset = found[0]
    return offset * ctypes.sizeof(_WORD)


_OFFSET = _probe_offset()


def expected_words(code, defaults) -> list:
    """What a view reads for a function whose `__code__` is `code` and `__defaults__` is `defaults` (a function
    without defaults stores NULL)."""
    return [id(code), 0 if defaults is None else id(defaults)]


def code_defaults_view(fn):
    """A live view of `fn`'s (code, defaults) addresses, read as `view[:]` (a list of two ints), or None where it
    cannot be made (not a plain function, an interpreter whose layout the probe did not find). The view holds no
    reference to `fn`: read it only while `fn` is alive."""
    if _OFFSET is None or type(fn) is not types.FunctionType:
        return None
    view = (_WORD * 2).from_address(id(fn) + _OFFSET)
    if view[:] != expected_words(fn.__code__, fn.__defaults__):
        return None
    return view
