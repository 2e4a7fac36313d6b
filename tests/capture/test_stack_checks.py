"""The per-step stack-effect check (config.debug_checks): on in every test run, and loud when a signature is wrong.

A handler whose declared signature disagrees with dis.stack_effect, or whose outputs disagree with its declared
signature, raises StackEffectError out of the compiled call (not a native fallback that would hide it).
"""
import dataclasses
import os

import pytest
import torch

import jitcore as jit
from jitcore.capture.opcodes import HANDLERS, Signature
from jitcore.capture.opcodes.registry import StackEffectError
from jitcore.config import config


def _negate(x):
    return -x


def _replace(monkeypatch, opname, **changes):
    monkeypatch.setattr(config, "debug_checks", True)  # on already, unless a run asked JITCORE_DEBUG=0
    monkeypatch.setitem(HANDLERS, opname, dataclasses.replace(HANDLERS[opname], **changes))


def test_checks_are_on_in_every_test_run():
    if os.environ.get("JITCORE_DEBUG") == "0":
        pytest.skip("this run turned the checks off (JITCORE_DEBUG=0)")
    assert config.debug_checks


def test_wrong_declared_signature_is_caught(monkeypatch):
    # pops and pushes what the wrong signature says, so only the comparison with dis can find it
    real = HANDLERS["UNARY_NEGATIVE"].fn

    def unary_negative(state, inst, value):
        result = real(state, inst, value)
        return result, result

    _replace(monkeypatch, "UNARY_NEGATIVE", fn=unary_negative, signature=Signature.parse("value -- res, extra"))
    with pytest.raises(StackEffectError, match="UNARY_NEGATIVE.*declares a stack effect of 1, dis says 0"):
        jit.compile(_negate, backend="eager")(torch.ones(2))


def test_handler_pushing_more_than_declared_is_caught(monkeypatch):
    real = HANDLERS["UNARY_NEGATIVE"].fn

    def unary_negative(state, inst, value):
        result = real(state, inst, value)
        return result, result

    _replace(monkeypatch, "UNARY_NEGATIVE", fn=unary_negative)
    with pytest.raises(StackEffectError, match="changed the stack by 1, its signature says 0"):
        jit.compile(_negate, backend="eager")(torch.ones(2))


def test_wrong_jump_signature_is_caught(monkeypatch):
    _replace(monkeypatch, "FOR_ITER", jump_signature=Signature.parse("iterator -- iterator"))

    def f(x, n):
        for i in range(n):
            x = x + i
        return x

    with pytest.raises(StackEffectError, match="FOR_ITER.*jumping"):
        jit.compile(f, backend="eager")(torch.ones(2), 3)


def test_checks_pass_through_inlined_frames_and_generators(monkeypatch, counting):
    monkeypatch.setattr(config, "debug_checks", True)

    def gen(n):
        for i in range(n):
            yield i

    def helper(x, n):
        return sum(gen(n)) + x

    def f(x):
        return helper(x, 3) * 2

    x = torch.ones(2)
    torch.testing.assert_close(jit.compile(f, backend=counting)(x), f(x))
    assert counting.graph_count == 1
