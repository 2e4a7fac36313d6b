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


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_where_unwritten_views_of_one_base_sit_changes_no_recompile(backend):
    """Only the overlaps of the written tensor are guarded: two read-only views of one base at offsets that move
    on every call (the rows of one nonzero() result, one per loop iteration) reuse the graph that writes `acc`."""
    def f(acc, va, vb):
        acc.add_(va * vb)
        return acc.sum()

    base = torch.arange(10.0)
    counting = CountingBackend(backend)
    compiled = jit.compile(f, backend=counting)
    for start in range(4):
        acc, want = torch.zeros(3), torch.zeros(3)
        expected = f(want, base[start:start + 3], base[start + 1:start + 4])
        assert_same((expected, want), (compiled(acc, base[start:start + 3], base[start + 1:start + 4]), acc))
    assert counting.graph_count == 1


def test_rows_of_one_nonzero_result_reuse_a_loop_body_that_breaks():
    """A loop over the rows of a nonzero() result whose body breaks (a branch on a tensor) and accumulates in
    place: each row sits at another offset of the same storage, which is no reason for a new entry per row."""
    def f(hit, x, acc):
        for idx in hit:
            idx = idx[0]
            if idx == 2:
                continue
            acc.index_add_(0, idx[None], x[idx][None] * 2)
        return acc

    x = torch.randn(6, 4)
    counting = CountingBackend()
    compiled = jit.compile(f, backend=counting)
    for mask in ([1, 1, 0, 1, 1, 0], [1, 1, 1, 1, 1, 1], [0, 1, 1, 1, 1, 1]):
        hit = torch.tensor(mask).nonzero()
        assert_same(f(hit, x, torch.zeros(6, 4)), compiled(hit, x, torch.zeros(6, 4)))
    after_first = counting.graph_count
    hit = torch.tensor([1, 0, 1, 1, 0, 1]).nonzero()
    assert_same(f(hit, x, torch.zeros(6, 4)), compiled(hit, x, torch.zeros(6, 4)))
    assert counting.graph_count == after_first
    assert after_first <= 6


# Note [Input writes under AOTAutograd]: an input read by an op autograd depends on, then written in place.
# Strict mode: a backend failure or an internal error raises instead of falling back to eager's own answer.


def _stack():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Tanh())


def _views():
    base = torch.arange(6.0).reshape(2, 3)
    return base[:1], base[1:]


@pytest.mark.parametrize("backend", ["aot_eager", "user callable"])
def test_an_input_read_for_autograd_then_written_in_place_compiles_with_aot(backend, monkeypatch):
    monkeypatch.setattr(jit.config, "strict", True)
    net = _stack()

    def f(v):
        t = net(v)
        v.mul_(0.5)
        return torch.relu(t)

    counting = CountingBackend("aot_eager")
    chosen = counting if backend == "user callable" else "aot_eager"
    expected_v = _views()[1]
    expected = f(expected_v)
    with both_doors(f, chosen) as doors:
        for door in doors:
            _, v = _views()
            got = door(v)
            assert_same(expected, got)
            assert_same(expected_v, v, "input after the call")
            assert got.requires_grad and got.grad_fn is not None


def test_a_view_read_then_another_view_written_with_grad_data_keeps_requires_grad(monkeypatch):
    monkeypatch.setattr(jit.config, "strict", True)
    net = _stack()

    def f(va, vb, y):
        t4 = torch.maximum(y, va).sigmoid()
        vb.copy_(net(y))
        return t4 * 2, vb

    y = torch.ones(1, 3)
    ea, eb = _views()
    expected = f(ea, eb, y)
    with both_doors(f, "aot_eager") as doors:
        for door in doors:
            va, vb = _views()
            got = door(va, vb, y)
            assert_same(expected, got)
            assert got[0].requires_grad is expected[0].requires_grad is False
            assert got[1].requires_grad is expected[1].requires_grad is True


