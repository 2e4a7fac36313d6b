"""List methods and aliasing."""
import torch
from harness import probe, T, main

G = "lists"


@probe(G)
def list_methods(x):
    l = [x, x + 1]
    l.append(x + 2)
    l.extend([x + 3])
    l.insert(0, x - 1)
    l.pop(1)
    l.remove(l[0])
    return l


@probe(G)
def list_index_count(x):
    l = [1, 2, 3, 2]
    return x + l.index(3) + l.count(2)


@probe(G)
def list_reverse_sort(x):
    l = [3, 1, 2]
    l.reverse()
    l.sort()
    return x + l[0] * 10 + l[-1]


@probe(G)
def list_mul_add(x):
    l = [0] * 3 + [1]
    return x + len(l) + sum(l)


@probe(G)
def list_copy_independent(x):
    a = [1, 2]
    b = a.copy()
    b.append(3)
    c = list(a)
    c.append(4)
    return x + len(a) + len(b) + len(c)


@probe(G)
def list_aliasing(x):
    a = [1]
    b = a
    b.append(2)
    return x + len(a)


@probe(G, args=lambda: (T(), [1, 2]))
def list_arg_mutation(x, l):
    l.append(3)
    l[0] = 10
    return x + sum(l)


@probe(G, args=lambda: (T(), [T(2, seed=1), T(2, seed=2)]))
def list_of_tensors_arg(x, ts):
    return x.sum() + sum(t.sum() for t in ts)


@probe(G)
def list_grow_while_iter(x):
    l = [1]
    n = 0
    for v in l:
        n += 1
        if len(l) < 5:
            l.append(1)
    return x + n


@probe(G)
def list_clear_del(x):
    l = [1, 2, 3]
    del l[0]
    l.clear()
    return x + len(l)


@probe(G)
def list_in_tensor_identity(x):
    y = x + 1
    l = [y]
    return y + (1 if y in l else 0)


@probe(G)
def list_equality(x):
    return x + ([1, [2]] == [1, [2]]) + ([1] != [2]) * 2


@probe(G)
def list_comprehension_filter(x):
    return [x * i for i in range(5) if i % 2]


@probe(G)
def list_stack_cat(x):
    outs = []
    for i in range(3):
        outs.append(x * i)
    return torch.stack(outs), torch.cat(outs)


@probe(G)
def list_nested_mutation(x):
    m = [[0, 0], [0, 0]]
    m[1][0] = 5
    return x + m[1][0] + sum(map(sum, m))


@probe(G)
def tuple_methods(x):
    t = (1, 2, 2)
    return x + t.index(2) + t.count(2) + len(t + (3,))


@probe(G)
def list_sum_of_shapes(x):
    return x.new_zeros(sum([list(x.shape)], []))


if __name__ == "__main__":
    main(G)
