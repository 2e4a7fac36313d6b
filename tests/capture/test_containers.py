"""Capture: lists, tuples, dicts, sets, comprehensions, namedtuples and dataclasses around tensors, in one graph.

Each test builds, reads or mutates a Python container inside the compiled function (or receives one as an input)
and requires eager-equal results, eager-equal mutations of input containers (`check_against_eager` compares the
arguments after each call) and exactly one graph.
"""

import dataclasses
from collections import namedtuple

import torch

import jitcore as jit
from tests.support import arg_sets, assert_same, check_against_eager, randn

Pair = namedtuple("Pair", ["first", "second"])
Scaled = namedtuple("Scaled", ["value", "scale"])


@dataclasses.dataclass
class Batch:
    inputs: torch.Tensor
    targets: torch.Tensor
    weight: float = 1.0


@dataclasses.dataclass
class Stats:
    mean: torch.Tensor
    total: torch.Tensor


def _input_lists():
    return ([randn(3, seed=1), randn(3, seed=2), randn(3, seed=3)],), ([randn(3, seed=4), randn(3, seed=5),
                                                                           randn(3, seed=6)],)


# Lists


def test_list_literal_of_tensors_returned_matches_eager():
    def f(x):
        return [x + 1, x * 2, x.sum()]

    check_against_eager(f, *arg_sets((4, 3)))


def test_list_negative_index_matches_eager():
    def f(xs):
        return xs[-1] - xs[0]

    check_against_eager(f, *_input_lists())


def test_list_slice_matches_eager():
    def f(xs):
        return torch.stack(xs[1:])

    check_against_eager(f, *_input_lists())


def test_list_append_in_loop_matches_eager():
    def f(x):
        out = []
        for i in range(3):
            out.append(x + i)
        return torch.cat(out)

    check_against_eager(f, *arg_sets((4, 3)))


def test_list_extend_matches_eager():
    def f(x):
        out = [x]
        out.extend([x * 2, x * 3])
        return torch.stack(out)

    check_against_eager(f, *arg_sets((4, 3)))


def test_list_pop_last_and_first_matches_eager():
    def f(x):
        items = [x, x + 1, x + 2, x + 3]
        last = items.pop()
        first = items.pop(0)
        return last - first, len(items)

    check_against_eager(f, *arg_sets((4, 3)))


def test_list_insert_at_front_matches_eager():
    def f(x):
        items = [x + 1, x + 2]
        items.insert(0, x * 10)
        return torch.stack(items)

    check_against_eager(f, *arg_sets((4, 3)))


def test_list_setitem_replaces_element_matches_eager():
    def f(x):
        items = [x, x, x]
        items[1] = x * 5
        return torch.stack(items)

    check_against_eager(f, *arg_sets((4, 3)))


def test_list_concatenation_and_repetition_matches_eager():
    def f(x):
        items = [x] + [x * 2] * 2
        return torch.stack(items)

    check_against_eager(f, *arg_sets((4, 3)))


def test_in_on_list_of_python_ints_matches_eager():
    def f(x, n):
        if n in [1, 2, 3]:
            return x + n
        return x - n

    check_against_eager(f, (randn(4, 3, seed=1), 2), (randn(4, 3, seed=2), 2))


def test_append_to_input_list_is_seen_by_caller():
    """The input list gains the element in place: check_against_eager compares the arguments after the call."""

    def f(xs, x):
        xs.append(x * 2)
        return x + 1

    check_against_eager(f, ([randn(3, seed=1)], randn(3, seed=2)))


def test_setitem_on_input_list_is_seen_by_caller():
    """The input list's element is replaced in place, like eager."""

    def f(xs):
        xs[0] = xs[0] + xs[1]
        return xs[1] * 2

    check_against_eager(f, *_input_lists())


def test_pop_from_input_list_is_seen_by_caller():
    """The caller's list loses its last element, like eager."""

    def f(xs):
        last = xs.pop()
        return last * 2 + xs[0]

    check_against_eager(f, *_input_lists())


def test_list_of_python_ints_indexed_by_shape_matches_eager():
    def f(x):
        scales = [1.0, 2.0, 3.0, 4.0, 5.0]
        return x * scales[x.shape[0]]

    check_against_eager(f, *arg_sets((4, 3)))


# Tuples


def test_tuple_literal_returned_matches_eager():
    def f(x):
        return (x + 1, (x * 2, x - 1))

    check_against_eager(f, *arg_sets((4, 3)))


def test_tuple_index_and_slice_matches_eager():
    def f(x):
        parts = (x, x + 1, x + 2, x + 3)
        return parts[-2] + sum(parts[1:3])

    check_against_eager(f, *arg_sets((4, 3)))


