"""codegen/native_calls.py: a code whose calls pass their callable through a hook runs as the original does
(Note [Calls through a hook])."""

from __future__ import annotations

import dis
import types

from bytecode import Bytecode, Instr

from jitcore.codegen.native_calls import calls_through, made_here


class _Recorder:
    def __init__(self):
        self.seen = []

    def __call__(self, callee):
        self.seen.append(callee)
        return callee


class _Base:
    def value(self, x, k=0):
        return x + k


class _Child(_Base):
    def value(self, x, k=0):
        return super().value(x, k=k) * 2


def _total(*xs):
    return sum(xs)


def _program(a, *rest, scale=3, **named):
    child = _Child()
    total = 0
    for i in range(3):
        total += child.value(i, k=1) + _total(*rest) + len([j for j in range(i)])
        try:
            total += _total(1, 2 if i else 3)
            if i == 1:
                raise KeyError(i)
        except KeyError:
            total -= 1
    return total * scale, named


def _hooked(fn, hook, params):
    return types.FunctionType(calls_through(fn.__code__, hook, params), fn.__globals__, fn.__name__, None,
                              fn.__closure__)


def test_hooked_code_matches_the_original_and_hooks_each_call():
    hook = _Recorder()
    hooked = _hooked(_program, hook, ("a", "rest", "scale", "named"))
    assert hooked(1, (2, 3), 4, {"z": 1}) == _program(1, 2, 3, scale=4, z=1)
    # methods are bound (their `self` never reaches the hook), builtins and functions are passed as they are
    assert _total in hook.seen and range in hook.seen and len in hook.seen
    assert any(isinstance(c, types.MethodType) and c.__func__ is _Child.value for c in hook.seen)
    assert not any(isinstance(c, _Child) for c in hook.seen)


def test_zero_argument_super_in_a_hooked_method_finds_its_class():
    hook = _Recorder()
    hooked = _hooked(_Child.value, hook, None)
    assert hooked(_Child(), 3, k=1) == _Child().value(3, k=1)
    assert any(isinstance(c, types.MethodType) and c.__func__ is _Base.value for c in hook.seen)


def test_hook_can_replace_the_callee():
    def double_result(callee):
        return (lambda *a, **k: 2 * callee(*a, **k)) if callee is _total else callee

    def f(x):
        return _total(x, 1)

    hooked = _hooked(f, double_result, ("x",))
    assert hooked(4) == 10


def test_call_whose_method_slot_may_hold_self_leaves_the_callable_alone():
    # a resume code's stack handed over as values: `method, self` of a pending call, not NULL below the callable
    body = Bytecode([Instr("RESUME", 0), Instr("LOAD_FAST", "method"), Instr("LOAD_FAST", "receiver"),
                     Instr("CALL", 0), Instr("RETURN_VALUE")])
    body.argnames = ["method", "receiver"]
    body.argcount = 2
    hook = _Recorder()
    code = calls_through(body.to_code(), hook)
    assert types.FunctionType(code, {})(_Base.value.__get__, _Base())  # method(receiver): a bound method
    assert hook.seen == []


def test_made_codes_are_known_and_hold_no_method_form_loads():
    code = calls_through(_program.__code__, _Recorder(), ("a", "rest", "scale", "named"))
    assert made_here(code) and not made_here(_program.__code__)
    methods = [inst for inst in dis.get_instructions(code) if inst.opname == "LOAD_ATTR" and inst.arg & 1]
    assert methods == []
