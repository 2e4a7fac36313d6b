"""str(), repr(), format(), f-strings and %-formatting of Python values known at capture."""
import torch
from harness import probe, T, main

G = "formatting"


@probe(G)
def str_repr_of_numbers(x):
    n, f, b = x.shape[0], 2.5, True
    return x, str(n), repr(f), str(b), repr(None), str(-0.0), repr(1e20)


@probe(G)
def str_repr_of_containers(x):
    t = (1, "a", 2.0)
    return x, str(t), repr([1, [2, 3]]), str({"k": (1,)}), repr((5,))


@probe(G)
def str_of_size_dtype_device(x):
    return x, str(x.shape), repr(x.size()), str(x.dtype), repr(x.dtype), str(x.device), repr(x.device)


@probe(G)
def fstring_specs(x):
    v = 3.14159
    n = x.shape[1]
    return x, f"{v:.3f}|{n:>5}|{n:03d}|{v:e}|{n:x}|{v:10.2f}|{'s':^7}|{n:+}"


@probe(G)
def fstring_conversions(x):
    s = "q"
    return x, f"{s!r} {s!s} {(1, 2)!r} {x.dtype!s} {x.shape!r}"


@probe(G)
def percent_formatting(x):
    return x, "%d-%s-%.2f-%r-%5s" % (x.shape[0], "a", 1.5, "b", x.dim()), "%(a)s" % {"a": 3}


@probe(G)
def format_builtin_and_method(x):
    return x, format(2.0 / 3, ".4f"), format(255, "#x"), "{:>4}|{}|{k}".format(7, x.shape, k=x.dtype)


@probe(G)
def join_values(x):
    return x, "-".join(str(d) for d in x.shape), ",".join(map(str, [1, 2.5, True]))


@probe(G)
def string_as_dict_key(x):
    table = {f"layer{i}": i for i in range(3)}
    return x * table[f"layer{x.dim()}"]


@probe(G)
def fstring_of_tuple_and_size(x):
    shape = tuple(x.shape)
    return x + 1, f"{shape}", f"{x.shape}", str(x.size(0) * 2)


@probe(G)
def str_of_float_arith(x):
    scale = x.shape[1] / 7
    return x * scale, str(scale), repr(round(scale, 3)), f"{scale}"


if __name__ == "__main__":
    main(G)
