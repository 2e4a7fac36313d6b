"""operator.itemgetter / attrgetter / methodcaller and `in` on module and parameter containers."""
import operator
import torch
from torch import nn
from harness import probe, T, main

G = "getters"


@probe(G)
def itemgetter_made_inside(x):
    pairs = [(3, "c"), (1, "a"), (2, "b")]
    first, second = operator.itemgetter(0), operator.itemgetter(1, 0)
    return x * first(pairs[0]), second(pairs[1]), sorted(pairs, key=operator.itemgetter(0))


@probe(G, args=lambda: (T(), operator.itemgetter(1)))
def itemgetter_passed_in(x, g):
    return g([x, x * 2, x * 3])


@probe(G)
def itemgetter_on_dict_and_tensor(x):
    return operator.itemgetter("a")({"a": x}) + operator.itemgetter(0)(x)


class _Inner:
    v = 2


class _Outer:
    def __init__(self):
        self.inner = _Inner()
        self.w = 3


@probe(G, args=lambda: (T(), _Outer()))
def attrgetter_dotted(x, ns):
    return x * operator.attrgetter("inner.v")(ns) + operator.attrgetter("w", "inner.v")(ns)[0]


@probe(G, args=lambda: (T(), operator.attrgetter("shape")))
def attrgetter_passed_in_on_tensor(x, g):
    return x.sum() + g(x)[0]


@probe(G)
def methodcaller_inside(x):
    up = operator.methodcaller("upper")
    add = operator.methodcaller("add", 2, alpha=3)
    return add(x), up("abc")


@probe(G, args=lambda: (T(), operator.methodcaller("mul", 4)))
def methodcaller_passed_in(x, m):
    return m(x) + 1


def _containers():
    torch.manual_seed(0)
    md = nn.ModuleDict({"a": nn.Linear(3, 3), "b": nn.ReLU()})
    ml = nn.ModuleList([nn.Linear(3, 3), nn.Tanh()])
    pd = nn.ParameterDict({"w": nn.Parameter(torch.ones(3))})
    pl = nn.ParameterList([nn.Parameter(torch.ones(3))])
    return T(), md, ml, pd, pl


@probe(G, args=_containers)
def in_module_dict(x, md, ml, pd, pl):
    if "a" in md:
        x = md["a"](x)
    if "zz" not in md:
        x = x + 1
    return x


@probe(G, args=_containers)
def in_module_list(x, md, ml, pd, pl):
    layer = ml[1]
    return x + (layer in ml) + (md["a"] in ml)


@probe(G, args=_containers)
def in_parameter_dict(x, md, ml, pd, pl):
    if "w" in pd and "v" not in pd:
        x = x * pd["w"]
    return x


@probe(G, args=_containers)
def in_parameter_list(x, md, ml, pd, pl):
    return x + (pl[0] in pl)


@probe(G)
def in_module_dict_made_inside(x):
    md = nn.ModuleDict({"act": nn.ReLU()})
    return md["act"](x) if "act" in md else x


if __name__ == "__main__":
    main(G)
