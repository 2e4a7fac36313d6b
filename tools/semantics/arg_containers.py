"""Sets and deques passed in (read, mutated, written back), collections.Counter, OrderedDict.move_to_end."""
import collections
import torch
from harness import probe, T, main

G = "arg_containers"


@probe(G, args=lambda: (T(), {1, 2, 3}))
def set_arg_read(x, s):
    return x * len(s) + (2 in s), sorted(s)


@probe(G, args=lambda: (T(), {1, 2, 3}))
def set_arg_mutate(x, s):
    s.add(4)
    s.discard(1)
    s |= {9}
    s -= {2}
    return x + len(s)


@probe(G, args=lambda: (T(), {"a", "b"}))
def set_arg_iterate(x, s):
    for k in sorted(s):
        x = x + len(k)
    return x, s == {"a", "b"}, s & {"a"}


@probe(G, args=lambda: (T(), frozenset({1, 2})))
def frozenset_arg(x, s):
    return x + sum(s), s | {3}


@probe(G, args=lambda: (T(), collections.deque([1, 2, 3])))
def deque_arg_read(x, d):
    return x * d[0] + d[-1] + len(d), list(d)


@probe(G, args=lambda: (T(), collections.deque([1, 2, 3], maxlen=4)))
def deque_arg_mutate(x, d):
    d.append(4)
    d.appendleft(0)
    v = d.pop()
    d.rotate(1)
    return x + v + d.popleft()


@probe(G, args=lambda: (T(), collections.deque([T(seed=1), T(seed=2)])))
def deque_of_tensors_arg(x, d):
    d.append(x * 2)
    return sum(d)


@probe(G)
def counter_inside(x):
    c = collections.Counter("abracadabra")
    c.update(["a", "z"])
    return x * c["a"], c.most_common(2), c["missing"], sorted(c.elements())[:3]


@probe(G, args=lambda: (T(), collections.Counter({"a": 1})))
def counter_arg_mutate(x, c):
    c["a"] += 2
    c["b"] += 1
    return x * c["a"] + c.total()


@probe(G)
def counter_arith(x):
    a = collections.Counter(a=3, b=1)
    b = collections.Counter(a=1, b=2)
    return x + (a + b)["a"], dict(a - b), dict(a | b), dict(a & b)


@probe(G, args=lambda: (T(), collections.OrderedDict([("a", 1), ("b", 2), ("c", 3)])))
def ordered_dict_arg_move_to_end(x, d):
    d.move_to_end("a")
    d.move_to_end("c", last=False)
    return x * d["b"], list(d)


@probe(G)
def ordered_dict_move_to_end_inside(x):
    d = collections.OrderedDict.fromkeys("abc", 1)
    d.move_to_end("b")
    d.move_to_end("c", last=False)
    return x + len(d), list(d.keys())


if __name__ == "__main__":
    main(G)
