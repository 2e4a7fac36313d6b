"""Note [Call rules found once per capture]: a capture attempt asks the predicates about each callable once, lazily
and in order, and sees registrations and marks made meanwhile."""
import pytest
import torch

import jitcore as jit
import jitcore.capture.values  # noqa: F401 (registers every rule)
from jitcore.capture.values import call_rules
from jitcore.capture.values.call_rules import (CallRule, Meaning, RuleAnswers, first_rule, register_callable,
                                               register_predicate, rules_for)
from jitcore.marks import mark_disabled


@pytest.fixture
def asked(monkeypatch):
    """The predicates' registry, copied so a test may add to it, and {name: callables asked} of a spy
    predicate registered above every other (it claims nothing)."""
    monkeypatch.setattr(call_rules, "_BY_PREDICATE", list(call_rules._BY_PREDICATE))
    monkeypatch.setattr(call_rules, "_BY_CALLABLE", dict(call_rules._BY_CALLABLE))
    seen = []

    def spy(fn):
        seen.append(fn)
        return False
    register_predicate(1000, spy, CallRule("never", Meaning.OPAQUE))
    return seen


def _helper(x):
    return x * 2


def test_answers_replay_what_rules_for_finds(asked):
    answers = RuleAnswers()
    for fn in (_helper, len, torch.relu, torch.nn.Linear, dict.fromkeys, print):
        assert list(answers.rules(fn)) == list(rules_for(fn))
        assert list(answers.rules(fn)) == list(rules_for(fn))


def test_each_callable_is_asked_about_once(asked):
    answers = RuleAnswers()
    for _ in range(3):
        assert first_rule(_helper, answers).meaning is Meaning.INLINE
        assert list(answers.rules(_helper))[-1].meaning is Meaning.INLINE
    assert asked == [_helper]


def test_predicates_still_run_lazily(asked):
    ran = []

    def later(fn):
        ran.append(fn)
        return False
    register_predicate(500, later, CallRule("later", Meaning.OPAQUE))
    register_callable(_helper, 900, CallRule("first", Meaning.LOOKASIDE))
    answers = RuleAnswers()
    assert first_rule(_helper, answers).name == "first"
    assert ran == []  # below the rule that answered: not asked yet
    assert list(answers.rules(_helper)) == list(rules_for(_helper))
    list(answers.rules(_helper))
    assert ran == [_helper, _helper]  # once for the answers, once for rules_for without them


def test_a_registration_made_meanwhile_is_seen(asked):
    answers = RuleAnswers()
    assert first_rule(_helper, answers).meaning is Meaning.INLINE
    register_callable(_helper, 95, CallRule("registered later", Meaning.LOOKASIDE))
    assert first_rule(_helper, answers).name == "registered later"


def test_a_mark_set_meanwhile_is_seen(asked):
    def fn(x):
        return x
    answers = RuleAnswers()
    assert first_rule(fn, answers).meaning is Meaning.INLINE
    mark_disabled(fn)
    assert first_rule(fn, answers).meaning is Meaning.OPAQUE


def test_a_predicate_that_raises_raises_again(asked):
    def fails(fn):
        raise RuntimeError("predicate failed")
    register_predicate(500, fails, CallRule("fails", Meaning.OPAQUE))
    answers = RuleAnswers()
    for _ in range(2):
        with pytest.raises(RuntimeError, match="predicate failed"):
            list(answers.rules(_helper))


def test_a_capture_asks_about_a_function_called_many_times_once(asked, counting):
    def f(x):
        for _ in range(6):
            x = _helper(x)
        return x
    x = torch.randn(3)
    torch.testing.assert_close(jit.compile(f, backend=counting)(x), f(x))
    assert counting.graph_count == 1
    assert asked.count(_helper) == 1
