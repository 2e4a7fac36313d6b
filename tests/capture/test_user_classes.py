"""Capture: instances of user classes defined outside and made or passed in: dataclasses (fields, asdict, replace,
frozen ones raising FrozenInstanceError), `__slots__`, `__getattr__` fallbacks, `o.__dict__`, properties and
class/static methods, `__class__` reassigned between calls. Each compared with eager through both doors; one graph
where the behaviour is pure Python around tensor ops."""

import dataclasses

import pytest
import torch

import jitcore as jit
from tests.support import (CountingBackend, assert_same, both_doors, check_against_eager,
                           check_registered_against_eager, outcome, randn)


@pytest.fixture(autouse=True)
def _strict(monkeypatch):
    # a fault of jitcore raises instead of falling back natively (which would still give eager's results)
    monkeypatch.setattr(jit.config, "strict", True)


@dataclasses.dataclass
class Config:
    w: float
    n: int = 2
    tags: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class Frozen:
    a: int
    b: int = 1


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a):
        self.a = a


class Lazy:
    def __init__(self):
        self.real = 2

    def __getattr__(self, name):
        return len(name)


class Shape:
    unit = 3

    def __init__(self, side):
        self._side = side

    @property
    def area(self):
        return self._side * self._side

    @classmethod
    def square(cls, side):
        return cls(side)

    @staticmethod
    def scale(t):
        return t * Shape.unit


def dataclass_fields_asdict_replace(x):
    d = Config(1.0, 3)
    d.tags.append(4)
    e = dataclasses.replace(d, n=5)
    names = [f.name for f in dataclasses.fields(d)]
    return x * d.w + e.n + len(names) + dataclasses.asdict(d)["n"], names, e


def test_dataclass_fields_asdict_and_replace():
    counting = check_against_eager(lambda x: dataclass_fields_asdict_replace(x)[:2], (randn(3),))
    assert counting.graph_count == 1
    check_registered_against_eager(lambda x: dataclass_fields_asdict_replace(x)[:2], (randn(3),))
    with both_doors(dataclass_fields_asdict_replace) as doors:
        for door in doors:
            assert door(randn(3))[2] == dataclass_fields_asdict_replace(randn(3))[2]


def frozen_write_caught(x):
    f = Frozen(2)
    try:
        f.a = 5
    except dataclasses.FrozenInstanceError:
        return x + f.a
    return x


def frozen_write_raises(x):
    f = Frozen(2)
    f.b = x
    return x


def test_a_frozen_dataclass_raises_frozen_instance_error():
    counting = check_against_eager(frozen_write_caught, (randn(3),))
    assert counting.graph_count == 1
    check_registered_against_eager(frozen_write_caught, (randn(3),))
    with both_doors(frozen_write_raises) as doors:
        for door in doors:
            assert outcome(door, randn(3)) == outcome(frozen_write_raises, randn(3))


def dataclass_passed_in(x, cfg):
    return x * cfg.w + cfg.n, dataclasses.asdict(cfg)


def test_a_dataclass_passed_in():
    check_against_eager(dataclass_passed_in, (randn(3), Config(2.0, 4)), (randn(3), Config(3.0, 1)),
                        expected_graphs=None)
    check_registered_against_eager(dataclass_passed_in, (randn(3), Config(2.0, 4)))


def slots_object(x):
    s = Slotted(3)
    s.a += 1
    s.b = x.sum()
    return x + s.a + s.b, hasattr(s, "a"), s


def slots_missing_attribute(x):
    s = Slotted(1)
    s.c = 2
    return x


def test_slots_objects():
    counting = check_against_eager(lambda x: slots_object(x)[:2], (randn(3),))
    assert counting.graph_count == 1
    check_registered_against_eager(lambda x: slots_object(x)[:2], (randn(3),))
    with both_doors(slots_object) as doors:
        for door in doors:
            x = randn(3)
            got = door(x)[2]
            assert type(got) is Slotted and got.a == 4
            assert_same(got.b, x.sum())
    with both_doors(slots_missing_attribute) as doors:
        for door in doors:
            assert outcome(door, randn(3)) == outcome(slots_missing_attribute, randn(3))


def getattr_fallback(x):
    lazy = Lazy()
    return x + lazy.abcd + lazy.real + getattr(lazy, "xy", 0) + hasattr(lazy, "anything")


