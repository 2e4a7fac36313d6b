"""guards/iterators.py reads what an iterator will produce, and the parts it is made of, without advancing it: the
guard tree's "rest" and "iterstate" steps (Note [Iterators carried across a break])."""

import pytest

from jitcore.guards.iterators import iterator_state, remaining_items


def _advanced(it, count):
    for _ in range(count):
        next(it)
    return it


@pytest.mark.parametrize("make", [
    lambda: iter([1, 2, 3, 4]),
    lambda: iter((1, 2, 3, 4)),
    lambda: iter(range(2, 9, 2)),
    lambda: reversed([1, 2, 3, 4]),
    lambda: iter({"a": 1, "b": 2, "c": 3}),
    lambda: iter({"a": 1, "b": 2, "c": 3}.values()),
    lambda: iter({"a": 1, "b": 2, "c": 3}.items()),
    lambda: zip([1, 2, 3], (4, 5, 6, 7)),
    lambda: enumerate(zip([1, 2, 3], "abc"), start=5),
], ids=["list", "tuple", "range", "reversed_list", "dict", "dict_values", "dict_items", "zip", "enumerate_zip"])
def test_the_rest_is_what_next_would_produce_and_the_iterator_is_not_advanced(make):
    for taken in range(4):
        expected = list(_advanced(make(), taken))
        it = _advanced(make(), taken)
        assert remaining_items(it) == tuple(expected)
        assert list(it) == expected


def test_an_exhausted_list_iterator_has_no_rest_and_no_list():
    lst = [1]
    it = iter(lst)
    list(it)
    assert remaining_items(it) == ()
    assert iterator_state(it, "seq") is None and iterator_state(it, "pos") == -1


def test_iterators_whose_rest_would_run_code_are_not_read():
    with pytest.raises(TypeError):
        remaining_items(map(abs, [1, 2]))
    with pytest.raises(TypeError):
        remaining_items(zip([1], [2], strict=True))
    with pytest.raises(TypeError):
        remaining_items(x for x in [1])


def test_the_parts_of_adapters_and_containers_are_read():
    a, b = iter([1, 2]), iter((3,))
    z = zip(a, b, strict=True)
    assert iterator_state(z, 0) is a and iterator_state(z, 1) is b and iterator_state(z, "strict") is True
    assert iterator_state(zip(a, b), "strict") is False
    e = enumerate(a, 7)
    assert iterator_state(e, 0) is a and iterator_state(e, 1) == 7
    m = map(abs, a)
    assert iterator_state(m, 0) is abs and iterator_state(m, 1) is a
    d = {"k": 1}
    items = iter(d.items())
    assert iterator_state(items, "dict") is d
    list(items)
    assert iterator_state(items, "dict") is None
    lst = [1, 2, 3]
    assert iterator_state(_advanced(iter(lst), 2), "seq") is lst and iterator_state(_advanced(iter(lst), 2), "pos") == 2
