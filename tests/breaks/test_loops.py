"""Graph breaks inside `for` and `while` bodies: the break happens at the loop body, not the whole function.

A loop of 10 iterations with a break in its body must compile a small bounded number of distinct graphs (not one
per iteration), a second call adds no graph, and the body's tensor work keeps running inside graphs on every
iteration (the break may not turn the rest of the frame into plain Python). `_GraphRuns` proves the last point: it
counts how many times a marker op (torch.sigmoid) ran inside a compiled graph.
"""

import pytest
import torch

import jitcore as jit
from tests.breaks.helpers import check_breaks
from tests.support import CountingBackend, randn


@pytest.fixture(autouse=True)
def _loops_resume(monkeypatch):
    """These tests check loops resumed in graphs (`config.loop_breaks = "resume"`); the default, which runs a
    frame with a break inside a loop natively, is tested in tests/breaks/test_breaks_inside_loops.py."""
    monkeypatch.setattr(jit.config, "loop_breaks", "resume")


def _gen(xs):
    for t in xs:
        yield t * 2


class _GraphRuns:
    """An inner backend: runs each graph and counts the executions of `marker` nodes inside graphs."""

    def __init__(self, marker=torch.sigmoid) -> None:
        self.marker = marker
        self.runs = 0

    def __call__(self, gm, example_inputs):
        per_run = sum(1 for node in gm.graph.nodes if node.target is self.marker)

        def run(*args):
            self.runs += per_run
            return gm.forward(*args)

        return run


def _assert_bounded(counting: CountingBackend, limit: int = 4) -> None:
    assert 1 <= counting.graph_count <= limit, f"{counting.graph_count} graphs for one loop"


def _check_loop(f, x, counting, capsys, *, marker_runs, limit=4):
    """Compare f with eager on x twice; bounded graphs; `marker_runs` sigmoids ran in graphs on each call."""
    runs = _GraphRuns()
    counting.inner = runs
    compiled = check_breaks(f, (x,), counting=counting, capsys=capsys)
    _assert_bounded(counting, limit)
    assert runs.runs == 2 * marker_runs, f"{runs.runs} of {2 * marker_runs} sigmoids ran inside graphs"
    return compiled


def test_print_in_for_range_body_compiles_bounded_graphs(counting, capsys):
    def f(x):
        y = x * 2
        for i in range(10):
            y = y + i
            print(i)
        return y

    check_breaks(f, (randn(3, seed=1),), counting=counting, capsys=capsys)
    _assert_bounded(counting)


def test_print_in_for_range_body_runs_body_ops_in_graphs_every_iteration(counting, capsys):
    def f(x):
        for i in range(10):
            x = torch.sigmoid(x) + i
            print(i)
        return x

    _check_loop(f, randn(3, seed=1), counting, capsys, marker_runs=10)


def test_print_in_for_range_body_second_input_adds_no_graph(counting, capsys):
    def f(x):
        y = x.sin()
        for i in range(10):
            print("step", i)
            y = y * 0.5
        return y

    check_breaks(f, (randn(3, seed=1),), (randn(3, seed=2),), counting=counting, capsys=capsys)
    _assert_bounded(counting)


def test_print_in_while_body_runs_body_ops_in_graphs_every_iteration(counting, capsys):
    def f(x):
        i = 0
        while i < 10:
            x = torch.sigmoid(x)
            print(i)
            i += 1
        return x

    _check_loop(f, randn(2, seed=1), counting, capsys, marker_runs=10)


def test_item_in_for_body_runs_body_ops_in_graphs_every_iteration(counting, capsys):
    def f(x):
        total = 0.0
        for _ in range(10):
            x = torch.sigmoid(x) * 1.1
            total += x.sum().item()
        return x, total

    # 5: the first resume continues the loop in its graph up to the next break; the second call of that resume
    # meets the iterator at another position, and from then on the loop's iterator stays in Python
    _check_loop(f, torch.ones(3), counting, capsys, marker_runs=10, limit=5)


def test_tensor_branch_in_for_body_runs_body_ops_in_graphs_every_iteration(counting, capsys):
    def f(x):
        for _ in range(10):
            x = torch.sigmoid(x) * 4
            if x.sum() > 5:
                x = x - 1
            else:
                x = x + 2
        return x

    _check_loop(f, torch.full((2,), 3.0), counting, capsys, marker_runs=10, limit=6)


def test_print_in_loop_over_list_of_tensors_runs_body_ops_in_graphs(counting, capsys):
    def f(xs):
        acc = torch.zeros(2)
        for t in xs:
            acc = torch.sigmoid(acc + t)
            print(acc.shape)
        return acc

    _check_loop(f, [randn(2, seed=s) for s in range(10)], counting, capsys, marker_runs=10)


def test_print_in_nested_loop_inner_body_runs_body_ops_in_graphs(counting, capsys):
    def f(x):
        for i in range(3):
            for j in range(4):
                x = torch.sigmoid(x) + i * j
                print(i, j)
        return x

    # two changing ints (i, j): each becomes a graph input after the recompile that shows it changing
    _check_loop(f, randn(2, seed=1), counting, capsys, marker_runs=12, limit=8)


def test_print_in_loop_with_break_statement_matches_eager(counting, capsys):
    def f(x):
        for i in range(10):
            x = x + i
            print(i)
            if i == 5:
                break
        return x

    check_breaks(f, (randn(2, seed=1),), counting=counting, capsys=capsys)
    _assert_bounded(counting)


def test_print_in_loop_with_continue_matches_eager(counting, capsys):
    def f(x):
        for i in range(10):
            if i % 2:
                continue
            print(i)
            x = x * 2
        return x

    check_breaks(f, (randn(2, seed=1),), counting=counting, capsys=capsys)
    _assert_bounded(counting)


def test_for_over_enumerate_with_print_matches_eager(counting, capsys):
    def f(xs):
        out = []
        for i, t in enumerate(xs):
            print(i)
            out.append(t * i)
        return out

    check_breaks(f, ([randn(2, seed=s) for s in range(10)],), counting=counting, capsys=capsys)
    _assert_bounded(counting)


def test_for_over_generator_iterator_runs_body_ops_in_graphs(counting, capsys):
    def f(xs):
        acc = xs[0] * 0
        for t in _gen(xs):
            acc = torch.sigmoid(acc + t)
        return acc

    _check_loop(f, [randn(3, seed=s) for s in range(10)], counting, capsys, marker_runs=10)


def test_print_in_loop_runs_exactly_once_per_iteration(counting, capsys):
    calls = []

    def noisy(i):
        calls.append(i)
        print("iteration", i)

    def f(x):
        for i in range(10):
            x = x + 1
            noisy(i)
        return x

    compiled = jit.compile(f, backend=counting)
    x = randn(2, seed=1)
    for _ in range(2):
        torch.testing.assert_close(compiled(x), x + 10)
    assert calls == list(range(10)) * 2
    assert capsys.readouterr().out == "".join(f"iteration {i}\n" for i in range(10)) * 2
    _assert_bounded(counting)


def test_tensor_work_after_loop_with_print_is_compiled(counting, capsys):
    def f(x):
        for i in range(10):
            print(i)
        return torch.sigmoid(x) + 1

    _check_loop(f, randn(3, seed=1), counting, capsys, marker_runs=1)
