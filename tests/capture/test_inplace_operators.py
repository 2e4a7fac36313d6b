"""In-place operators (`a += b`, BINARY_OP with an NB_INPLACE_* arg, `operator.iadd`) follow Python's protocol:
the left side's in-place method when its type has one (tensors, lists, sets, dicts, user classes), else the plain
operator, whose reflected side may be the right operand's (`0 += t` is `t.__radd__(0)`, a new tensor). Results and
the objects aliasing the left side match eager, through `jit.compile` and `register` + `enabled()`, with no fallback.
"""
import dis
import operator

import pytest
import torch

from tests.support import arg_sets, check_against_eager, check_registered_against_eager, randn


@pytest.fixture(autouse=True)
def _strict(monkeypatch):
    """An internal error is raised, not contained: a fallback would hide it behind eager's own result."""
    import jitcore as jit
    monkeypatch.setattr(jit.config, "strict", True)


def _both_doors(fn, *sets, graphs=1):
    check_against_eager(fn, *sets, expected_graphs=graphs)
    check_registered_against_eager(fn, *sets)


def _has_inplace_binary_op(fn) -> bool:
    return any(i.opname == "BINARY_OP" and i.argrepr.endswith("=") for i in dis.get_instructions(fn))


def test_int_plus_equals_tensor_is_a_new_tensor_in_one_graph():
    def f(x):
        y = 0
        y += x.sum()
        return y

    assert _has_inplace_binary_op(f)
    _both_doors(f, *arg_sets((4, 3)))


def test_relative_position_bucket_accumulates_into_an_int_like_t5():
    def f(relative_position):
        num_buckets = 32
        ret = 0
        n = -relative_position
        num_buckets //= 2
        ret += (n < 0).to(torch.long) * num_buckets
        n = torch.abs(n)
        ret += n.long()
        return ret

    _both_doors(f, *arg_sets((5, 5)))


def test_float_minus_equals_tensor_matches_eager():
    def f(x):
        y = 0.5
        y -= x.sum()
        return y * x

    _both_doors(f, *arg_sets((4, 3)))


def test_tensor_plus_equals_stays_in_place_for_its_aliases():
    def f(x):
        y = x * 2
        alias = y
        y += 1
        return alias, y is alias

    _both_doors(f, *arg_sets((4, 3)))


def test_tuple_and_str_plus_equals_leave_the_old_object_unchanged():
    def f(x):
        t = (1,)
        old_t = t
        t += (2,)
        t *= 2
        s = "a"
        old_s = s
        s += "b"
        return x + len(t) + len(old_t), old_t, t, old_s, s

    _both_doors(f, *arg_sets((3,)))


def test_list_times_equals_mutates_the_list_seen_through_an_alias():
    def f(x):
        a = [1, 2]
        alias = a
        a *= 3
        return x + len(alias), alias

    _both_doors(f, *arg_sets((3,)))


def test_list_argument_times_equals_is_replayed_on_the_caller_list():
    def f(x, lst):
        lst *= 2
        return x + len(lst)

    _both_doors(f, (randn(3, seed=1), [1, 2]), (randn(3, seed=2), [1, 2]))


@pytest.mark.parametrize("op", ["|=", "&=", "-=", "^="])
def test_set_in_place_operator_mutates_the_set_seen_through_an_alias(op):
    namespace = {}
    exec(f"def f(x):\n    s = {{1, 2, 3}}\n    alias = s\n    s {op} {{3, 4}}\n"
         f"    return x + len(alias), sorted(alias)\n", namespace)
    _both_doors(namespace["f"], *arg_sets((3,)))


def test_set_update_methods_mutate_the_set_seen_through_an_alias():
    def f(x):
        s = {1, 2, 3}
        alias = s
        s.intersection_update({1, 2}, [2, 1, 7])
        a = len(alias)
        s.symmetric_difference_update((2, 5))
        s.difference_update([1])
        return x + a, sorted(alias)

    _both_doors(f, *arg_sets((3,)))


def test_set_argument_or_equals_is_replayed_on_the_caller_set():
    def f(x, s):
        s |= {9}
        return x + len(s)

    check_against_eager(f, (randn(3, seed=1), {1, 2}), expected_graphs=None)
    check_registered_against_eager(f, (randn(3, seed=1), {1, 2}))


def test_frozenset_or_equals_is_the_plain_operator():
    def f(x):
        s = frozenset({1})
        alias = s
        s |= {2}
        return x + len(s), alias, s

    _both_doors(f, *arg_sets((3,)))


class _Plain:
    """Has __add__ only: `a += 1` is `a = a + 1`, the old object unchanged."""

    def __init__(self, v):
        self.v = v

    def __add__(self, other):
        return _Plain(self.v + other)


class _InPlace:
    """Has __iadd__: `a += 1` changes the object itself."""

    def __init__(self, v):
        self.v = v

    def __iadd__(self, other):
        self.v = self.v + other
        return self


class _Reflected:
    def __radd__(self, other):
        return other * 2


def test_user_object_without_iadd_uses_add_and_keeps_the_old_object():
    def f(x):
        a = _Plain(x)
        old = a
        a += 1
        return a.v, old.v

    _both_doors(f, *arg_sets((3,)))


def test_user_object_with_iadd_mutates_itself():
    def f(x):
        a = _InPlace(x)
        old = a
        a += 1
        return a.v, old.v, a is old

    _both_doors(f, *arg_sets((3,)))


def test_int_plus_equals_object_uses_its_reflected_add():
    def f(x):
        y = 3
        y += _Reflected()
        return x + y

    _both_doors(f, *arg_sets((3,)))


def test_operator_iadd_on_an_int_and_a_tensor_matches_eager():
    def f(x):
        return operator.iadd(1, x), operator.ior(0, x.long())

    _both_doors(f, *arg_sets((3,)))


def test_none_plus_equals_tensor_raises_type_error_like_eager():
    def f(x):
        y = None
        try:
            y += x
        except TypeError:
            return x - 1
        return y

    check_against_eager(f, *arg_sets((3,)), expected_graphs=None)