def test_tuple_concatenation_matches_eager():
    def f(x):
        parts = (x,) + (x * 2, x * 3)
        return torch.cat(parts)

    check_against_eager(f, *arg_sets((4, 3)))


def test_tuple_unpacking_of_chunk_matches_eager():
    def f(x):
        a, b = x.chunk(2, dim=1)
        return b - a

    check_against_eager(f, *arg_sets((4, 6)))


def test_starred_unpacking_head_and_rest_matches_eager():
    def f(xs):
        first, *rest = xs
        return first * len(rest) + torch.stack(rest).sum(0)

    check_against_eager(f, *_input_lists())


def test_starred_unpacking_init_and_last_matches_eager():
    def f(x):
        *init, last = x.unbind(0)
        return torch.stack(init) * last

    check_against_eager(f, *arg_sets((4, 3)))


def test_nested_tuple_unpacking_matches_eager():
    def f(pairs):
        (a, b), (c, d) = pairs
        return a * d - b * c

    pair_sets = [(((randn(3, seed=s), randn(3, seed=s + 1)), (randn(3, seed=s + 2), randn(3, seed=s + 3))),)
                 for s in (1, 10)]
    check_against_eager(f, *pair_sets)


def test_swap_by_tuple_assignment_matches_eager():
    def f(x, y):
        x, y = y, x
        return x - y

    check_against_eager(f, *arg_sets((4, 3), (4, 3)))


# Dicts


def test_dict_literal_returned_matches_eager():
    def f(x):
        return {"double": x * 2, "sum": x.sum(), "shape": x.shape[0]}

    check_against_eager(f, *arg_sets((4, 3)))


def test_dict_input_indexing_matches_eager():
    def f(inputs):
        return inputs["a"] @ inputs["b"]

    check_against_eager(f, ({"a": randn(4, 3, seed=1), "b": randn(3, 2, seed=2)},),
                        ({"a": randn(4, 3, seed=3), "b": randn(3, 2, seed=4)},))


def test_dict_update_matches_eager():
    def f(x):
        out = {"a": x}
        out.update({"b": x + 1, "a": x * 3})
        return out

    check_against_eager(f, *arg_sets((4, 3)))


def test_dict_get_with_default_matches_eager():
    def f(x, options):
        return x * options.get("scale", 1.0) + options.get("shift", 0.5)

    check_against_eager(f, (randn(4, 3, seed=1), {"scale": 2.0}), (randn(4, 3, seed=2), {"scale": 2.0}))


def test_dict_setdefault_matches_eager():
    def f(x):
        cache = {}
        first = cache.setdefault("a", x + 1)
        second = cache.setdefault("a", x * 100)
        return first + second, len(cache)

    check_against_eager(f, *arg_sets((4, 3)))


def test_dict_pop_matches_eager():
    def f(x):
        d = {"a": x + 1, "b": x * 2}
        a = d.pop("a")
        return a + d["b"], list(d)

    check_against_eager(f, *arg_sets((4, 3)))


def test_in_on_dict_keys_matches_eager():
    def f(x, d):
        if "bias" in d:
            return x + d["bias"]
        return x * 2

    check_against_eager(f, (randn(4, 3, seed=1), {"bias": randn(3, seed=2)}),
                        (randn(4, 3, seed=3), {"bias": randn(3, seed=4)}))


def test_setitem_on_input_dict_is_seen_by_caller():
    """The caller's dict gains the new key in place, like eager."""

    def f(state, x):
        state["out"] = x * 2
        return x + 1

    check_against_eager(f, ({"old": randn(3, seed=1)}, randn(3, seed=2)))


def test_del_key_from_input_dict_is_seen_by_caller():
    """The caller's dict loses the deleted key, like eager."""

    def f(state):
        del state["tmp"]
        return state["keep"] * 2

    check_against_eager(f, ({"keep": randn(3, seed=1), "tmp": randn(3, seed=2)},))


def test_sorted_dict_items_matches_eager():
    def f(x):
        parts = {"b": x * 2, "a": x + 1, "c": x - 1}
        return [value for _, value in sorted(parts.items())]

    check_against_eager(f, *arg_sets((4, 3)))


def test_dict_merge_with_double_star_matches_eager():
    def f(x):
        base = {"a": x, "b": x + 1}
        merged = {**base, "b": x * 5, "c": x - 1}
        return merged

    check_against_eager(f, *arg_sets((4, 3)))


def test_dict_from_zip_of_names_and_tensors_matches_eager():
    def f(x):
        names = ["low", "high"]
        return dict(zip(names, x.chunk(2)))

    check_against_eager(f, *arg_sets((4, 3)))


# Sets


def test_set_of_python_ints_membership_matches_eager():
    def f(x):
        allowed = {2, 3, 5}
        if x.shape[0] in allowed:
            return x * 2
        return x - 1

    check_against_eager(f, *arg_sets((3, 3)))


