"""A backend that returns no callable (None, a number) is the backend's bug: jitcore names the backend and what it
returned, runs the function natively, and under fullgraph raises BackendCompileError."""
import pytest
import torch

import jitcore as jit
from jitcore.errors import BackendCompileError
from jitcore.report.console import EVENTS


def _f(x):
    return x.sin() + 1


def _backend_returning(value):
    def backend(gm, example_inputs):
        return value
    return backend


@pytest.mark.parametrize("returned, words", [(None, "returned None"), (5, "returned int 5")])
def test_backend_returning_no_callable_runs_natively_and_names_it(returned, words):
    compiled = jit.compile(_f, backend=_backend_returning(returned))
    x = torch.randn(3)
    for _ in range(2):
        torch.testing.assert_close(compiled(x), _f(x))
    messages = [m for t, m in EVENTS if t == "fallbacks"]
    assert len(messages) == 1, messages
    assert words in messages[0] and "backend 'backend'" in messages[0] and "instead of a callable" in messages[0]
    assert "internal error" not in messages[0] and "jitcore bug" not in messages[0]


def test_backend_returning_none_under_fullgraph_raises_backend_compile_error():
    compiled = jit.compile(_f, backend=_backend_returning(None), fullgraph=True)
    with pytest.raises(BackendCompileError, match="returned None instead of a callable"):
        compiled(torch.randn(3))


def test_console_names_the_backend_that_returned_no_callable():
    from io import StringIO
    from rich.console import Console
    from jitcore.report.console import use_console

    if "test_returns_five" not in jit.backends.list():
        jit.backends.register_backend("test_returns_five", _backend_returning(5))
    with use_console(Console(file=StringIO(), width=100)) as console:
        torch.testing.assert_close(jit.compile(_f, backend="test_returns_five")(torch.ones(2)), _f(torch.ones(2)))
    text = console.file.getvalue()
    assert "backend 'test_returns_five' returned int 5, not a callable" in text, text
    assert "jitcore bug" not in text
