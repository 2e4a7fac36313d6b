"""types.SimpleNamespace, a C class with CPython's generic attribute slots, is modelled like a Python class's
instance: one made in the call is built in the capture (and rebuilt when returned), one passed in has its
attributes read and written as any object's (guarded, writes replayed); its C `==` is not modelled (a break, never
identity).
"""

import types

import torch

from tests.support import CountingBackend, both_doors, check_against_eager, outcome, randn


def made_inside(x):
    ns = types.SimpleNamespace(scale=2.0, shift=x.mean())
    ns.extra = 3
    return x * ns.scale + ns.shift + ns.extra


def returned(x):
    ns = types.SimpleNamespace(value=x + 1, name="n")
    return ns


def test_a_namespace_made_inside_is_one_graph():
    check_against_eager(made_inside, (randn(3, seed=1),), (randn(3, seed=2),), expected_graphs=1)


def test_a_returned_namespace_is_rebuilt_with_its_attributes():
    counting = CountingBackend()
    with both_doors(returned, counting) as doors:
        for door in doors:
            x = randn(3, seed=1)
            for _ in range(2):
                got = door(x)
            assert type(got) is types.SimpleNamespace
            assert got.name == "n" and torch.equal(got.value, x + 1)
    assert counting.graph_count == 2  # one per door: the compiled copy and the registered function


def test_a_namespace_passed_in_is_read_and_written():
    def f(x, ns):
        ns.calls += 1
        return x * ns.scale

    counting = CountingBackend()
    with both_doors(f, counting) as doors:
        for door in doors:
            ns = types.SimpleNamespace(scale=3.0, calls=0)
            for _ in range(3):
                assert torch.equal(door(torch.ones(2), ns), torch.full((2,), 3.0))
            assert ns.calls == 3
            ns.scale = 5.0  # a changed attribute is seen
            assert torch.equal(door(torch.ones(2), ns), torch.full((2,), 5.0))
    # per door one graph (no break at the write), and at most one more for the new scale
    assert 2 <= counting.graph_count <= 4


def test_namespace_equality_compares_attributes():
    def f(x):
        a = types.SimpleNamespace(k=1)
        b = types.SimpleNamespace(k=1)
        return x + 1, a == b, a is b

    counting = CountingBackend()
    with both_doors(f, counting) as doors:
        for door in doors:
            assert outcome(door, torch.ones(2))[1][1:] == (True, False)
