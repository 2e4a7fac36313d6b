"""NumPy interop: Tensor.numpy(), np functions / ndarray methods, np.finfo, dtypes, torch.from_numpy."""
import numpy as np
import torch
from harness import probe, T, main

G = "numpy"


@probe(G)
def np_roundtrip(x):
    a = x.numpy()
    return torch.from_numpy(a * 2 + 1)


@probe(G)
def np_functions(x):
    a = x.numpy()
    return torch.from_numpy(np.exp(a) + np.sin(a))


@probe(G)
def np_ndarray_methods(x):
    a = x.numpy()
    return torch.from_numpy(a.sum(axis=1) + a.mean())


@probe(G)
def np_reshape_transpose(x):
    a = x.numpy().reshape(3, 2).T
    return torch.as_tensor(a.copy())


@probe(G)
def np_finfo(x):
    eps = np.finfo(np.float32).eps
    return x + eps


@probe(G)
def np_finfo_torch(x):
    return x.clamp(min=torch.finfo(x.dtype).min / 2, max=torch.finfo(x.dtype).max / 2) + torch.finfo(torch.float16).eps


@probe(G)
def np_iinfo(x):
    return x + np.iinfo(np.int8).max


@probe(G)
def np_dtype_compare(x):
    a = x.numpy()
    return x + (1 if a.dtype == np.float32 else 2)


@probe(G)
def np_scalar_math(x):
    return x * np.sqrt(2.0) + np.pi


@probe(G)
def np_array_const(x):
    w = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    return x * torch.from_numpy(w)


@probe(G)
def np_arange_linspace(x):
    return x + torch.tensor(np.arange(3), dtype=x.dtype)


@probe(G)
def np_from_tensor_ops(x):
    a = np.asarray(x)
    b = np.maximum(a, 0)
    return torch.tensor(b)


@probe(G)
def np_shape_attrs(x):
    a = x.numpy()
    return x + a.shape[0] + a.ndim + a.size


@probe(G)
def np_where_clip(x):
    a = x.numpy()
    return torch.from_numpy(np.where(a > 0, a, 0.0).clip(-1, 1))


@probe(G)
def np_concat(x):
    a = x.numpy()
    return torch.from_numpy(np.concatenate([a, a], axis=0))


@probe(G)
def np_prod_of_shape(x):
    return x.reshape(-1) * int(np.prod(x.shape))


@probe(G)
def np_int_cast(x):
    return x + int(np.int64(3)) + float(np.float32(0.5))


@probe(G)
def np_random_seeded(x):
    rs = np.random.RandomState(0)
    return x + torch.from_numpy(rs.rand(2, 3).astype(np.float32))


def A(*shape, dtype=np.float64):
    return (np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) - 2).astype(dtype)


@probe(G, args=lambda: (A(2, 3),))
def np_arg_inplace(a):
    a += 1
    a[0, 0] = 7
    return a


@probe(G, args=lambda: (A(2, 3, dtype=np.float32),))
def np_arg_returns_array_and_scalar(a):
    b = a * 2
    return b, b.sum(), b[0, 1]


@probe(G, args=lambda: (A(2, 3),))
def np_view_write_reaches_arg(a):
    b = a.T
    b[0, 1] = 5.0
    return b.mean()


@probe(G, args=lambda: (A(2, 3, dtype=np.int64),))
def np_int_promotion(a):
    return a / 2, a + 1.5, a + np.float32(1), np.sqrt(a)


@probe(G)
def np_asarray_shares_memory(x):
    a = np.asarray(x)
    a[0] = 5.0
    return x + 1


@probe(G)
def np_random_randn_inside(x):
    a = np.random.randn(2, 3)
    return x + 1, a.shape


@probe(G, args=lambda: (T(), A(2, 3, dtype=np.float32)))
def np_tensor_plus_array(x, a):
    return x + torch.from_numpy(a) * 2


@probe(G, args=lambda: (A(2, 3),))
def np_copy_not_view(a):
    f = a.flatten()
    f[0] = 100.0
    return a, f


if __name__ == "__main__":
    main(G)
