"""`fullgraph=True`: the first graph break raises `jit.GraphBreakError` naming the reason and the user's code.

The error carries `.kind`, `.filename` (this file), `.lineno` (the line of the breaking statement, found with
`inspect` through `line_of`) and `.source_line`; its message names `file:line`. Nothing graph-breaking runs: a print
before the error would be visible output.
"""

import os

import pytest
import torch

import jitcore as jit
from tests.breaks.helpers import line_of
from tests.support import randn


def _helper_that_prints(t):
    u = t * 2
    print("helper")  # breaks here
    return u


def _raise_break(fn, *args):
    compiled = jit.compile(fn, backend="eager", fullgraph=True)
    with pytest.raises(jit.GraphBreakError) as info:
        compiled(*args)
    return info.value


def _assert_location(error, fn, marker):
    assert os.path.basename(error.filename) == "test_fullgraph.py"
    assert error.lineno == line_of(fn, marker)
    assert error.source_line.strip() == marker
    assert f"test_fullgraph.py:{error.lineno}" in str(error)


def test_fullgraph_print_raises_graph_break_error_at_print_line():
    def f(x):
        y = x + 1
        print("inside")
        return y

    error = _raise_break(f, randn(3, seed=1))
    _assert_location(error, f, 'print("inside")')


def test_fullgraph_break_raises_before_the_backend_compiles_the_graph_before_it():
    compiled_graphs = []

    def backend(gm, example_inputs):
        compiled_graphs.append(gm)
        return gm.forward

    def f(x):
        y = x + 1
        print("inside")
        return y

    with pytest.raises(jit.GraphBreakError):
        jit.compile(f, backend=backend, fullgraph=True)(randn(3, seed=1))
    assert compiled_graphs == []


def test_fullgraph_print_error_names_the_reason():
    def f(x):
        y = x + 1
        print("inside")
        return y

    error = _raise_break(f, randn(3, seed=1))
    assert error.kind
    assert "print" in str(error)


def test_fullgraph_item_raises_graph_break_error_at_item_line():
    def f(x):
        y = x * 2
        v = y.sum().item()
        return y * v

    error = _raise_break(f, randn(3, seed=1))
    _assert_location(error, f, "v = y.sum().item()")
    assert "item" in str(error)


def test_fullgraph_tensor_branch_raises_graph_break_error_at_if_line():
    def f(x):
        y = x - 1
        if y.sum() > 0:
            return y
        return -y

    error = _raise_break(f, randn(3, seed=1))
    _assert_location(error, f, "if y.sum() > 0:")


def test_fullgraph_kinds_differ_for_print_item_and_branch():
    def printing(x):
        print("p")
        return x

    def item(x):
        return x.sum().item()

    def branch(x):
        if x.sum() > 0:
            return x
        return -x

    kinds = {_raise_break(fn, randn(2, seed=1)).kind for fn in (printing, item, branch)}
    assert len(kinds) == 3 and all(isinstance(kind, str) and kind for kind in kinds)


def test_fullgraph_reports_the_first_of_two_breaks():
    def f(x):
        y = x + 1
        v = y.max().item()
        print("second break")
        return y * v

    error = _raise_break(f, randn(3, seed=1))
    _assert_location(error, f, "v = y.max().item()")


def test_fullgraph_break_inside_inlined_helper_names_the_helper_line():
    def f(x):
        return _helper_that_prints(x) + 1

    error = _raise_break(f, randn(3, seed=1))
    _assert_location(error, _helper_that_prints, 'print("helper")  # breaks here')


def test_fullgraph_break_inside_loop_names_the_body_line():
    def f(x):
        for i in range(3):
            x = x + i
            print("iteration")
        return x

    error = _raise_break(f, randn(3, seed=1))
    _assert_location(error, f, 'print("iteration")')


def test_fullgraph_break_inside_no_grad_names_the_line():
    def f(x):
        with torch.no_grad():
            y = x * 2
            s = y.sum().item()
        return y + s

    error = _raise_break(f, randn(3, seed=1))
    _assert_location(error, f, "s = y.sum().item()")


def test_fullgraph_graph_break_error_is_a_jit_error_and_prints_nothing(capsys):
    def f(x):
        print("must not run")
        return x

    error = _raise_break(f, randn(3, seed=1))
    assert isinstance(error, jit.JitError)
    assert "must not run" not in capsys.readouterr().out


def test_fullgraph_error_raised_again_on_second_call():
    def f(x):
        y = x + 1
        print("inside")
        return y

    compiled = jit.compile(f, backend="eager", fullgraph=True)
    for _ in range(2):
        with pytest.raises(jit.GraphBreakError):
            compiled(randn(3, seed=1))


def test_fullgraph_without_break_matches_eager_with_one_graph(counting):
    def f(x):
        return torch.relu(x) * 2

    x = randn(4, seed=1)
    torch.testing.assert_close(jit.compile(f, backend=counting, fullgraph=True)(x), f(x))
    assert counting.graph_count == 1
