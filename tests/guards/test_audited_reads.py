"""A guard that passes reads no `__code__` / `__defaults__` through their audited getters and calls no `id()`
(Note [Audited reads]), and the address-based tests still catch every change the getters would."""
import sys
import types

import torch

import jitcore as jit
from jitcore.guards import function_words

_EVENTS: list = []
_RECORDING = [False]


def _record(event, args, recording=_RECORDING, events=_EVENTS):
    # the lists are bound as defaults: the hook outlives this module's globals (they are None at shutdown)
    if recording[0] and event in ("builtins.id", "object.__getattr__"):
        events.append((event, args[1] if event == "object.__getattr__" else None))


_INSTALLED = []


def _install_hook():
    """Hooks cannot be removed: install this one once, when a test first needs it (not at collection), and let it
    record only while a test asks it to."""
    if not _INSTALLED:
        sys.addaudithook(_record)
        _INSTALLED.append(True)


class Scale(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(3))

    def helper(self, x, k=2.0):
        return x * self.w * k

    def forward(self, x):
        return self.helper(x) + 1


def _entry_guard(compiled_module):
    return type(compiled_module).forward._jitcore_cache.entries[-1].guard_function


def test_a_passing_guard_makes_no_audited_reads():
    assert function_words.code_defaults_view(Scale.helper) is not None  # CPython 3.12's layout is known
    model = Scale()
    compiled = jit.compile(model, backend="eager")
    x = torch.randn(3)
    compiled(x)
    guard = _entry_guard(compiled)
    cells = type(compiled).forward.__closure__
    _install_hook()
    _EVENTS.clear()
    _RECORDING[0] = True
    try:
        assert guard.check(compiled, x, cells) is True
    finally:
        _RECORDING[0] = False
    assert _EVENTS == [], (_EVENTS, guard.source)


def test_a_compiled_call_that_hits_makes_no_audited_reads():
    """The dispatcher's test that the original still has its code reads the address, not `__code__`."""
    def step(x):
        return x * 2 + 1

    compiled = jit.compile(step, backend="eager")
    x = torch.randn(3)
    compiled(x)
    _install_hook()
    _EVENTS.clear()
    _RECORDING[0] = True
    try:
        compiled(x)
    finally:
        _RECORDING[0] = False
    assert _EVENTS == []


def test_replacing_a_methods_code_recompiles(counting):
    model = Scale()
    compiled = jit.compile(model, backend=counting)
    x = torch.randn(3)
    compiled(x)
    original = Scale.helper.__code__
    try:
        Scale.helper.__code__ = (lambda self, x, k=2.0: x - k).__code__
        torch.testing.assert_close(compiled(x), model(x))
        assert counting.graph_count == 2
    finally:
        Scale.helper.__code__ = original


def test_replacing_a_methods_defaults_recompiles(counting):
    model = Scale()
    compiled = jit.compile(model, backend=counting)
    x = torch.randn(3)
    compiled(x)
    try:
        Scale.helper.__defaults__ = (5.0,)
        torch.testing.assert_close(compiled(x), model(x))
        assert counting.graph_count == 2
    finally:
        Scale.helper.__defaults__ = (2.0,)


def _double(x):
    return x * 2


def _calls_global(x):
    return _double(x) + 1


def test_replacing_a_global_functions_code_recompiles(counting):
    compiled = jit.compile(_calls_global, backend=counting)
    x = torch.randn(3)
    compiled(x)
    original = _double.__code__
    try:
        _double.__code__ = (lambda x: x * 3).__code__
        torch.testing.assert_close(compiled(x), _calls_global(x))
        assert counting.graph_count == 2
    finally:
        _double.__code__ = original


def test_views_refuse_what_they_cannot_read():
    assert function_words.code_defaults_view(len) is None
    assert function_words.code_defaults_view(types.SimpleNamespace()) is None
    view = function_words.code_defaults_view(_double)
    assert view[:] == function_words.expected_words(_double.__code__, None)


def _shifted(a, b=1):
    return a + b


def _calls_shifted(x):
    return _shifted(x)


def test_a_longer_defaults_tuple_of_an_inlined_function_recompiles(counting):
    """Defaults bind to the last parameters: `(1, 2)` gives b the default 2 though item 0 still equals 1."""
    compiled = jit.compile(_calls_shifted, backend=counting)
    x = torch.zeros(1)
    compiled(x)
    try:
        _shifted.__defaults__ = (1, 2)
        torch.testing.assert_close(compiled(x), _calls_shifted(x))
        assert counting.graph_count == 2
    finally:
        _shifted.__defaults__ = (1,)


def _scaled(x, k=3):
    return x * k


def test_a_longer_defaults_tuple_of_the_compiled_function_is_bound_from_the_end():
    compiled = jit.compile(_scaled, backend="eager")
    x = torch.ones(1)
    compiled(x)
    try:
        _scaled.__defaults__ = (3, 5)
        torch.testing.assert_close(compiled(x), _scaled(x))
        assert float(compiled(x)) == 5.0
    finally:
        _scaled.__defaults__ = (3,)


def test_defaults_of_constants_are_one_check_and_an_equal_tuple_still_hits(counting):
    compiled = jit.compile(_calls_shifted, backend=counting)
    x = torch.zeros(1)
    compiled(x)
    source = _calls_shifted_guard_source(compiled)
    assert "__defaults__[0]: " not in source and "__defaults__: EqualsMatch((1,))" in source
    try:
        _shifted.__defaults__ = (1,)  # another tuple, equal: the same binding
        compiled(x)
        assert counting.graph_count == 1
        _shifted.__defaults__ = (1.0,)  # equal but not the same type: recompiles
        torch.testing.assert_close(compiled(x), _calls_shifted(x))
        assert counting.graph_count == 2
    finally:
        _shifted.__defaults__ = (1,)


def _calls_shifted_guard_source(compiled):
    return compiled._jitcore_cache.entries[-1].guard_function.source