def test_set_add_and_len_matches_eager():
    def f(x):
        seen = set()
        for n in (1, 2, 2, 3, 1):
            seen.add(n)
        return x * len(seen)

    check_against_eager(f, *arg_sets((4, 3)))


def test_set_union_and_intersection_of_ints_matches_eager():
    def f(x):
        a = {1, 2, 3}
        b = {2, 3, 4}
        return x * len(a | b) + len(a & b)

    check_against_eager(f, *arg_sets((4, 3)))


# Comprehensions and generator expressions


def test_list_comprehension_over_range_matches_eager():
    def f(x):
        return torch.stack([x * i for i in range(3)])

    check_against_eager(f, *arg_sets((4, 3)))


def test_list_comprehension_with_condition_matches_eager():
    def f(xs):
        return [t * 2 for i, t in enumerate(xs) if i != 1]

    check_against_eager(f, *_input_lists())


def test_nested_list_comprehension_matches_eager():
    def f(x):
        return [[x[i] * j for j in range(2)] for i in range(x.shape[0])]

    check_against_eager(f, *arg_sets((3, 2)))


def test_dict_comprehension_matches_eager():
    def f(x):
        return {f"pow{k}": x**k for k in range(1, 4)}

    check_against_eager(f, *arg_sets((4, 3)))


def test_set_comprehension_of_shapes_matches_eager():
    def f(xs):
        widths = {t.shape[-1] for t in xs}
        return torch.cat(xs) * len(widths)

    check_against_eager(f, *_input_lists())


def test_generator_expression_consumed_by_sum_matches_eager():
    def f(xs):
        return sum(t * t for t in xs)

    check_against_eager(f, *_input_lists())


def test_generator_expression_consumed_by_any_and_all_matches_eager():
    def f(xs):
        if any(t.shape[0] > 2 for t in xs) and all(t.dim() == 1 for t in xs):
            return xs[0] + 1
        return xs[0] - 1

    check_against_eager(f, *_input_lists())


def test_generator_expression_consumed_by_tuple_matches_eager():
    def f(x):
        return tuple(x + i for i in range(3))

    check_against_eager(f, *arg_sets((4, 3)))


def test_generator_expression_consumed_by_list_matches_eager():
    def f(x):
        return list(row.sum() for row in x)

    check_against_eager(f, *arg_sets((3, 2)))


# namedtuple and dataclass


def test_namedtuple_input_fields_by_name_matches_eager():
    def f(pair):
        return pair.first * pair.second

    check_against_eager(f, (Pair(randn(3, seed=1), randn(3, seed=2)),), (Pair(randn(3, seed=3), randn(3, seed=4)),))


def test_namedtuple_input_index_and_unpacking_matches_eager():
    def f(pair):
        a, b = pair
        return a - pair[1] + b

    check_against_eager(f, (Pair(randn(3, seed=1), randn(3, seed=2)),))


def test_namedtuple_built_as_intermediate_matches_eager():
    def f(x):
        s = Scaled(x + 1, 3.0)
        return s.value * s.scale

    check_against_eager(f, *arg_sets((4, 3)))


def test_namedtuple_returned_matches_eager():
    def f(x):
        return Pair(first=x.max(dim=0).values, second=x.min(dim=0).values)

    check_against_eager(f, *arg_sets((4, 3)))


def test_namedtuple_replace_matches_eager():
    def f(pair):
        updated = pair._replace(second=pair.second * 10)
        return updated.first + updated.second

    check_against_eager(f, (Pair(randn(3, seed=1), randn(3, seed=2)),))


def test_dataclass_input_fields_matches_eager():
    def f(batch):
        return ((batch.inputs - batch.targets) ** 2).mean() * batch.weight

    check_against_eager(f, (Batch(randn(4, 3, seed=1), randn(4, 3, seed=2), 0.5),),
                        (Batch(randn(4, 3, seed=3), randn(4, 3, seed=4), 0.5),))


def test_dataclass_built_as_intermediate_matches_eager():
    def f(x, y):
        batch = Batch(x, y)
        return batch.inputs * batch.weight + batch.targets

    check_against_eager(f, *arg_sets((4, 3), (4, 3)))


def test_dataclass_returned_matches_eager(counting):
    def f(x):
        return Stats(mean=x.mean(dim=0), total=x.sum())

    compiled = jit.compile(f, backend=counting)
    for seed in (1, 2):
        x = randn(4, 3, seed=seed)
        expected, actual = f(x), compiled(x)
        assert type(actual) is Stats
        assert_same(dataclasses.astuple(expected), dataclasses.astuple(actual))
    assert counting.graph_count == 1
