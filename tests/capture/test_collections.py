"""Capture: collections.OrderedDict, defaultdict, deque and Counter, dict.fromkeys and namedtuple internals
(capture/values/collections_kinds.py). Made inside, passed in or closed over, each matches eager Python (results and
the mutated arguments) in one graph.
"""

import collections

import jitcore as jit
from tests.support import check_against_eager, randn

Point = collections.namedtuple("Point", ["a", "b"])


def one_graph(fn, *arg_sets):
    check_against_eager(fn, *arg_sets)
    jit.compile(fn, backend="eager", fullgraph=True)(*[a.clone() if hasattr(a, "clone") else a.copy()
                                                       for a in arg_sets[0]])


def test_ordered_dict_keeps_order_moves_to_end_and_pops_either_end():
    def f(x):
        d = collections.OrderedDict(a=1, b=2, c=3)
        d["z"] = x
        d.move_to_end("a")
        d.move_to_end("c", last=False)
        k, v = d.popitem(last=False)
        last = d.popitem()
        return list(d.keys()), k, v, last[0], d["z"] * 2

    one_graph(f, (randn(3, seed=1),))


def test_ordered_dict_passed_in_is_read_and_mutated_like_python():
    def f(x, d):
        out = x
        for k, v in d.items():
            out = out * v
        d.move_to_end("w")
        d["n"] = 3.0
        return out

    one_graph(f, (randn(3, seed=1), collections.OrderedDict(w=2.0, b=1.0)))


def test_defaultdict_factories_fill_missing_keys():
    def f(x):
        lists = collections.defaultdict(list)
        lists["a"].append(x)
        lists["a"].append(x + 1)
        lists["b"]
        counts = collections.defaultdict(int)
        for k in "abca":
            counts[k] += 1
        sevens = collections.defaultdict(lambda: 7)
        return lists, counts["a"] + len(counts) + sevens["missing"] + (counts.get("zz") is None)

    one_graph(f, (randn(3, seed=1),))


def test_defaultdict_passed_in_replays_the_keys_its_factory_added():
    def f(x, d):
        d["z"].append(3)
        d["y"]
        return x + len(d)

    one_graph(f, (randn(3, seed=1), collections.defaultdict(list)))


def test_defaultdict_closed_over_is_mutated_through_the_cell():
    dd = collections.defaultdict(list)

    def f(x):
        dd["a"].append(1)
        dd["b"] += [2, 3]
        return x + len(dd["a"]) + len(dd)

    compiled = jit.compile(f, backend="eager")
    expected = f(randn(3, seed=1))
    eager_state = dict(dd)
    dd.clear()
    actual = compiled(randn(3, seed=1))
    assert dict(dd) == eager_state
    assert (actual == expected).all()


def test_deque_appends_pops_rotates_and_trims_to_maxlen():
    def f(x):
        q = collections.deque([x])
        q.append(x + 1)
        q.appendleft(x - 1)
        bounded = collections.deque(maxlen=2)
        for i in range(5):
            bounded.append(i)
        r = collections.deque([1, 2, 3])
        r.extend([4])
        r.rotate(1)
        return q.popleft() + q.pop() + sum(bounded) + len(bounded) + r[0], list(r)

    one_graph(f, (randn(3, seed=1),))


def test_counter_counts_most_common_and_adds():
    def f(x):
        c = collections.Counter("abracadabra")
        top = collections.Counter([1, 1, 2, 3, 3, 3]).most_common(1)[0][0]
        u = collections.Counter(a=1)
        u.update(["a", "b"])
        both = u + collections.Counter(b=2)
        return x + c["a"] + len(c) + top + both["b"] + u["a"] + c["missing"]

    one_graph(f, (randn(3, seed=1),))


def test_fromkeys_and_namedtuple_internals():
    def f(x):
        d = dict.fromkeys("ab", 0)
        dd = collections.defaultdict.fromkeys("a", 1)
        dd.setdefault("b", 10)
        p = Point._make([x, 2])
        q = p._replace(b=5)
        return p.a * q.b + d["b"] + dd["b"] + len(Point._fields), p._asdict()["b"]

    one_graph(f, (randn(3, seed=1),))
