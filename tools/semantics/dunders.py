"""Explicit dunder calls on builtins (lst.__getitem__, __iadd__, tup.__mul__, __setitem__, ...)."""
import torch
from harness import probe, T, main

G = "dunder"


@probe(G)
def list_getitem(x):
    l = [x, x + 1, x + 2]
    return l.__getitem__(2)


@probe(G)
def list_setitem(x):
    l = [x, x + 1]
    l.__setitem__(0, x * 3)
    return l


@probe(G)
def list_iadd(x):
    l = [x]
    l.__iadd__([x + 1])
    return l


@probe(G)
def list_len_contains(x):
    l = [1, 2, 3]
    return x + l.__len__() + (1 if l.__contains__(2) else 0)


@probe(G)
def list_add(x):
    return [x].__add__([x * 2])


@probe(G)
def tuple_mul(x):
    t = (x,).__mul__(3)
    return sum(t)


@probe(G)
def tuple_getitem(x):
    t = (x, x * 2)
    return t.__getitem__(1)


@probe(G)
def dict_getitem_setitem(x):
    d = {"a": x}
    d.__setitem__("b", x + 1)
    return d.__getitem__("b") + d.__len__()


@probe(G)
def dict_contains_dunder(x):
    d = {"a": 1}
    return x + (1 if d.__contains__("a") else 0)


@probe(G)
def int_dunders(x):
    n = (3).__add__(4)
    m = (10).__floordiv__(3)
    return x * n + m


@probe(G)
def float_dunders(x):
    return x * (2.5).__mul__(2.0) + (1.5).__neg__()


@probe(G)
def str_dunders(x):
    s = "ab".__add__("cd")
    return x + s.__len__()


@probe(G)
def tensor_dunders(x):
    return x.__add__(1).__mul__(2).__neg__()


@probe(G)
def tensor_getitem_dunder(x):
    return x.__getitem__(0)


@probe(G, args=lambda: (T(), [1, 2]))
def list_arg_imul(x, l):
    l.__imul__(2)
    return x + len(l)


@probe(G)
def set_dunders(x):
    s = {1, 2}.__or__({3})
    return x + len(s) + (1 if s.__contains__(3) else 0)


@probe(G)
def list_eq_dunder(x):
    return x + (1 if [1, 2].__eq__([1, 2]) else 0)


@probe(G)
def list_delitem(x):
    l = [x, x + 1, x + 2]
    l.__delitem__(0)
    return l


if __name__ == "__main__":
    main(G)
