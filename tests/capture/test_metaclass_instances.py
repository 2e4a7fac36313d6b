"""Instances of classes whose metaclass only hooks class creation or class attribute writes (a metaclass whose
`__setattr__` wraps each `__init__` the class is given, as a dataclass decorator sets it) are made inside the graph
like those of plain classes; a metaclass that changes calling the class (`__call__`) still breaks there, and the
result is eager's."""
import dataclasses
import functools
from collections import OrderedDict

from tests.support import check_against_eager, randn


class _RenamingMeta(type):
    def __setattr__(cls, name, value):
        if name == "__init__":
            init = value

            @functools.wraps(init)
            def __init__(self, *args, **kwargs):
                if "old" in kwargs:
                    kwargs["new"] = kwargs.pop("old")
                init(self, *args, **kwargs)
            value = __init__
        super().__setattr__(name, value)


class Output(OrderedDict, metaclass=_RenamingMeta):
    def __post_init__(self):
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if value is not None:
                self[field.name] = value


@dataclasses.dataclass
class HiddenOutput(Output):
    hidden: object = None
    new: object = None


class Plain(metaclass=_RenamingMeta):
    def __init__(self, scale):
        self.scale = scale


class _Counting(type):
    calls = 0

    def __call__(cls, *args, **kwargs):
        _Counting.calls += 1
        return super().__call__(*args, **kwargs)


class Counted(metaclass=_Counting):
    def __init__(self, x):
        self.x = x


def make_output(x):
    out = HiddenOutput(hidden=x * 2, old=x + 1)
    return out["hidden"] + out.new, list(out.keys())


def make_plain(x):
    return x * Plain(3).scale


def make_counted(x):
    return Counted(x * 2).x + 1


def test_dataclass_output_under_a_setattr_metaclass_is_one_graph():
    check_against_eager(make_output, (randn(3),), (randn(3, seed=1),))


def test_plain_class_under_a_setattr_metaclass_is_one_graph():
    check_against_eager(make_plain, (randn(3),))


def test_metaclass_call_still_runs_in_python():
    before = _Counting.calls
    check_against_eager(make_counted, (randn(3),), expected_graphs=2)
    assert _Counting.calls - before == 4  # twice eager, twice compiled: the metaclass's __call__ ran each time
