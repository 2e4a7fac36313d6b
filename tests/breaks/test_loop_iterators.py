"""A loop interrupted by a graph break goes on in the resume function's graph: the loop's iterator (over a tuple,
a range, a string, a reversed tuple, zip / enumerate of those, a list, a module container) is handed over as a real
object, its remaining items (or a list's position) are read and guarded, and the rest of the loop is traced; the
real iterator is advanced after the graph, so a second reference to it sees Python's position. A loop that breaks
on every iteration falls back to one item per resume (bounded entries)."""

import pytest
import torch

import jitcore as jit
from tests.breaks.helpers import check_breaks
from tests.support import CountingBackend, check_registered_against_eager, randn


@pytest.fixture(autouse=True)
def _loops_resume(monkeypatch):
    """These tests check loops resumed in graphs (`config.loop_breaks = "resume"`); the default, which runs a
    frame with a break inside a loop natively, is tested in tests/breaks/test_breaks_inside_loops.py."""
    monkeypatch.setattr(jit.config, "loop_breaks", "resume")


class _Branch(torch.nn.Module):
    """A layer with a data-dependent branch: a graph break inside it."""

    def forward(self, x):
        if x.sum() > 0:
            return x + 1
        return x - 1


def _breaks_only_in_branch(fn, *args):
    reasons = [b.reason for b in jit.explain(fn, *args).breaks]
    assert reasons and all("advancing" not in r and "iterat" not in r for r in reasons), reasons


def _layers():
    torch.manual_seed(0)
    return [torch.nn.Linear(4, 4), _Branch(), torch.nn.ReLU(), torch.nn.Linear(4, 4), torch.nn.Tanh(),
            torch.nn.Linear(4, 4)]


def test_sequential_continues_after_a_break_in_one_layer(counting, capsys):
    seq = torch.nn.Sequential(*_layers())
    check_breaks(seq, (randn(2, 4, seed=1),), counting=counting, capsys=capsys)
    # linear | the branch's condition | its arm | everything after the branching layer, in one graph
    assert counting.graph_count == 4
    assert [n.target for n in counting.graphs[-1].graph.nodes if n.op == "call_function"].count(torch.tanh) == 1
    _breaks_only_in_branch(seq, randn(2, 4))
    check_registered_against_eager(seq, (randn(2, 4, seed=3),))


class _Containers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList(_layers())
        self.named = torch.nn.ModuleDict({str(i): layer for i, layer in enumerate(_layers())})

    def forward(self, x, which: int):
        if which == 0:
            for layer in self.layers:
                x = layer(x)
        elif which == 1:
            for key in self.named:
                x = self.named[key](x)
        elif which == 2:
            for _, layer in self.named.items():
                x = layer(x)
        elif which == 3:
            for layer in self.named.values():
                x = layer(x)
        else:
            for i, layer in enumerate(self.layers):
                x = layer(x) * (i + 1)
        return x


def test_module_containers_continue_after_a_break(capsys):
    model = _Containers()
    for which in range(5):
        counting = CountingBackend()
        check_breaks(model.forward, (randn(2, 4, seed=1), which), counting=counting, capsys=capsys)
        assert counting.graph_count == 4, (which, counting.graph_count)
        _breaks_only_in_branch(model.forward, randn(2, 4), which)


def over_tuple(x):
    for w in (1.0, 2.0, 3.0, 4.0):
        x = x * w
        if x.sum() > 100:
            x = x / 10
    return x


def over_zip_enumerate(x, ys):
    for i, (a, b) in enumerate(zip(ys, reversed(ys))):
        x = x + a * i - b
        if x.sum() > 0:
            x = x * 0.5
    return x


def over_string(x):
    for ch in "abc":
        x = x + ord(ch)
        if x.sum() > 0:
            x = x - 1
    return x


def over_list_growing(x, lst):
    for a in lst:
        if x.sum() > 0:
            x = x - a
        if len(lst) < 6:
            lst.append(a + 1)
    return x, lst


def shared_iterator(x, lst):
    it = iter(lst)
    for a in it:
        x = x + a
        if x.sum() > 0 and a > 1:
            break
    return x, list(it)


def exhausted_then_appended(x, lst):
    it = iter(lst)
    for a in it:
        if x.sum() > 0:
            x = x + a
    lst.append(10)
    return x, list(it)


def test_loops_over_builtin_iterators_match_eager(counting, capsys):
    for fn, args in [(over_tuple, (randn(3, seed=1),)), (over_zip_enumerate, (randn(3, seed=1), (1.0, 2.0, 3.0))),
                     (over_string, (randn(3, seed=2),)), (over_list_growing, (randn(3, seed=1).abs(), [1, 2])),
                     (shared_iterator, (randn(3, seed=1).abs(), [1, 2, 3, 4])),
                     (exhausted_then_appended, (randn(3, seed=1).abs(), [1, 2]))]:
        counting.clear()
        check_breaks(fn, args, counting=counting, capsys=capsys)
        check_registered_against_eager(fn, args)


def test_loop_breaking_every_iteration_keeps_entries_bounded(counting, capsys):
    def f(x):
        for i in range(12):
            x = torch.sigmoid(x) + i
            print(i)
        return x

    check_breaks(f, (randn(3, seed=1),), (randn(3, seed=2),), counting=counting, capsys=capsys)
    assert counting.graph_count <= 5
