"""collections: OrderedDict, defaultdict (closed over / passed in), deque, Counter, namedtuple internals, ChainMap."""
import collections
import typing
import torch
from harness import probe, T, main

G = "collections"

DD_GLOBAL = collections.defaultdict(list)


def _reset_dd():
    DD_GLOBAL.clear()


def _snap_dd():
    return dict(DD_GLOBAL)


@probe(G)
def ordered_dict_build(x):
    d = collections.OrderedDict()
    d["b"] = x
    d["a"] = x + 1
    return list(d.keys()), d["a"]


@probe(G)
def ordered_dict_move_to_end(x):
    d = collections.OrderedDict(a=1, b=2, c=3)
    d.move_to_end("a")
    return x + list(d)[-1].__len__() + list(d.values())[0]


@probe(G)
def ordered_dict_popitem(x):
    d = collections.OrderedDict(a=1, b=2)
    k, v = d.popitem(last=False)
    return x + v + len(d)


@probe(G, args=lambda: (T(), collections.OrderedDict(w=2.0, b=1.0)))
def ordered_dict_passed(x, d):
    out = x
    for k, v in d.items():
        out = out * v
    return out


@probe(G)
def defaultdict_list(x):
    d = collections.defaultdict(list)
    d["a"].append(x)
    d["a"].append(x + 1)
    d["b"]
    return d


@probe(G)
def defaultdict_int_count(x):
    d = collections.defaultdict(int)
    for k in "abca":
        d[k] += 1
    return x + d["a"] + len(d)


@probe(G)
def defaultdict_lambda_factory(x):
    d = collections.defaultdict(lambda: 7)
    return x + d["missing"]


@probe(G, state=(_reset_dd, _snap_dd))
def defaultdict_global_mutation(x):
    DD_GLOBAL["k"].append(1)
    return x + len(DD_GLOBAL["k"])


@probe(G, args=lambda: (T(), collections.defaultdict(list)))
def defaultdict_passed_in(x, d):
    d["z"].append(3)
    d["y"]
    return x + len(d)


@probe(G)
def defaultdict_closure(x):
    d = collections.defaultdict(list)

    def add(k, v):
        d[k].append(v)

    add("a", x)
    add("a", x * 2)
    return sum(d["a"])


@probe(G)
def defaultdict_setdefault_fromkeys(x):
    d = collections.defaultdict.fromkeys("a", 1)
    d.setdefault("b", 10)
    return x + d["b"] + d["a"]


@probe(G)
def defaultdict_get_no_default(x):
    d = collections.defaultdict(int)
    return x + (1 if d.get("a") is None else 0) + len(d)


@probe(G)
def deque_basic(x):
    q = collections.deque([x])
    q.append(x + 1)
    q.appendleft(x - 1)
    return q.popleft() + q.pop()


@probe(G)
def deque_maxlen(x):
    q = collections.deque(maxlen=2)
    for i in range(5):
        q.append(i)
    return x + sum(q) + len(q)


@probe(G)
def deque_rotate_extend(x):
    q = collections.deque([1, 2, 3])
    q.extend([4])
    q.rotate(1)
    return x + q[0]


@probe(G)
def counter_basic(x):
    c = collections.Counter("abracadabra")
    return x + c["a"] + len(c)


@probe(G)
def counter_most_common(x):
    c = collections.Counter([1, 1, 2, 3, 3, 3])
    return x + c.most_common(1)[0][0]


@probe(G)
def counter_update_arith(x):
    c = collections.Counter(a=1)
    c.update(["a", "b"])
    c2 = c + collections.Counter(b=2)
    return x + c2["b"] + c["a"]


def _make_dd_closure():
    dd = collections.defaultdict(list)

    def fn(x):
        dd["a"].append(1)
        dd["b"] += [2, 3]
        return x + len(dd["a"]) + len(dd)

    return fn, dd


_DD_FN, _DD_CELL = _make_dd_closure()


@probe(G, state=(_DD_CELL.clear, lambda: dict(_DD_CELL)), name="defaultdict_closed_over_mutation")
def _dd_closed(x):
    return _DD_FN(x)


NT = collections.namedtuple("NT", ["a", "b"])
NTD = collections.namedtuple("NTD", "a b c", defaults=(3,))


class TNT(typing.NamedTuple):
    h: torch.Tensor
    n: int = 1


@probe(G)
def namedtuple_build_access(x):
    p = NT(x, 2)
    return p.a * p.b + p[0]


@probe(G)
def namedtuple_replace(x):
    p = NT(x, 2)
    q = p._replace(b=5)
    return q.a * q.b


@probe(G)
def namedtuple_fields_asdict(x):
    p = NT(x, 2)
    d = p._asdict()
    return x + len(NT._fields) + d["b"]


@probe(G)
def namedtuple_make(x):
    p = NT._make([x, 3])
    return p.a + p.b


@probe(G)
def namedtuple_defaults(x):
    p = NTD(x, 1)
    return p.a + p.c + len(NTD._field_defaults)


@probe(G)
def namedtuple_unpack_len(x):
    a, b = NT(x, 1)
    return a + b + len(NT(1, 2))


@probe(G)
def typing_namedtuple(x):
    t = TNT(x)
    return t.h * t.n + TNT(x, 3).n


@probe(G)
def namedtuple_return(x):
    return NT(x + 1, x * 2)


@probe(G)
def namedtuple_isinstance(x):
    p = NT(1, 2)
    return x + isinstance(p, tuple) + isinstance(p, NT) * 2


@probe(G)
def chainmap(x):
    c = collections.ChainMap({"a": 1}, {"a": 2, "b": 3})
    return x + c["a"] + c["b"]


if __name__ == "__main__":
    main(G)
