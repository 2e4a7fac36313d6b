"""Signature.input_layout (capture/opcodes/registry.py): the per-oparg slot counts the interpreter pops by are the
declared items' own counts, and the one-slice fast path is taken only where every input is one present slot."""
from __future__ import annotations

from jitcore.capture.opcodes import HANDLERS


def test_layout_matches_each_declared_item_for_every_handler_and_small_oparg():
    for handler in HANDLERS.values():
        for signature in filter(None, (handler.signature, handler.jump_signature)):
            for oparg in (None, *range(9)):
                slots, single = signature.input_layout(oparg)
                assert slots == tuple(item.size(oparg) for item in signature.inputs)
                assert single == all(item.count is None and item.size(oparg) == 1 for item in signature.inputs)
                assert signature.input_layout(oparg) is signature.input_layout(oparg)  # made once per oparg


def test_layout_of_an_array_input_follows_oparg():
    slots, single = HANDLERS["BUILD_TUPLE"].signature.input_layout(3)
    assert slots == (3,) and not single
    slots, single = HANDLERS["BINARY_SUBSCR"].signature.input_layout(0)
    assert slots == (1, 1) and single
