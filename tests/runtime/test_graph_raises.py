"""Runtime: a compiled graph that raises (an out-of-range tensor index) behaves as Python.

Python side effects of the frame are replayed after its graph, so when the graph raises nothing of them has
happened: the entry abandons the graph and the frame runs natively from its start (Note [A graph that raises],
codegen/transform.py). Then the side effects before the error happen, the user's own `try` around the raising
operation catches it, and a break's resume function does the same for its part of the frame. A graph that drew
random numbers leaves the generators as it found them; a graph that mutates an input in place is never run twice.
Each behaviour is compared with eager through `jit.compile` and through `register` + `enabled()`.
"""
from __future__ import annotations

import gc

import pytest
import torch
import torch.nn.functional as F

import jitcore as jit
from jitcore.codegen.transform import SNAPSHOT_LIMIT, graph_is_pure, graph_uses_rng, mutated_inputs
from jitcore.runtime.pipeline import GRAPH_RAISE_LIMIT
from tests.breaks.helpers import compare_printing
from tests.support import CountingBackend, assert_same, both_doors, outcome


def _both_ways(make, *args, backend=None):
    """(eager outcome and side effects, compiled outcome and side effects, register+enabled ones): `make()`
    returns a fresh (function, log) pair, so each way has its own function and its own log."""
    backend = backend or CountingBackend()
    fn, log = make()
    eager = (outcome(fn, *args), list(log))
    runs = []
    for door in range(2):
        fn, log = make()
        with both_doors(fn, backend) as doors:
            runs.append([(outcome(doors[door], *args), list(log)) for _ in range(2)])
    return eager, *runs


def _assert_like_eager(eager, compiled, registered):
    (outcome, log) = eager
    for got in (compiled, registered):
        first, second = got
        assert first[0][0] == outcome[0] and second[0][0] == outcome[0], (got, eager)
        if outcome[0] == "raised":
            assert first[0][1] == outcome[1] and second[0][1] == outcome[1]
        else:
            assert_same(outcome[1], first[0][1])
            assert_same(outcome[1], second[0][1])
        assert first[1] == log and second[1] == log * 2, (got, eager)


def _appends_then_indexes():
    log = []

    def f(x, idx):
        log.append("start")
        return x[idx] * 2

    return f, log


def test_side_effects_before_a_raising_graph_op_happen():
    eager, compiled, registered = _both_ways(_appends_then_indexes, torch.arange(3.0), torch.tensor([5]))
    assert eager[0][0] == "raised" and eager[0][1][0] is IndexError
    _assert_like_eager(eager, compiled, registered)


def test_same_entry_still_computes_when_the_index_is_in_range(counting):
    f, log = _appends_then_indexes()
    compiled = jit.compile(f, backend=counting)
    x = torch.arange(3.0)
    with pytest.raises(IndexError):
        compiled(x, torch.tensor([5]))
    assert_same(compiled(x, torch.tensor([1])), x[torch.tensor([1])] * 2)
    assert log == ["start", "start"] and counting.graph_count == 1


def _catches_the_graph_error():
    log = []

    def f(x, i):
        log.append(int(i.numel()))
        try:
            return x[i] + 1
        except IndexError:
            log.append("caught")
            return x.new_zeros(())

    return f, log


def test_user_try_catches_an_error_raised_by_a_graph_op():
    eager, compiled, registered = _both_ways(_catches_the_graph_error, torch.arange(3.0), torch.tensor(7))
    assert eager[0][0] == "returned" and eager[1] == [1, "caught"]
    _assert_like_eager(eager, compiled, registered)


def test_user_try_around_a_graph_op_that_does_not_raise_is_one_graph(counting):
    eager, compiled, registered = _both_ways(_catches_the_graph_error, torch.arange(3.0), torch.tensor(1),
                                             backend=counting)
    _assert_like_eager(eager, compiled, registered)
    assert counting.graph_count == 2  # one per way (the compiled copy, the registered function)


