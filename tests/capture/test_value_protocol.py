"""The declared value protocol (values/base.py): every question has an answer on every kind, and reads never guard."""
import types

import pytest

from jitcore.guards import LengthMatch
from jitcore.capture.breaks import GraphBreak
from jitcore.capture.side_effects import SideEffects
from jitcore.capture.sources import LocalSource
from jitcore.capture.values import const
from jitcore.capture.values.base import Value
from jitcore.capture.values.iterator import is_iterator
from jitcore.capture.values.sequence import ListValue, TupleValue


class _Context:
    """The part of a capture context that wrapping a list's items uses: guards, the per-source cache, and the side
    effects (realizing a list tells them its initial items)."""

    def __init__(self):
        self.guards = []
        self.wrapped = {}
        self.wrapping = {}
        self.dynamic_paths = frozenset()
        self.side_effects = SideEffects()

    def guard(self, source, check):
        self.guards.append((source, check))


def _state():
    # no shape choice: numbers in a list passed in stay constants (not dynamic=True)
    return types.SimpleNamespace(ctx=_Context(), graph=types.SimpleNamespace(shape_choice=None))


def test_reading_a_list_passed_in_guards_nothing_until_it_is_realized():
    state = _state()
    xs = ListValue.lazy(state, [1, 2, 3], LocalSource("xs"))
    assert xs.items is None and xs.children() == [] and xs.needs_identity
    assert state.ctx.guards == []
    assert [item.constant() for item in xs.realize()] == [1, 2, 3]
    assert any(isinstance(check, LengthMatch) for _, check in state.ctx.guards)


def test_sequence_items_of_a_list_passed_in_reads_it_explicitly():
    state = _state()
    xs = ListValue.lazy(state, [4], LocalSource("xs"))
    assert [item.constant() for item in xs.sequence_items()] == [4]
    assert [item.constant() for item in TupleValue([const(5)]).sequence_items()] == [5]
    assert const(5).sequence_items() is None


def test_every_question_has_a_safe_default():
    value = Value()
    assert value.identity() is None and value.children() == [] and not value.is_symbolic_number()
    assert not is_iterator(value) and not value.is_rebuildable_exit() and not value.needs_identity
    assert not (value.has_plain_getattr or value.has_raw_setattr or value.has_builtin_methods)
    with pytest.raises(GraphBreak):
        value.raw_setattr(None, "x", const(1))
    with pytest.raises(GraphBreak):
        value.plain_getattr(None, "x")


def test_has_attr_asks_the_real_object_of_a_constant():
    assert const("text").has_attr(None, "upper")
    assert not const(3).has_attr(None, "upper")


def test_a_modelled_exception_is_typed_not_parsed():
    brk = GraphBreak.raises(KeyError, "'a'")
    assert (brk.kind, brk.exc_type, brk.message, brk.detail) == ("user_exception", KeyError, "'a'", "KeyError: 'a'")
    again = brk.fresh()
    assert (again.exc_type, again.message, again.location) == (KeyError, "'a'", None)
