"""A loop whose body breaks goes on in the resume function's graph whatever its iterator: zip, enumerate, map,
reversed, dict views, ranges, lists and tuples, nested (Note [Iterators carried across a break],
capture/values/iterator_input.py). The iterator is read relative to its position, so a loop that breaks in every
iteration keeps a bounded number of entries whatever its length; results, exceptions and the iterators' state
afterwards are eager's."""

import pytest
import torch

import jitcore as jit
from tests.breaks.helpers import assert_in_graphs, check_breaks
from tests.support import CountingBackend, randn


@pytest.fixture(autouse=True)
def _loops_resume(monkeypatch):
    """These tests check loops resumed in graphs (`config.loop_breaks = "resume"`); the default, which runs a
    frame with a break inside a loop natively, is tested in tests/breaks/test_breaks_inside_loops.py."""
    monkeypatch.setattr(jit.config, "loop_breaks", "resume")


def step(x):
    """A graph break (a branch on a tensor's value, always taken) between two pieces of tensor work."""
    x = x * 1.5
    if x.abs().sum() >= 0:
        x = x - 1
    return torch.cos(x)


def _no_iteration_breaks(fn, *args):
    reasons = [b.reason for b in jit.explain(fn, *args).breaks]
    assert reasons and not [r for r in reasons if "advancing" in r or "iterat" in r], reasons


def zip_of_lists(x, a, b):
    for p, q in zip(a, b):
        x = step(x * p + q)
    return x


def zip_of_list_and_tuple(x, a, b):
    for p, q in zip(a, tuple(b)):
        x = step(x + p * q)
    return x


def enumerate_of_zip(x, a, b):
    for i, (p, q) in enumerate(zip(a, b)):
        x = step(x * p - q + i)
    return x


def enumerate_of_list_from(x, a):
    for i, p in enumerate(a, start=3):
        x = step(x + p * i)
    return x


def map_over_list(x, a):
    for p in map(torch.sin, a):
        x = step(x + p)
    return x


def reversed_list(x, a):
    for p in reversed(a):
        x = step(x - p)
    return x


def dict_items(x, d):
    for key, p in d.items():
        x = step(x + p * len(key))
    return x


def dict_values(x, d):
    for p in d.values():
        x = step(x + p)
    return x


def dict_keys(x, d):
    for key in d:
        x = step(x + d[key])
    return x


def over_range(x, n):
    for i in range(n):
        x = step(x + i)
    return x


def nested_zip(x, a, b, c):
    for (p, q), r in zip(zip(a, b), c):
        x = step(x + p * q - r)
    return x


def _lists(n, seed=0):
    return [randn(3, seed=seed + i) for i in range(n)]


CASES = [
    (zip_of_lists, lambda n: (randn(3, seed=1), _lists(n), _lists(n, 10))),
    (zip_of_list_and_tuple, lambda n: (randn(3, seed=1), _lists(n), _lists(n, 10))),
    (enumerate_of_zip, lambda n: (randn(3, seed=1), _lists(n), _lists(n, 10))),
    (enumerate_of_list_from, lambda n: (randn(3, seed=1), _lists(n))),
    (map_over_list, lambda n: (randn(3, seed=1), _lists(n))),
    (reversed_list, lambda n: (randn(3, seed=1), _lists(n))),
    (dict_items, lambda n: (randn(3, seed=1), {"k" * (i + 1): t for i, t in enumerate(_lists(n))})),
    (dict_values, lambda n: (randn(3, seed=1), {f"k{i}": t for i, t in enumerate(_lists(n))})),
    (dict_keys, lambda n: (randn(3, seed=1), {f"k{i}": t for i, t in enumerate(_lists(n))})),
    (over_range, lambda n: (randn(3, seed=1), n)),
    (nested_zip, lambda n: (randn(3, seed=1), _lists(n), _lists(n, 10), _lists(n, 20))),
]


