"""The opcode table against CPython's own metadata: declared stack effects equal dis.stack_effect."""
import dis

import pytest

from jitcore.capture.opcodes import HANDLERS, UNSUPPORTED
from jitcore.capture.opcodes.registry import DIS_DIFFERENCES
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
            expected = dis.stack_effect(op, arg, jump=jump)
            if opname in DIS_DIFFERENCES:
                expected += DIS_DIFFERENCES[opname][1 if jump else 0]
            assert handler.effect(oparg, jump) == expected, (opname, oparg, jump)
            assert handler.checked_effect(oparg, jump) == expected, (opname, oparg, jump)


def test_only_listed_opnames_differ_from_dis():
    """Each difference from dis is a known 3.12 quirk, not a way to silence a wrong signature."""
    assert sorted(DIS_DIFFERENCES) == ["FOR_ITER", "RETURN_GENERATOR"]
    assert DIS_DIFFERENCES["FOR_ITER"][:2] == (0, -2)
    assert DIS_DIFFERENCES["RETURN_GENERATOR"][:2] == (1, 1)


def test_for_iter_declares_both_outcomes():
    handler = HANDLERS["FOR_ITER"]
    assert handler.effect(0, False) == 1  # pushes the next item over the iterator
    assert handler.effect(0, True) == -1  # drops the exhausted iterator


def test_every_opname_is_handled_or_listed_unsupported():
    missing = [name for name in _real_opnames() if name not in HANDLERS and name not in UNSUPPORTED]
    assert missing == []


def test_no_opname_is_both_handled_and_unsupported():
    assert not set(HANDLERS) & set(UNSUPPORTED)


def test_no_type_is_claimed_by_two_value_kinds():
    claimed = [t for t, _ in claimed_types()]
    assert claimed, "claimed_types() lists every claim"
    twice = {t.__name__ for t in claimed if claimed.count(t) > 1}
    assert twice == set()


def test_handlers_are_named_after_their_opname():
    for name, handler in HANDLERS.items():
        aliases = [n for n, h in HANDLERS.items() if h.fn is handler.fn]
        if len(aliases) == 1:
            assert handler.fn.__name__ == name.lower()
