"""Slicing and indexing of Python sequences and tensors."""
import torch
from harness import probe, T, main

G = "slicing"


@probe(G)
def list_slice_step(x):
    l = [x * i for i in range(6)]
    return l[1:5:2]


@probe(G)
def list_negative_slice(x):
    l = [1, 2, 3, 4]
    return x + sum(l[-2:]) + sum(l[::-1][:1])


@probe(G)
def list_slice_assign(x):
    l = [1, 2, 3, 4]
    l[1:3] = [9]
    return x + sum(l) + len(l)


@probe(G)
def list_slice_delete(x):
    l = [1, 2, 3, 4]
    del l[::2]
    return x + sum(l)


@probe(G)
def tuple_slice(x):
    t = (x, x + 1, x + 2)
    return t[1:]


@probe(G)
def str_slice(x):
    return x + len("hello"[::2])


@probe(G)
def shape_slice(x):
    return x.reshape(*x.shape[:-1], 3, 1)


@probe(G)
def tensor_ellipsis_none(x):
    return x[..., None, 1:]


@probe(G)
def tensor_index_list(x):
    return x[:, [0, 2]]


@probe(G)
def tensor_bool_mask(x):
    return x[x > 0]


@probe(G)
def tensor_setitem_slice(x):
    y = x.clone()
    y[:, 1:] = 0
    return y


@probe(G)
def slice_object_indices(x):
    s = slice(None, None, -1)
    return x + len(range(10)[s]) + slice(1, 5).indices(3)[1]


@probe(G)
def tensor_index_with_tensor(x):
    idx = torch.tensor([1, 0])
    return x[idx]


@probe(G)
def list_index_with_tensor(x):
    l = [x, x + 1, x + 2]
    return l[torch.tensor(1)]


@probe(G)
def unpack_star(x):
    a, *rest = [x, x + 1, x + 2]
    *init, last = (1, 2, 3)
    return a + sum(rest) + last + len(init)


@probe(G)
def tensor_unbind_unpack(x):
    a, b = x
    return a - b


if __name__ == "__main__":
    main(G)
