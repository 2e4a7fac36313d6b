"""Strings: f-strings, str.format, %-formatting, methods (join/split/replace/startswith), string keys built at runtime."""
import torch
from harness import probe, T, main

G = "strings"


@probe(G)
def fstring_key(x):
    d = {}
    for i in range(2):
        d[f"layer_{i}"] = x * i
    return d["layer_1"]


@probe(G)
def fstring_format_spec(x):
    s = f"{3.14159:.2f}|{7:03d}|{'ab'!r}"
    return x + len(s)


@probe(G)
def fstring_of_shape(x):
    s = f"shape={tuple(x.shape)}"
    return x + len(s)


@probe(G)
def str_format_method(x):
    s = "{}-{name}".format(1, name="a")
    return x + len(s)


@probe(G)
def percent_format(x):
    s = "%s_%d_%.1f" % ("a", 3, 2.5)
    return x + len(s)


@probe(G)
def str_join_split(x):
    parts = "a.b.c".split(".")
    return x + len(parts) + len("-".join(parts))


@probe(G)
def str_replace_strip(x):
    s = "  Hello ".strip().replace("l", "L").lower()
    return x + len(s) + (1 if s == "hello" else 0)


@probe(G)
def str_startswith_endswith(x):
    name = "encoder.layer.0.weight"
    return x + name.startswith("encoder") + name.endswith(("bias", "weight")) * 2


@probe(G)
def str_in_and_find(x):
    s = "attention"
    return x + ("ten" in s) + s.find("t") + s.count("t")


@probe(G)
def str_isdigit_upper(x):
    return x + "12".isdigit() + "ab".upper().isupper() * 2


@probe(G)
def str_rsplit_partition(x):
    a, _, b = "model.layer.weight".rpartition(".")
    return x + len(a) + len(b) + len("a.b.c".rsplit(".", 1))


@probe(G)
def str_concat_loop(x):
    s = ""
    for c in "abc":
        s += c * 2
    return x + len(s)


@probe(G)
def str_index_slice(x):
    s = "abcdef"
    return x + len(s[1:4]) + ord(s[-1])


@probe(G)
def getattr_by_built_name(x):
    name = "s" + "in"
    return getattr(torch, name)(x)


@probe(G)
def str_of_tensor_shape_dims(x):
    return x + len("x".join(str(d) for d in x.shape))


@probe(G)
def str_zfill_center(x):
    return x + len("7".zfill(3)) + len("a".center(5))


@probe(G)
def str_encode_len(x):
    return x + len("héllo".encode("utf-8"))


@probe(G)
def fstring_of_tensor(x):
    s = f"{x}"
    return x + (1 if "tensor" in s else 0)


if __name__ == "__main__":
    main(G)
