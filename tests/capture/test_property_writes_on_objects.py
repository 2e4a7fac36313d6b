"""Assigning or deleting a property of an object that existed before the call inlines the property's Python
setter or deleter (its own writes are recorded and replayed like any), in one graph; a property without one
raises AttributeError as Python does.
"""

import torch

from tests.support import CountingBackend, both_doors, outcome


class Holder:
    def __init__(self):
        self._v = 1
        self.log = []

    @property
    def v(self):
        return self._v

    @v.setter
    def v(self, value):
        self.log.append(("set", value))
        self._v = value

    @v.deleter
    def v(self):
        self.log.append("del")
        self._v = 0

    @property
    def frozen(self):
        return 5


def set_and_delete(x, holder):
    holder.v = 4
    y = x * holder.v
    del holder.v
    return y + holder.v


def test_property_setter_and_deleter_are_inlined_in_one_graph():
    counting = CountingBackend()
    with both_doors(set_and_delete, counting) as doors:
        expected_holder = Holder()
        expected = set_and_delete(torch.ones(2), expected_holder)
        for door in doors:
            for _ in range(2):
                holder = Holder()
                assert torch.equal(door(torch.ones(2), holder), expected)
                assert holder._v == 0 and holder.log == expected_holder.log
    assert counting.graph_count == 2  # one per door


def test_a_property_without_a_deleter_raises_as_python_does():
    def f(x, holder):
        y = x + 1
        del holder.frozen
        return y

    with both_doors(f, CountingBackend()) as doors:
        expected = outcome(f, torch.ones(2), Holder())
        assert expected[0] == "raised"
        for door in doors:
            assert outcome(door, torch.ones(2), Holder()) == expected
