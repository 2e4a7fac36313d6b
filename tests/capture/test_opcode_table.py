"""The opcode table against CPython's own metadata: declared stack effects equal dis.stack_effect."""
import dis

import pytest

from jitcore.capture.opcodes import HANDLERS, UNSUPPORTED
from jitcore.capture.values import claimed_types

# opnames that never appear in code objects handed to the interpreter (folded by dis, or internal to CPython)
_NEVER_SEEN = {"CACHE", "RESERVED", "INTERPRETER_EXIT"}


def _real_opnames():
    return [name for name, op in dis.opmap.items()
            if op < 256 and not name.startswith("INSTRUMENTED_") and name not in _NEVER_SEEN]


@pytest.mark.parametrize("opname", sorted(HANDLERS))
def test_declared_stack_effect_matches_dis(opname):
    handler = HANDLERS[opname]
    op = dis.opmap[opname]
    for oparg in range(9):
        arg = oparg if op >= dis.HAVE_ARGUMENT else None
        for jump in (False, True):
            sig = handler.jump_signature if (jump and handler.jump_signature) else handler.signature
            expected = dis.stack_effect(op, arg, jump=jump)
            if opname == "FOR_ITER" and jump:
                continue  # dis counts the END_FOR the exhausted FOR_ITER skips (3.12 bytecodes.c)
            assert sig.pushes(oparg) - sig.pops(oparg) == expected, (opname, oparg, jump)


def test_every_opname_is_handled_or_listed_unsupported():
    missing = [name for name in _real_opnames() if name not in HANDLERS and name not in UNSUPPORTED]
    assert missing == []


def test_no_opname_is_both_handled_and_unsupported():
    assert not set(HANDLERS) & set(UNSUPPORTED)


def test_no_type_is_claimed_by_two_value_kinds():
    claimed = claimed_types()
    assert len(claimed) == len(set(claimed))


def test_handlers_are_named_after_their_opname():
    for name, handler in HANDLERS.items():
        aliases = [n for n, h in HANDLERS.items() if h.fn is handler.fn]
        if len(aliases) == 1:
            assert handler.fn.__name__ == name.lower()
