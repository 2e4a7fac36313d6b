"""Ordering comparisons of lists and tuples, torch.Size comparisons."""
import torch
from harness import probe, T, main

G = "seqcmp"


@probe(G)
def tuple_lt_prefix(x):
    return x + (1 if (1, 2) < (1, 2, 3) else 0)


@probe(G)
def tuple_orderings(x):
    a, b = (1, 4, 3), (1, 2, 3)
    return x + (a > b) * 1 + (a <= b) * 2 + (a >= b) * 4


@probe(G)
def list_orderings(x):
    a, b = [1, 2], [1, 2, 0]
    return x + (a < b) * 1 + (a > b) * 2 + (a <= b) * 4 + (a >= b) * 8


@probe(G)
def mixed_loop_compare(x):
    for a, b, c in [((1, 2, 3), (1, 2, 3), 1.0), ((1, 4), (1, 2, 3), 2.0), ((0,), (), 3.0)]:
        if a < b:
            x = x + c
        if a >= b:
            x = x - c
    return x


@probe(G)
def size_compare(x):
    return x + (1 if x.shape < (3, 3) else 0) + (2 if x.shape == (2, 3) else 0)


@probe(G)
def version_tuple_compare(x):
    ver = tuple(int(p) for p in "2.1.0".split("."))
    return x + (1 if ver >= (2, 0) else 0)


@probe(G)
def str_compare(x):
    return x + (1 if "abc" < "abd" else 0) + (1 if "b" > "a" else 0)


@probe(G)
def tuple_compare_strings(x):
    return x + (1 if ("a", 1) < ("a", 2) else 0)


@probe(G)
def list_compare_typeerror(x):
    try:
        r = [1, "a"] < [1, 2]
    except TypeError:
        return x - 1
    return x + 1


@probe(G)
def max_of_tuples(x):
    return x + max([(1, 2), (3, 0), (2, 9)])[1]


if __name__ == "__main__":
    main(G)