def test_side_effects_and_print_before_a_break_then_a_raising_graph(counting, capsys):
    lst = []

    def f(x):
        print("before")
        lst.append(2)
        return x[torch.tensor([7])]

    compiled = jit.compile(f, backend=counting)
    for _ in range(2):
        expected_len = len(lst)
        compare_printing(f, compiled, (torch.arange(3.0),), capsys)
        assert len(lst) == expected_len + 2  # one append by eager, one by the compiled call


def test_resume_function_whose_graph_raises_runs_its_part_natively(counting, capsys):
    log = []

    def f(x, i):
        y = x * 2
        print("at the break")
        log.append("after the break")
        try:
            return y[i]
        except IndexError as exc:
            log.append(type(exc).__name__)
            return y.sum()

    compiled = jit.compile(f, backend=counting)
    for i in (torch.tensor(9), torch.tensor(1), torch.tensor(9)):
        log.clear()
        compare_printing(f, compiled, (torch.arange(3.0), i), capsys)
        half = len(log) // 2  # eager's entries, then the compiled call's
        assert log[:half] == log[half:] and log[0] == "after the break"
    assert counting.graph_count == 2


def test_break_inside_the_try_then_a_raising_graph_is_caught_by_the_users_handler(counting, capsys):
    log = []

    def f(x, i):
        log.append("start")
        y = x + 1
        try:
            print("inside the try")
            log.append("after the break")
            return y[i]
        except IndexError:
            log.append("caught")
            return y.sum()

    compiled = jit.compile(f, backend=counting)
    for i in (torch.tensor(9), torch.tensor(1), torch.tensor(9)):
        log.clear()
        compare_printing(f, compiled, (torch.arange(3.0), i), capsys)
        half = len(log) // 2
        assert log[:half] == log[half:]
    assert log[-1] == "caught"


def test_graph_that_drew_random_numbers_leaves_the_generator_as_it_found_it(counting):
    def f(x, idx):
        noise = torch.randn(3)
        try:
            return (x + noise)[idx]
        except IndexError:
            return torch.rand(2)

    def run(fn):
        torch.manual_seed(3)
        out = [fn(torch.arange(3.0), torch.tensor([4])) for _ in range(2)]
        return out, torch.randn(2)

    compiled = jit.compile(f, backend=counting)
    assert_same(run(f), run(compiled))
    assert graph_uses_rng(counting.graphs[0])


def _mutates_then_indexes():
    log = []

    def f(x, idx):
        log.append("start")
        x.add_(1)
        x[0] = x[0] * 3
        try:
            return x[idx]
        except IndexError:
            log.append("caught")
            return x.sum()

    return f, log


@pytest.mark.parametrize("idx", [torch.tensor([5]), torch.tensor([1])])
def test_graph_that_mutates_an_input_then_raises_puts_the_input_back_and_runs_natively(idx):
    def check(fn, log, x):
        results = [fn(x, idx) for _ in range(2)]
        return results, x, list(log)

    f, log = _mutates_then_indexes()
    expected = check(f, log, torch.zeros(3))
    f, log = _mutates_then_indexes()
    assert_same(expected, check(jit.compile(f, backend=CountingBackend()), log, torch.zeros(3)))
    f, log = _mutates_then_indexes()
    jit.register(f)
    try:
        with jit.enabled(backend=CountingBackend()):
            assert_same(expected, check(f, log, torch.zeros(3)))
    finally:
        jit.unregister(f)


def test_running_statistics_are_updated_once_when_the_graph_raises(counting):
    def make():
        torch.manual_seed(0)
        bn = torch.nn.BatchNorm1d(3)
        log = []

        def f(x, i):
            y = bn(x)
            log.append("normalised")
            try:
                return y[i]
            except IndexError:
                return y.sum()

        return f, bn, log

    x = torch.randn(4, 3)
    f, bn, log = make()
    expected = [f(x, torch.tensor(9)) for _ in range(2)], bn.running_mean, bn.num_batches_tracked, log
    f, bn, log = make()
    compiled = jit.compile(f, backend=counting)
    assert_same(expected, ([compiled(x, torch.tensor(9)) for _ in range(2)], bn.running_mean,
                           bn.num_batches_tracked, log))