def test_a_write_with_dynamic_numbers_in_the_graph_is_guarded_on_storage_overlap(monkeypatch):
    monkeypatch.setattr(jit.config, "strict", True)
    class Knob:
        gain = 0.5

    knob = Knob()

    def f(x, va):
        t = va * knob.gain
        t.neg_()
        va.add_(x * knob.gain)
        return t

    with both_doors(f) as doors:
        for door in doors:
            for gain in (0.5, -1.0, 2.0):
                knob.gain = gain
                base, ebase = torch.arange(8.0), torch.arange(8.0)
                expected = f(torch.ones(4), ebase[:4])
                got = door(torch.ones(4), base[:4])
                assert_same(expected, got)
                assert_same(ebase, base, "input after the call")


def test_writing_a_tensor_computed_from_an_input_writes_no_input():
    """`h = x @ w; h /= 2` writes a new tensor, not `w`: an index after it (with a side effect pending) stays in
    the graph even though `w` requires grad (Hugging Face Mixtral and Qwen2-MoE routing: 0 graphs before)."""
    def f(x, w, idx, log):
        h = x @ w
        h /= 2
        log.append(len(log))
        return h[idx]

    w = torch.randn(3, 3, requires_grad=True)
    counting = CountingBackend()
    with both_doors(f, counting) as doors:
        for door in doors:
            for idx in (torch.tensor([0, 1]), torch.tensor([1])):
                log, expected_log = [], []
                x = torch.randn(2, 3)
                assert_same(f(x, w, idx, expected_log), door(x, w, idx, log))
                assert log == expected_log
    report = jit.explain(f, torch.randn(2, 3), w, torch.tensor([0]), [])
    assert report.graph_break_count == 0, str(report)


def test_a_tensor_made_in_the_graph_saved_for_backward_then_written_compiles_with_aot(monkeypatch):
    monkeypatch.setattr(jit.config, "strict", True)
    net = _stack()

    def f(v):
        t = v * 1.0
        h = net(t)
        t.copy_(torch.tanh(h))
        return h / 2.0, t

    expected = f(torch.ones(1, 3))
    with both_doors(f, "aot_eager") as doors:
        for door in doors:
            got = door(torch.ones(1, 3))
            assert_same(expected, got)
            assert [g.requires_grad for g in got] == [e.requires_grad for e in expected]


def test_a_write_after_a_read_autograd_does_not_save_stays_one_graph(monkeypatch):
    monkeypatch.setattr(jit.config, "strict", True)
    net = torch.nn.Linear(3, 3)

    def f(x):
        y = net(x)
        return y.mul_(y.sigmoid())  # sigmoid saves its result, not y

    counting = CountingBackend("aot_eager")
    x = torch.randn(2, 3)
    expected = f(x)
    with both_doors(f, counting) as doors:
        for door in doors:
            assert_same(expected, door(x))
    assert counting.graph_count == 2  # one graph through each door: no break before the write


def test_item_writes_of_grad_data_one_after_another_into_an_input_stay_one_graph(monkeypatch):
    """`out[rows] = expert(x[rows])` once per expert into a zero tensor the frame got (the resume function of a
    MoE after its `.tolist()` break): an earlier item write is no read autograd keeps, so AOTAutograd compiles the
    later ones in the same graph, with eager's results and gradients."""
    monkeypatch.setattr(jit.config, "strict", True)
    experts = torch.nn.ModuleList(torch.nn.Linear(4, 4) for _ in range(3))

    def f(out, x, groups):
        for expert, rows in zip(experts, groups):
            out[rows] = expert(x[rows]) * 2
        return out.sum(dim=1)

    x = torch.randn(6, 4)
    groups = (torch.tensor([0, 3]), torch.tensor([1, 2, 5]), torch.tensor([4]))
    expected_out = torch.zeros(6, 4)
    expected = f(expected_out, x, groups)
    expected.sum().backward()
    want = [p.grad.clone() for p in experts.parameters()]
    counting = CountingBackend("aot_eager")
    with both_doors(f, counting) as doors:
        for door in doors:
            experts.zero_grad(set_to_none=True)
            out = torch.zeros(6, 4)
            got = door(out, x, groups)
            assert_same(expected, got)
            assert_same(expected_out, out, "input after the call")
            got.sum().backward()
            assert_same(want, [p.grad for p in experts.parameters()], "gradients")
    assert counting.graph_count == 2  # one graph through each door: no break before the later writes
