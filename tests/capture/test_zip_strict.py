"""zip(strict=True): rows as zip's, and CPython's ValueError (its message naming the arguments) when the iterables
end at different rows, raised when the loop reaches the end, after the rows before it; lists read live, tuples,
iterators and generators. One graph where no error is raised."""
import pytest

from tests.capture.test_live_containers import _check  # compiled and registered against eager, args after too
from tests.support import check_against_eager, randn


def zip_strict_over_lists(x, a, b):
    for i, j in zip(a, b, strict=True):
        x = x + i * j
    return x


def zip_strict_over_three(x, a, b, c):
    seen = []
    try:
        for row in zip(a, b, c, strict=True):
            seen.append(row)
    except ValueError as e:
        return x + len(seen), str(e), seen
    return x + len(seen), seen


def zip_strict_over_tuples(x, a, b):
    total = 0
    try:
        for i, j in zip(tuple(a), tuple(b), strict=True):
            total += i + j
    except ValueError as e:
        return x + total, str(e)
    return x + total


def zip_strict_over_iterators(x, a, b):
    first, second = iter(a), iter(b)
    try:
        rows = list(zip(first, second, strict=True))
    except ValueError as e:
        return x, str(e), list(first), list(second)
    return x + len(rows), rows


def zip_strict_over_generators(x, n, m):
    def count(k):
        yield from range(k)
    try:
        return x + sum(i * j for i, j in zip(count(n), count(m), strict=True))
    except ValueError as e:
        return x, str(e)


def zip_strict_false(x, a, b):
    return x + sum(i for i, _ in zip(a, b, strict=False))


@pytest.mark.parametrize("fn, arg_sets", [
    (zip_strict_over_lists, [(randn(3), [1, 2], [3, 4]), (randn(3), [1, 2], [3]), (randn(3), [1], [3, 4])]),
    (zip_strict_over_three, [(randn(3), [1, 2], [3, 4], [5, 6]), (randn(3), [1, 2], [3, 4], [5]),
                             (randn(3), [1, 2], [3, 4], [5, 6, 7]), (randn(3), [1], [3, 4], [5, 6])]),
    (zip_strict_over_tuples, [(randn(3), [1, 2], [3, 4]), (randn(3), [1, 2], [3]), (randn(3), [1], [3, 4])]),
    (zip_strict_over_iterators, [(randn(3), [1, 2], [3, 4]), (randn(3), [1, 2], [3, 4, 5]),
                                 (randn(3), [1, 2, 3], [3, 4])]),
    (zip_strict_over_generators, [(randn(3), 2, 2), (randn(3), 2, 3), (randn(3), 3, 2)]),
    (zip_strict_false, [(randn(3), [1, 2], [3])]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_zip_strict_matches_eager(fn, arg_sets):
    _check(fn, *arg_sets)


def test_zip_strict_of_equal_lists_is_one_graph():
    check_against_eager(zip_strict_over_lists, (randn(3), [1, 2], [3, 4]))
    check_against_eager(zip_strict_over_tuples, (randn(3), [1, 2], [3, 4]))