@pytest.mark.parametrize("case", ["requires_grad", "metadata", "large"])
def test_graph_whose_input_changes_cannot_be_put_back_raises_as_it_comes(counting, case):
    def f(x, idx):
        if case == "metadata":
            x.t_()
        else:
            x.mul_(2)
        return x[idx]

    def make_input():
        if case == "large":
            return torch.ones(SNAPSHOT_LIMIT + 1, 1)
        base = torch.ones(2, 2, requires_grad=case == "requires_grad")
        return base * 1 if case == "requires_grad" else base

    compiled = jit.compile(f, backend=counting)
    x_eager, x_compiled = make_input(), make_input()
    idx = torch.tensor([SNAPSHOT_LIMIT + 5])
    with pytest.raises(IndexError) as eager_error:
        f(x_eager, idx)
    with pytest.raises(IndexError) as compiled_error:
        compiled(x_compiled, idx)
    assert str(eager_error.value) == str(compiled_error.value)
    assert_same(x_eager.detach(), x_compiled.detach())  # mutated once, not twice


def test_an_entry_whose_graph_keeps_raising_runs_natively_after_the_limit():
    runs = []

    def backend(gm, example_inputs):
        def run(*inputs):
            runs.append(1)
            return gm.forward(*inputs)
        return run

    f, log = _appends_then_indexes()
    compiled = jit.compile(f, backend=backend)
    x = torch.arange(3.0)
    for _ in range(GRAPH_RAISE_LIMIT + 3):
        with pytest.raises(IndexError):
            compiled(x, torch.tensor([5]))
    assert len(runs) == GRAPH_RAISE_LIMIT and len(log) == GRAPH_RAISE_LIMIT + 3
    assert_same(compiled(x, torch.tensor([2])), x[torch.tensor([2])] * 2)


def test_program_error_on_a_backends_first_run_takes_the_native_path():
    runs = []

    def backend(gm, example_inputs):
        def run(*inputs):
            runs.append(1)
            return gm.forward(*inputs)
        return run

    eager, compiled, registered = _both_ways(_catches_the_graph_error, torch.arange(3.0), torch.tensor(7),
                                             backend=backend)
    _assert_like_eager(eager, compiled, registered)
    assert runs, "the backend's graph ran (and raised) first"


def test_graph_is_pure_sees_every_way_of_writing_in_place():
    def graph_of(fn):
        counting = CountingBackend()
        jit.compile(fn, backend=counting)(torch.ones(3))
        return counting.graphs[0]

    assert graph_is_pure(graph_of(lambda x: x[torch.tensor([0])] + x.relu()))
    assert not graph_is_pure(graph_of(lambda x: x.mul_(2) + 1))
    assert not graph_is_pure(graph_of(lambda x: F.relu(x, inplace=True) + 1))
    assert not graph_is_pure(graph_of(lambda x: F.relu(x, True) + 1))
    assert not graph_is_pure(graph_of(lambda x: torch.add(x, 1, out=x) + 1))

    def sets_an_item(x):
        x[0] = 5.0
        return x + 1

    assert not graph_is_pure(graph_of(sets_an_item))
    stats = torch.zeros(3), torch.ones(3)
    assert not graph_is_pure(graph_of(lambda x: F.batch_norm(x.expand(2, 3), *stats, training=True)))
    assert graph_is_pure(graph_of(lambda x: F.batch_norm(x.expand(2, 3), *stats)))
    weight = torch.randn(5, 3)
    assert not graph_is_pure(graph_of(lambda x: F.embedding(x.long(), weight, max_norm=1.0)))
    assert graph_is_pure(graph_of(lambda x: F.embedding(x.long(), weight)))
    assert not graph_uses_rng(graph_of(lambda x: x * 2))
    assert graph_uses_rng(graph_of(lambda x: F.dropout(x, 0.5) + torch.rand_like(x)))
    # a dropout outside training returns its input: it draws nothing (eval-mode transformers call it per layer)
    assert not graph_uses_rng(graph_of(lambda x: F.dropout(x, 0.1, False) + F.dropout(x, 0.2, training=False)))
    assert not graph_uses_rng(graph_of(lambda x: torch.dropout(x, 0.1, False) * 2))
    assert graph_uses_rng(graph_of(lambda x: F.dropout(x, 0.1, True) * 2))
    assert graph_uses_rng(graph_of(lambda x: F.dropout(x, 0.1, False) + F.dropout(x, 0.1, training=True)))
    assert graph_uses_rng(graph_of(lambda x: F.dropout1d(x.view(1, 1, 3), 0.1)))
    # attention's own dropout draws by its dropout_p, whatever the op's name says
    q = torch.randn(1, 2, 4, 8)
    assert graph_uses_rng(graph_of(lambda x: F.scaled_dot_product_attention(q, q, q, dropout_p=0.1) + x.sum()))
    assert graph_uses_rng(graph_of(lambda x: F.scaled_dot_product_attention(q, q, q, None, 0.3) + x.sum()))
    assert not graph_uses_rng(graph_of(lambda x: F.scaled_dot_product_attention(q, q, q, dropout_p=0.0) + x.sum()))
    assert not graph_uses_rng(graph_of(lambda x: F.scaled_dot_product_attention(q, q, q) + x.sum()))
    assert mutated_inputs(graph_of(lambda x: x[torch.tensor([0])] + 1)) == []
    assert mutated_inputs(graph_of(lambda x: (x * 2).mul_(2) + 1)) == [0]
    assert mutated_inputs(graph_of(lambda x: x.t_() + 1)) is None


