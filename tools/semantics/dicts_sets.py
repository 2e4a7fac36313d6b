"""Dict and set methods: get/pop/setdefault/update/items, dict union, comprehension, views, set algebra, mutation
of passed-in containers."""
import torch
from harness import probe, T, main

G = "dicts_sets"


@probe(G)
def dict_methods(x):
    d = {"a": x + 1, "b": x}
    v = d.pop("b") + d.get("a") + d.get("z", 3) + d.pop("z", 4)
    d.update({"c": 1})
    d.setdefault("e", 2)
    return v + len(d) + d["e"]


@probe(G)
def dict_union_ops(x):
    a = {"a": 1}
    b = {"b": 2}
    c = a | b
    a |= {"z": 3}
    return x + len(c) + len(a)


@probe(G)
def dict_items_loop(x):
    d = {"w": 2.0, "b": 1.0}
    out = x
    for k, v in d.items():
        out = out * v if k == "w" else out + v
    return out


@probe(G)
def dict_view_live(x):
    d = {1: 1}
    k = d.keys()
    d[4] = 2
    return x + (1 if 4 in k else 0) + len(k)


@probe(G)
def dict_del_popitem(x):
    d = {"a": 1, "b": 2, "c": 3}
    del d["a"]
    k, v = d.popitem()
    return x + v + len(d)


@probe(G)
def dict_keyerror(x):
    d = {}
    try:
        return d["missing"]
    except KeyError:
        return x + 1


@probe(G)
def dict_copy_clear(x):
    d = {"a": 1}
    e = d.copy()
    d.clear()
    return x + len(d) + len(e)


@probe(G)
def dict_equality(x):
    return x + ({"a": 1, "b": 2} == {"b": 2, "a": 1})


@probe(G, args=lambda: (T(), {"a": 1}))
def dict_arg_mutation(x, d):
    d["b"] = 2
    del d["a"]
    return x + len(d)


@probe(G)
def dict_int_and_tuple_keys(x):
    d = {(1, 2): 3, 4: 5}
    return x + d[(1, 2)] + d[4]


@probe(G)
def dict_iter_mutation_error(x):
    d = {"a": 1, "b": 2}
    try:
        for k in d:
            d["new"] = 3
    except RuntimeError:
        return x - 1
    return x + 1


@probe(G)
def dict_reversed_and_sorted_items(x):
    d = {"b": 1, "a": 2}
    return x + list(reversed(d))[0].__len__() + sorted(d.items())[0][1]


@probe(G)
def set_algebra(x):
    a, b = {1, 2, 3}, {2, 3, 4}
    return x + len(a & b) + len(a | b) + len(a - b) + len(a ^ b)


@probe(G)
def set_methods(x):
    s = {1, 2}
    s.update([3, 4])
    s.discard(1)
    s.remove(2)
    t = s.union({9}).intersection({3, 9})
    return x + len(s) + len(t) + s.issubset({3, 4, 5})


@probe(G, args=lambda: (T(), {1, 2}))
def set_arg_ior(x, s):
    s |= {9}
    return x + len(s)


@probe(G)
def set_pop_loop(x):
    s = {3}
    v = s.pop()
    return x + v + len(s)


@probe(G)
def set_comprehension(x):
    s = {d % 2 for d in range(5)}
    return x + len(s)


@probe(G)
def set_of_strings_membership(x):
    keep = {"weight", "bias"}
    return x + sum(1 for n in ["weight", "gamma"] if n in keep)


@probe(G)
def dict_comprehension_tensors(x):
    d = {f"k{i}": x * i for i in range(3)}
    return d


@probe(G)
def dict_in_values(x):
    d = {"a": 1, "b": 2}
    return x + (2 in d.values()) + len(list(d.items()))


if __name__ == "__main__":
    main(G)
