"""ContextVar get/set/reset while tracing (Note [Context variables], capture/values/context_vars.py): a variable
that existed before the call is read through a guard, `set`/`reset` are replayed after the graph, `get()` after
`set()` answers the new value, and a token Python needs after the graph makes capture stop before its `set`.
The output-collector pattern of transformers (set a collector, hooks append to what `get()` answers, reset in
`finally`) is one graph.
"""

import contextvars

import pytest
import torch

import jitcore as jit
from tests.support import CountingBackend

_collector = contextvars.ContextVar("jitcore_test_collector", default=None)
_plain = contextvars.ContextVar("jitcore_test_plain")


def _hook(y):
    bucket = _collector.get()
    if bucket is not None:
        bucket.append(y * 2)


def _layers(x):
    y = x.sin()
    _hook(y)
    z = y.cos()
    _hook(z)
    return z


def collect_in_try_finally(x):
    collected = []
    token = _collector.set(collected)
    try:
        out = _layers(x)
    finally:
        _collector.reset(token)
    return out, collected


def set_without_reset(x):
    _collector.set([x + 1])
    return _collector.get()[0] * 3


def reads_outside_value(x):
    bucket = _collector.get()
    if bucket is None:
        return x - 1
    bucket.append(x.sum())
    return x + len(bucket)


def reset_wrong_token(x):
    token = _plain.set(1)
    try:
        _collector.reset(token)
    except ValueError:
        x = x + 10
    _plain.reset(token)
    return x


def unset_get_raises(x):
    try:
        _plain.get()
    except LookupError:
        return x * 2
    return x


def token_live_at_break(x):
    token = _collector.set([x])
    y = x * 2
    print("between")
    out = y + _collector.get()[0]
    _collector.reset(token)
    return out


def returns_token(x):
    return x + 1, _collector.set(None)


def mutate_old_after_set(x):
    old = _collector.get()
    _collector.set([x * 3])
    old.append(x + 1)
    return _collector.get()[0] + len(old)


def _run(fn, *args):
    backend = CountingBackend()
    compiled = jit.compile(fn, backend=backend)
    return compiled, backend


def _state():
    return _collector.get(), _plain.get("<unset>")


def test_collector_pattern_is_one_graph_and_matches_eager():
    compiled, backend = _run(collect_in_try_finally)
    for _ in range(3):
        x = torch.randn(4)
        out, collected = compiled(x)
        expected, expected_collected = collect_in_try_finally(x)
        torch.testing.assert_close(out, expected)
        assert len(collected) == 2
        for got, want in zip(collected, expected_collected):
            torch.testing.assert_close(got, want)
        assert _collector.get() is None
    assert backend.graph_count == 1
    assert jit.explain(collect_in_try_finally, torch.randn(4)).breaks == []


def test_set_is_replayed_and_get_after_set_answers_the_new_value():
    compiled, backend = _run(set_without_reset)
    ctx_eager, ctx_jit = contextvars.copy_context(), contextvars.copy_context()
    x = torch.randn(3)
    want = ctx_eager.run(set_without_reset, x)
    got = ctx_jit.run(compiled, x)
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(ctx_jit.run(_collector.get)[0], ctx_eager.run(_collector.get)[0])
    assert _collector.get() is None
    assert backend.graph_count == 1


def test_write_to_the_old_value_after_set_reaches_the_old_value():
    compiled, backend = _run(mutate_old_after_set)
    x = torch.randn(3)
    eager_bucket, jit_bucket = [], []
    want = contextvars.copy_context().run(lambda: (_collector.set(eager_bucket), mutate_old_after_set(x),
                                                   _collector.get())[1:])
    got = contextvars.copy_context().run(lambda: (_collector.set(jit_bucket), compiled(x), _collector.get())[1:])
    torch.testing.assert_close(got[0], want[0])
    torch.testing.assert_close(got[1][0], want[1][0])
    assert len(jit_bucket) == len(eager_bucket) == 1
    torch.testing.assert_close(jit_bucket[0], eager_bucket[0])
    assert backend.graph_count == 1


def test_get_is_guarded_on_what_the_variable_holds():
    compiled, backend = _run(reads_outside_value)
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x), x - 1)
    bucket_eager, bucket_jit = [torch.ones(())], [torch.ones(())]
    want = contextvars.copy_context().run(lambda: (_collector.set(bucket_eager), reads_outside_value(x))[1])
    got = contextvars.copy_context().run(lambda: (_collector.set(bucket_jit), compiled(x))[1])
    torch.testing.assert_close(got, want)
    assert len(bucket_jit) == len(bucket_eager) == 2
    torch.testing.assert_close(bucket_jit[1], bucket_eager[1])
    # back to unset: the first entry again, no third capture
    torch.testing.assert_close(compiled(x), x - 1)
    assert backend.graph_count == 2


def test_reset_with_another_variables_token_raises_value_error_as_python_does():
    compiled, backend = _run(reset_wrong_token)
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x), reset_wrong_token(x))
    assert _state() == (None, "<unset>")


def test_get_of_an_unset_variable_without_default_raises_lookup_error():
    compiled, backend = _run(unset_get_raises)
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x), x * 2)
    assert backend.graph_count == 1


def test_token_live_at_a_break_is_made_by_python(capsys):
    compiled, backend = _run(token_live_at_break)
    for _ in range(2):
        x = torch.randn(3)
        torch.testing.assert_close(compiled(x), token_live_at_break(x))
        assert _collector.get() is None
    report = jit.explain(token_live_at_break, torch.randn(3))
    assert any("ContextVar" in b.reason for b in report.breaks)


def test_returned_token_is_a_real_token():
    compiled, backend = _run(returns_token)
    x = torch.randn(3)
    out, token = compiled(x)
    assert isinstance(token, contextvars.Token) and token.var is _collector
    _collector.reset(token)
    torch.testing.assert_close(out, x + 1)
    assert _collector.get() is None


@pytest.fixture(autouse=True)
def _clean_context():
    yield
    assert _collector.get() is None
