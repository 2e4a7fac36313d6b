"""Check._identity (guards/checks.py): a check's key is computed once and equality and hashing agree with it."""
from __future__ import annotations

from jitcore.guards import EqualsMatch, LengthMatch, TypeMatch


def test_key_is_computed_once_and_hash_and_equality_follow_it(monkeypatch):
    calls = []
    original = EqualsMatch._key
    monkeypatch.setattr(EqualsMatch, "_key", lambda self: calls.append(1) or original(self))
    check = EqualsMatch((1, 2.0, "a"))
    assert hash(check) == hash(check) == hash(EqualsMatch((1, 2.0, "a")))
    assert check == EqualsMatch((1, 2.0, "a"))
    assert calls.count(1) == 3  # once per check object (one for the first, one for each new one)


def test_checks_of_different_values_or_kinds_stay_different():
    assert EqualsMatch(0.0) != EqualsMatch(-0.0)
    assert EqualsMatch((1,)) != EqualsMatch((True,))
    assert LengthMatch(2) != LengthMatch(3)
    assert TypeMatch(int) != TypeMatch(bool)
    assert len({EqualsMatch(1), EqualsMatch(1), EqualsMatch(2)}) == 2