@pytest.mark.parametrize("fn, make", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_every_iterator_kind_continues_after_a_break_as_eager(fn, make, counting, capsys):
    check_breaks(fn, make(5), make(2), counting=counting, capsys=capsys)
    assert_in_graphs(counting, torch.cos)
    _no_iteration_breaks(fn, *make(4))


# the keys are read in the body (a constant per position): such a loop is one entry per key, as it must be
_POSITION_FREE = [case for case in CASES if case[0] not in (dict_items, dict_keys)]


@pytest.mark.parametrize("fn, make", _POSITION_FREE, ids=[fn.__name__ for fn, _ in _POSITION_FREE])
def test_a_loop_breaking_in_every_iteration_does_not_compile_per_iteration(fn, make):
    graphs = []
    for n in (4, 12):
        counting = CountingBackend()
        compiled = jit.compile(fn, backend=counting)
        for _ in range(2):
            torch.testing.assert_close(compiled(*make(n)), fn(*make(n)))
        graphs.append(counting.graph_count)
    assert graphs[0] == graphs[1], f"graphs for 4 and 12 iterations: {graphs}"


def test_a_break_on_the_last_iteration_only(counting, capsys):
    def f(x, a):
        for i, p in enumerate(a):
            x = x + p
            if i == len(a) - 1:
                x = step(x)
        return torch.sin(x)

    check_breaks(f, (randn(3, seed=1), _lists(5)), (randn(3, seed=2), _lists(3)), counting=counting, capsys=capsys)
    assert_in_graphs(counting, torch.sin)


def test_zip_of_unequal_lengths_stops_at_the_shortest_and_leaves_the_longer_advanced(counting, capsys):
    def f(x, a, b):
        it = iter(b)
        for p, q in zip(a, it):
            x = step(x + p * q)
        return x, list(it)

    check_breaks(f, (randn(3, seed=1), _lists(3), _lists(5, 10)), (randn(3, seed=1), _lists(5), _lists(3, 10)),
                 counting=counting, capsys=capsys)


def test_strict_zip_raises_where_eager_raises(counting, capsys):
    def f(x, a, b):
        for p, q in zip(a, b, strict=True):
            x = step(x + p * q)
        return x

    check_breaks(f, (randn(3, seed=1), _lists(3), _lists(3, 10)), (randn(3, seed=1), _lists(3), _lists(4, 10)),
                 (randn(3, seed=1), _lists(4), _lists(2, 10)), counting=counting, capsys=capsys)


def test_a_list_appended_to_after_the_break_is_seen_by_its_iterator(counting, capsys):
    def f(x, a):
        for p in a:
            x = step(x + p)
            if len(a) < 6:
                a.append(p * 2)
        return x, a

    check_breaks(f, (randn(3, seed=1), _lists(3)), counting=counting, capsys=capsys)


def test_a_list_item_ahead_of_the_iterator_replaced_after_the_break_is_read(counting, capsys):
    def f(x, a):
        for i, p in enumerate(a):
            x = step(x + p)
            if i + 1 < len(a):
                a[i + 1] = a[i + 1] * 10
        return x

    check_breaks(f, (randn(3, seed=1), _lists(4)), counting=counting, capsys=capsys)


def test_a_dict_changed_while_looping_after_the_break_matches_eager(counting, capsys):
    def f(x, d):
        for key, p in d.items():
            x = step(x + p)
            d[key] = p * 2
        return x, d

    def grows(x, d):
        for key in d:
            x = step(x + d[key])
            d[key + "!"] = x
        return x

    check_breaks(f, (randn(3, seed=1), {"a": randn(3), "b": randn(3, seed=3)}), counting=counting, capsys=capsys)
    check_breaks(grows, (randn(3, seed=1), {"a": randn(3)}), counting=CountingBackend(), capsys=capsys)


def test_an_iterator_shared_with_the_loop_is_left_where_eager_leaves_it(counting, capsys):
    def f(x, a):
        it = iter(a)
        for i, p in enumerate(it):
            x = step(x + p)
            if i == 1:
                break
        return x, list(it)

    def taken_inside(x, a):
        it = iter(a)
        for i, p in enumerate(it):
            x = step(x + p * i)
            x = x + next(it, 0)
        return x

    check_breaks(f, (randn(3, seed=1), _lists(5)), counting=counting, capsys=capsys)
    check_breaks(taken_inside, (randn(3, seed=1), _lists(5)), counting=CountingBackend(), capsys=capsys)


def test_zip_over_a_generator_stays_in_python(counting, capsys):
    def gen(a):
        for p in a:
            yield p * 2

    def f(x, a, b):
        for p, q in zip(gen(a), b):
            x = step(x + p - q)
        return x

    check_breaks(f, (randn(3, seed=1), _lists(4), _lists(4, 10)), counting=counting, capsys=capsys)


def test_an_exhausted_iterator_handed_over_stays_exhausted(counting, capsys):
    def f(x, a):
        it = iter(a)
        for p in it:
            x = x + p
        x = step(x)
        a.append(x)
        return x, list(it)

    check_breaks(f, (randn(3, seed=1), _lists(3)), counting=counting, capsys=capsys)


def test_map_with_a_function_made_in_the_call_matches_eager(counting):
    def f(x, a, k):
        for p in map(lambda t: t * k, a):
            x = step(x + p)
        return x

    # the function is a new object per call: the resume function learns it by structure at its first miss
    compiled = jit.compile(f, backend=counting)
    graphs = []
    for k in (2.0, 3.0, 4.0, 5.0):
        torch.testing.assert_close(compiled(randn(3, seed=1), _lists(4), k), f(randn(3, seed=1), _lists(4), k))
        graphs.append(counting.graph_count)
    assert graphs[-1] == graphs[-2], graphs


class _Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        return step(self.lin(x))


def test_module_containers_of_breaking_blocks_continue_with_entries_bounded():
    graphs = []
    for n in (4, 12):
        torch.manual_seed(0)
        seq = torch.nn.Sequential(*[_Block() for _ in range(n)])
        layers = torch.nn.ModuleList([_Block() for _ in range(n)])

        def over_list(x):
            for i, layer in enumerate(layers):
                x = layer(x) + i
            return x

        counting = CountingBackend()
        x = randn(2, 4, seed=1)
        for fn in (seq, over_list):
            compiled = jit.compile(fn, backend=counting)
            for _ in range(3):
                torch.testing.assert_close(compiled(x), fn(x))
            _no_iteration_breaks(fn, x)
        graphs.append(counting.graph_count)
    assert graphs[0] == graphs[1], f"graphs for 4 and 12 blocks: {graphs}"