def test_getattr_fallback_on_an_object_made_inside():
    counting = check_against_eager(getattr_fallback, (randn(3),))
    assert counting.graph_count == 1
    check_registered_against_eager(getattr_fallback, (randn(3),))


def instance_dict(x):
    s = Shape(2)
    s.extra = 1
    s.__dict__["more"] = 4
    d = vars(s)
    return x + len(s.__dict__) + ("extra" in d) + s.more, s, d


def test_the_dict_of_an_object_made_inside_is_live():
    counting = check_against_eager(lambda x: instance_dict(x)[0], (randn(3),))
    assert counting.graph_count == 1
    with both_doors(instance_dict) as doors:
        for door in doors:
            _, s, d = door(randn(3))
            assert d is s.__dict__ and d == {"_side": 2, "extra": 1, "more": 4}


def properties_and_class_methods(x):
    s = Shape.square(2)
    return Shape.scale(x) + s.area + s.unit


def test_properties_classmethods_staticmethods():
    counting = check_against_eager(properties_and_class_methods, (randn(3),))
    assert counting.graph_count == 1
    check_registered_against_eager(properties_and_class_methods, (randn(3),))


class Other(Shape):
    @property
    def area(self):
        return -1


def reads_area(x, shape):
    return x + shape.area


def test_class_reassigned_on_an_instance_between_calls():
    counting = CountingBackend()
    with both_doors(reads_area, counting) as doors:
        for door in doors:
            s = Shape(3)
            assert_same(door(randn(3), s), reads_area(randn(3), s))
            s.__class__ = Other
            assert_same(door(randn(3), s), reads_area(randn(3), s))


def reassigns_class(x, shape):
    shape.__class__ = Other
    return x + shape.area


def test_class_reassigned_inside():
    with both_doors(reassigns_class) as doors:
        for door in doors:
            a, b = Shape(2), Shape(2)
            assert_same(reassigns_class(randn(3), a), door(randn(3), b))
            assert type(a) is type(b) is Other


def module_with_parameters_inside(x):
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 2)
    return lin(x), torch.randn(2)


def test_a_module_with_parameters_made_inside_draws_the_same_random_numbers():
    with both_doors(module_with_parameters_inside) as doors:
        for door in doors:
            x = randn(4, 3)
            assert_same(module_with_parameters_inside(x), door(x))



class HookedConfig:
    """Every attribute hook in Python at once: __getattribute__ maps aliases, __getattr__ answers missing names,
    __setattr__ validates."""

    aliases = {"width": "hidden"}

    def __init__(self, hidden, scale):
        self.hidden = hidden
        self.scale = scale

    def __getattribute__(self, name):
        name = object.__getattribute__(self, "aliases").get(name, name)
        return object.__getattribute__(self, name)

    def __getattr__(self, name):
        if name.startswith("use_"):
            return False
        raise AttributeError(name)

    def __setattr__(self, name, value):
        if name == "hidden" and value <= 0:
            raise ValueError("hidden must be positive")
        super().__setattr__(name, value)


def hooked_config(x):
    cfg = HookedConfig(3, 2.0)
    cfg.__dict__["extra"] = 1
    try:
        cfg.hidden = -1
    except ValueError:
        x = x + 1
    y = x * cfg.width * cfg.scale + cfg.extra
    if not cfg.use_bias and hasattr(cfg, "hidden") and not hasattr(cfg, "missing"):
        y = y - 1
    return y, cfg.hidden, sorted(vars(cfg))


def test_all_attribute_hooks_on_one_object_made_inside():
    # the Python __getattribute__ inlined (with object.__getattribute__ called unbound), __getattr__ after it, a
    # validating __setattr__ whose error is caught, a live __dict__: one graph
    counting = check_against_eager(hooked_config, (randn(3),))
    assert counting.graph_count == 1
    check_registered_against_eager(hooked_config, (randn(3),))


class SlotsAndDict:
    __slots__ = ("scale", "__dict__")

    def __init__(self, scale):
        self.scale = scale
        self.hidden = 3


def slots_beside_a_dict(x):
    obj = SlotsAndDict(2.0)
    return x * obj.scale * obj.hidden, sorted(vars(obj))


def test_the_dict_of_an_object_with_slots_holds_only_the_dict_attributes():
    # the slot is not in vars(obj) (a clean break where the model cannot tell them apart)
    check_against_eager(slots_beside_a_dict, (randn(3),), expected_graphs=None)
    check_registered_against_eager(slots_beside_a_dict, (randn(3),))
