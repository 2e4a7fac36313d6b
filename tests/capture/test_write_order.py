"""An op that can raise on tensor data after an in-place write jitcore cannot undo (an input that requires grad,
a write to metadata, a large input): the side effects before it and the user's `try` around it are Python's
(Note [Raising after a write that cannot be undone], capture/write_order.py). Each case is compared with eager
through `jit.compile` and `register` + `enabled()`: outcome, the log, and the input after the call."""
from __future__ import annotations

import pytest
import torch

import jitcore as jit
from jitcore.capture.write_order import SNAPSHOT_LIMIT
from tests.support import CountingBackend, assert_same, both_doors, outcome

CASES = ["requires_grad", "metadata", "large"]


def _input(case):
    if case == "large":
        return torch.ones(SNAPSHOT_LIMIT + 1, 1)
    base = torch.ones(2, 2, requires_grad=case == "requires_grad")
    return base * 1 if case == "requires_grad" else base


def _write(x, case):
    if case == "metadata":
        x.t_()
    else:
        x.mul_(2)


def _compare(f, case, idx, counting):
    """Eager, then each door, on fresh inputs and logs: the same outcome, log and input afterwards, twice."""
    def run(fn):
        runs = []
        for _ in range(2):
            x, log = _input(case), []
            runs.append((outcome(fn, x, log, idx), log, x.detach()))
        return runs

    expected = run(f)
    with both_doors(f, counting) as doors:
        for door in doors:
            for (got, log, x), (e_got, e_log, e_x) in zip(run(door), expected):
                assert got[0] == e_got[0], (got, e_got)
                if got[0] == "raised":
                    assert got[1] == e_got[1]
                else:
                    assert_same(e_got[1], got[1])
                assert log == e_log
                assert_same(e_x, x, "input after the call")


@pytest.mark.parametrize("case", CASES)
def test_side_effects_before_an_index_that_raises_after_the_write_happen(case):
    def f(x, log, idx):
        _write(x, case)
        log.append("start")
        return x[idx]

    _compare(f, case, torch.tensor([SNAPSHOT_LIMIT + 5]), CountingBackend())


@pytest.mark.parametrize("case", CASES)
def test_the_users_try_catches_an_index_that_raises_after_the_write(case):
    def f(x, log, idx):
        _write(x, case)
        try:
            return x[idx].sum()
        except IndexError:
            log.append("caught")
            return x.new_zeros(())

    _compare(f, case, torch.tensor([SNAPSHOT_LIMIT + 5]), CountingBackend())


@pytest.mark.parametrize("case", CASES)
def test_an_index_in_range_after_the_write_gives_the_same_result(case):
    def f(x, log, idx):
        _write(x, case)
        log.append("start")
        return x[idx] * 3

    _compare(f, case, torch.tensor([1]), CountingBackend())


def test_without_side_effects_or_a_handler_the_graph_stays_whole():
    """Nothing observable depends on where the op raises: no break (the exception leaves as it comes)."""
    def f(x, idx):
        x.mul_(2)
        return x[idx] + 1

    counting = CountingBackend()
    compiled = jit.compile(f, backend=counting)
    x = torch.ones(SNAPSHOT_LIMIT + 1, 1)
    assert_same(compiled(x, torch.tensor([3])), torch.full((1, 1), 3.0))
    assert counting.graph_count == 1


def test_a_view_read_first_after_its_base_was_written_through_another_view(monkeypatch):
    """`vb.copy_(t)` with t requiring grad gives the shared base autograd history; `va`, a view of the same base
    read only after that, still matches eager (a break before the read, not an internal error)."""
    layer = torch.nn.Linear(3, 3)

    def f(va, vb):
        t = layer(vb * 1)
        vb.copy_(torch.tanh(t))
        return va * 2

    def views():
        base = torch.arange(7.0)
        return base, base[1:4], base[0:3]

    base, va, vb = views()
    expected = f(va, vb), base.detach().clone()
    monkeypatch.setattr(jit.config, "strict", True)  # an internal error is raised, not hidden by a fallback
    with both_doors(f) as doors:
        for door in doors:
            base, va, vb = views()
            assert_same(expected, (door(va, vb), base.detach().clone()))


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_views_of_one_base_that_overlap_on_a_later_call_recompile(backend):
    """A graph that writes one view and reads another was compiled for how they overlapped: disjoint on the first
    call, overlapping on the second (StorageOverlapMatch), the reads see the write as in eager."""
    def f(va, vb):
        vb.copy_(torch.tanh(vb))
        return va * 1.0

    def views(overlap):
        base = torch.linspace(-2.0, 2.0, 11)
        return base, base[1:6], (base[0:5] if overlap else base[6:11])

    expected = []
    for overlap in (False, True, False):
        base, va, vb = views(overlap)
        expected.append((f(va, vb), base))
    counting = CountingBackend(backend)
    with both_doors(f, counting) as (compiled, registered):
        for door in (compiled, registered):
            for overlap, want in zip((False, True, False), expected):
                base, va, vb = views(overlap)
                assert_same(want, (door(va, vb), base))
            if door is compiled:
                assert counting.graph_count == 2  # one per overlap pattern; the third call reuses the first
