"""Constructors and classmethods of builtins: set(), frozenset(), str(), int(), max()/min() over kinds,
dict.fromkeys, sorted with key, enumerate/zip variants, any/all, sum, reversed, range, isinstance/type."""
import torch
from harness import probe, T, main

G = "builtins"


@probe(G)
def set_empty_and_add(x):
    s = set()
    s.add(1)
    s.add(1)
    return x + len(s)


@probe(G)
def set_from_list(x):
    s = set([1, 2, 2, 3])
    return x + len(s) + (1 if 3 in s else 0)


@probe(G)
def frozenset_ctor(x):
    f = frozenset({1, 2}) | frozenset([3])
    return x + len(f) + (1 if 2 in f else 0)


@probe(G)
def str_of_int_float(x):
    s = str(3) + str(1.5) + str(True) + str(None)
    return x + len(s)


@probe(G)
def str_of_dtype(x):
    return x + len(str(x.dtype))


@probe(G)
def str_of_size(x):
    return x + len(str(x.shape))


@probe(G)
def repr_of_tuple(x):
    return x + len(repr((1, "a")))


@probe(G)
def int_float_bool_ctor(x):
    return x * int("3") + float("0.5") + int(2.7) + bool([])


@probe(G)
def max_ints(x):
    return x + max(1, 5, 3) + min(4, 2)


@probe(G)
def max_list(x):
    return x + max([3, 1, 4]) + min((3, 1, 4))


@probe(G)
def max_floats_default(x):
    return x + max([], default=0.5) + max(1.5, 2)


@probe(G)
def max_key(x):
    return x + max(["a", "bbb", "cc"], key=len).__len__()


@probe(G)
def max_mixed_kinds(x):
    return x + len(max("ab", "b")) + max({"k": 1, "z": 2}).__len__() + max(True, 0) + max(2, 2.5) + min(-1, 0.5)


@probe(G)
def max_of_tensors(x):
    return max(x, x * 2), min([x, -x])


@probe(G)
def max_of_shape(x):
    return x + max(x.shape) + min(x.size())


@probe(G)
def max_generator(x):
    return x + max(d for d in x.shape)


@probe(G)
def dict_fromkeys(x):
    d = dict.fromkeys(["a", "b"], 0)
    d["a"] += 2
    return x + d["a"] + len(d)


@probe(G)
def dict_fromkeys_none(x):
    d = dict.fromkeys("abc")
    return x + (1 if d["b"] is None else 0) + len(d)


@probe(G)
def dict_ctor_kwargs(x):
    d = dict(a=x, b=x + 1)
    return d


@probe(G)
def dict_ctor_pairs(x):
    d = dict([("a", 1), ("b", 2)])
    d2 = dict(zip("cd", (3, 4)))
    return x + sum(d.values()) + sum(d2.values())


@probe(G)
def sorted_key(x):
    items = [("b", 2), ("a", 3), ("c", 1)]
    s = sorted(items, key=lambda kv: kv[1])
    return x + s[0][1] * 10 + s[-1][1]


@probe(G)
def sorted_reverse(x):
    return x + sorted([3, 1, 2], reverse=True)[0]


@probe(G)
def sorted_dict_keys(x):
    d = {"b": 1, "a": 2}
    return x + d[sorted(d)[0]]


@probe(G)
def list_sort_key(x):
    l = [x * 3, x, x * 2]
    l.sort(key=lambda t: t.sum().item() if False else 0)
    return l


@probe(G)
def enumerate_start(x):
    out = x
    for i, v in enumerate([1.0, 2.0], start=1):
        out = out + i * v
    return out


@probe(G)
def zip_three(x):
    out = x
    for a, b, c in zip([1, 2], (3, 4), "ab"):
        out = out + a * b + len(c)
    return out


@probe(G)
def zip_strict(x):
    return x + sum(a * b for a, b in zip([1, 2], [3, 4], strict=True))


@probe(G)
def zip_unequal(x):
    return x + len(list(zip([1, 2, 3], [1])))


@probe(G)
def any_all(x):
    return x + any([0, 1]) + all([]) * 2 + any(d > 2 for d in x.shape) * 4


@probe(G)
def sum_start(x):
    return sum([x, x], start=torch.zeros_like(x)) + sum([1, 2], 10)


@probe(G)
def reversed_list(x):
    out = []
    for t in reversed([x, x + 1]):
        out.append(t)
    return out


@probe(G)
def range_ops(x):
    r = range(2, 10, 3)
    return x + len(r) + r[1] + (1 if 5 in r else 0)


@probe(G)
def isinstance_tuple(x):
    return x + isinstance(3, (int, float)) + isinstance("a", str) * 2 + isinstance(x, (list, torch.Tensor)) * 4


@probe(G)
def type_is(x):
    return x + (1 if type(3) is int else 0) + (2 if type(x) is torch.Tensor else 0)


@probe(G)
def divmod_pow_abs_round(x):
    q, r = divmod(17, 5)
    return x + q + r + pow(2, 3) + abs(-2) + round(2.567, 1)


@probe(G)
def chr_ord_hex(x):
    return x + ord("a") + len(chr(66)) + len(hex(255)) + len(bin(5))


@probe(G)
def hash_id(x):
    return x + (1 if hash("a") == hash("a") else 0) + (1 if id(x) == id(x) else 0)


@probe(G)
def iter_next(x):
    it = iter([x, x + 1])
    a = next(it)
    b = next(it)
    c = next(it, None)
    return a + b, c


@probe(G)
def map_filter(x):
    l = list(map(lambda v: v * 2, filter(lambda v: v > 1, [1, 2, 3])))
    return x + sum(l)


@probe(G)
def map_two_iterables(x):
    return x + sum(map(lambda a, b: a * b, [1, 2], [3, 4]))


@probe(G)
def tuple_list_ctor_gen(x):
    t = tuple(i * 2 for i in range(3))
    l = list(range(3))
    return x + t[2] + l[-1]


@probe(G)
def len_of_various(x):
    return x + len("abc") + len((1,)) + len({1: 2}) + len(range(4)) + len(x)


@probe(G)
def callable_checks(x):
    return x + callable(len) + callable(lambda: 0) * 2 + callable(3) * 4


@probe(G)
def slice_builtin(x):
    s = slice(1, None)
    return [1, 2, 3][s], x[:, s]


@probe(G)
def bool_of_containers(x):
    return x + bool([1]) + bool({}) * 2 + bool("") * 4 + bool((0,)) * 8


@probe(G)
def format_builtin(x):
    return x + len(format(3.14159, ".2f"))


@probe(G)
def getattr_builtin_default(x):
    return x + getattr(x, "nonexistent_attr", 5)


@probe(G)
def vars_of_obj(x):
    class O:
        def __init__(self):
            self.a = 2
    return x + vars(O())["a"]


if __name__ == "__main__":
    main(G)
