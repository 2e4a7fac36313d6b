"""itertools: chain, chain.from_iterable, product, combinations, permutations, zip_longest, accumulate, islice,
repeat, count, groupby, starmap, pairwise."""
import itertools
import operator
import torch
from harness import probe, T, main

G = "itertools"


@probe(G)
def chain_lists(x):
    return sum(itertools.chain([x], [x * 2], (x * 3,)))


@probe(G)
def chain_from_iterable(x):
    return x + sum(itertools.chain.from_iterable([[1, 2], [3]]))


@probe(G)
def chain_tensors_list(x):
    return list(itertools.chain([x], [x + 1]))


@probe(G)
def product_basic(x):
    out = x
    for a, b in itertools.product([1, 2], [3, 4]):
        out = out + a * b
    return out


@probe(G)
def product_repeat(x):
    return x + len(list(itertools.product(range(2), repeat=3)))


@probe(G)
def combinations_basic(x):
    return x + sum(a * b for a, b in itertools.combinations([1, 2, 3], 2))


@probe(G)
def combinations_with_replacement(x):
    return x + len(list(itertools.combinations_with_replacement([1, 2, 3], 2)))


@probe(G)
def permutations_basic(x):
    return x + len(list(itertools.permutations(range(3))))


@probe(G)
def zip_longest_fill(x):
    return x, list(itertools.zip_longest([1, 2, 3], ["a"], fillvalue=None))


@probe(G)
def zip_longest_tensors(x):
    out = []
    for a, b in itertools.zip_longest([x, x + 1], [x]):
        out.append(a if b is None else a + b)
    return out


@probe(G)
def accumulate_sum(x):
    return x + list(itertools.accumulate([1, 2, 3]))[-1]


@probe(G)
def accumulate_func(x):
    return x + list(itertools.accumulate([1, 2, 3, 4], operator.mul))[-1]


@probe(G)
def islice_count(x):
    return x + sum(itertools.islice(itertools.count(5), 3))


@probe(G)
def repeat_take(x):
    return sum(itertools.repeat(x, 3))


@probe(G)
def groupby_basic(x):
    total = 0
    for k, g in itertools.groupby("aabbbc"):
        total += len(list(g))
    return x + total


@probe(G)
def starmap_basic(x):
    return x + sum(itertools.starmap(operator.mul, [(1, 2), (3, 4)]))


@probe(G)
def pairwise_basic(x):
    return x + sum(b - a for a, b in itertools.pairwise([1, 4, 9]))


@probe(G)
def cycle_islice(x):
    return x + sum(itertools.islice(itertools.cycle([1, 2]), 5))


@probe(G)
def tee_basic(x):
    a, b = itertools.tee([1, 2, 3])
    return x + sum(a) + sum(b)


if __name__ == "__main__":
    main(G)
