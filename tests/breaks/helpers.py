"""Helpers for the graph-break tests: an eager comparison that also compares printed output, and source lines.

`compare_printing` runs eager and compiled on fresh clones of one arg set and requires equal results (or the same
exception type and message), equal printed output and equal inputs afterwards. `check_breaks` is the standard
break test built on it (each arg set called twice; the second call may not compile again).
`line_of` finds the absolute line number of a statement inside a function, for `GraphBreakError.lineno` checks.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import jitcore as jit
from tests.support import Args, CountingBackend, assert_same, clone_inputs

__all__ = ["assert_in_graphs", "call_capturing", "check_breaks", "compare_printing", "line_of"]


def _as_args(arg_set: Any) -> Args:
    return arg_set if isinstance(arg_set, Args) else Args(*arg_set)


def call_capturing(fn: Callable[..., Any], call: Args, capsys: Any) -> tuple[str, Any, BaseException | None]:
    """Call fn(*call.args, **call.kwargs); return (printed output, result, exception raised or None)."""
    capsys.readouterr()
    try:
        result, error = fn(*call.args, **call.kwargs), None
    except Exception as raised:  # noqa: BLE001 - compared with the other side by the caller
        result, error = None, raised
    return capsys.readouterr().out, result, error


def compare_printing(fn: Callable[..., Any], compiled: Callable[..., Any], arg_set: Any, capsys: Any) -> Any:
    """Eager `fn` and `compiled` on separate clones of `arg_set` agree on result/exception, output and inputs after."""
    call = _as_args(arg_set)
    eager_call, compiled_call = clone_inputs(call), clone_inputs(call)
    eager_out, expected, eager_error = call_capturing(fn, eager_call, capsys)
    compiled_out, actual, compiled_error = call_capturing(compiled, compiled_call, capsys)
    if eager_error is not None:
        assert compiled_error is not None, f"eager raised {eager_error!r}, compiled returned {actual!r}"
        assert type(compiled_error) is type(eager_error), f"{compiled_error!r} != {eager_error!r}"
        assert str(compiled_error) == str(eager_error)
    elif compiled_error is not None:
        raise AssertionError(f"compiled raised {compiled_error!r}, eager returned normally") from compiled_error
    else:
        assert_same(expected, actual)
    assert compiled_out == eager_out, f"printed output differs:\neager:\n{eager_out}\ncompiled:\n{compiled_out}"
    assert_same(eager_call.args, compiled_call.args, "args after the call")
    assert_same(eager_call.kwargs, compiled_call.kwargs, "kwargs after the call")
    return compiled_error if compiled_error is not None else actual


def check_breaks(
    fn: Callable[..., Any],
    *arg_sets: Any,
    counting: CountingBackend,
    capsys: Any,
    expected_graphs: int | None = None,
    **compile_options: Any,
) -> Callable[..., Any]:
    """Compile fn into `counting`, call each arg set twice against eager; the second call adds no graph."""
    compiled = jit.compile(fn, backend=counting, **compile_options)
    for arg_set in arg_sets:
        compare_printing(fn, compiled, arg_set, capsys)
        after_first = counting.graph_count
        compare_printing(fn, compiled, arg_set, capsys)
        assert counting.graph_count == after_first, (
            f"the second call with the same arguments compiled again ({after_first} -> {counting.graph_count} graphs)"
        )
    if expected_graphs is not None:
        assert counting.graph_count == expected_graphs, (
            f"expected {expected_graphs} graph(s), the backend received {counting.graph_count}"
        )
    return compiled


def line_of(fn: Callable[..., Any], marker: str) -> int:
    """The absolute line number of the first line of fn's source that contains `marker`."""
    lines, start = inspect.getsourcelines(fn)
    for offset, line in enumerate(lines):
        if marker in line:
            return start + offset
    raise AssertionError(f"{marker!r} does not occur in the source of {fn.__qualname__}")


def assert_in_graphs(counting: CountingBackend, *targets: Any) -> None:
    """Each of `targets` (torch.sin, operator.add, ...) is the target of a node in some graph the backend received.

    Proves that the tensor work around a break was captured, not run natively by a frame that fell back.
    """
    seen = {node.target for gm in counting.graphs for node in gm.graph.nodes}
    missing = [getattr(t, "__name__", repr(t)) for t in targets if t not in seen]
    assert not missing, f"not in any of the {counting.graph_count} graph(s): {', '.join(missing)}"