def test_grad_mode_region_left_by_a_graph_error_is_closed_as_python_does(counting):
    def caught(x, i):
        try:
            with torch.no_grad():
                y = x[i] * 2
            return y
        except IndexError:
            return (x * 2).sum()

    def escapes(x, i):
        with torch.no_grad():
            return x[i] * 2

    x = torch.ones(3, requires_grad=True)
    compiled = jit.compile(caught, backend=counting)
    for _ in range(2):
        expected, actual = caught(x, torch.tensor(7)), compiled(x, torch.tensor(7))
        assert_same(expected.detach(), actual.detach())
        assert actual.requires_grad == expected.requires_grad and torch.is_grad_enabled()
    compiled = jit.compile(escapes, backend=counting)
    for _ in range(2):
        with pytest.raises(IndexError):
            compiled(x, torch.tensor(7))
        assert torch.is_grad_enabled()


@pytest.mark.parametrize("frozen", [False, True])
def test_an_entry_takes_no_snapshot_where_a_pinned_parameter_it_may_write_requires_grad(counting, frozen):
    # Note [A pinned input that requires grad]: in-place ReLUs make every input possibly written; the parameters'
    # requires_grad is guarded by the module-state batch, so a snapshot that could never be put back is not taken
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU(inplace=True), torch.nn.Linear(3, 3),
                                torch.nn.ReLU(inplace=True))
    model.requires_grad_(not frozen)

    def f(x, idx):
        return model(x)[idx]

    compiled = jit.compile(f, backend=counting)
    x = torch.randn(4, 3)
    with torch.no_grad():
        assert_same(compiled(x, torch.tensor([1])), f(x, torch.tensor([1])))
        source = compiled._jitcore_cache.entries[0].run.source
        assert ("___InputSnapshot" in source) == frozen
        with pytest.raises(IndexError) as eager_error:
            f(x, torch.tensor([9]))
        with pytest.raises(IndexError) as compiled_error:
            compiled(x, torch.tensor([9]))
    assert str(eager_error.value) == str(compiled_error.value)
    model[0].weight.requires_grad_(frozen)  # the batch fails: a new entry, whose snapshot follows the flag
    with torch.no_grad():
        assert_same(compiled(x, torch.tensor([2])), f(x, torch.tensor([2])))
    entries = compiled._jitcore_cache.entries
    assert len(entries) == 2 and "___InputSnapshot" not in entries[1].run.source  # a parameter requires grad
    # let the model go, so that its module-state batches (one of which now fails) are released with it
    del entries, compiled, f, model, eager_error, compiled_error
    gc.collect()
