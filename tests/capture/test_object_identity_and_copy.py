"""id() while tracing and copy.copy / copy.deepcopy of Python objects inside compiled code.

`id(x)` is a token compared by identity (values/object_id.py, Note [id() while tracing]): `id(a) == id(b)`, `in`
a set or dict of ids, and the memo of copy.deepcopy, whose Python is traced (with `object.__reduce_ex__`,
`copyreg.__newobj__` and `obj.__dict__` of objects made in the call modelled) so a config deep-copied in `forward`
(Hugging Face T5 and BART's `get_text_config`) stays in one graph. What cannot be known (whether two equal ints
are one object) or is customised (a class's own __reduce__) is a graph break that gives eager's result.
"""

import copy
import dataclasses

import pytest
import torch

import jitcore as jit
from tests.support import CountingBackend, check_against_eager, check_registered_against_eager, randn


class Config:
    def __init__(self):
        self.scale = 2
        self.layers = [1, 2, {"heads": 4}]
        self.name = "base"
        self.pair = (1, (2, 3))


class StrictConfig:
    """Attribute hooks written in Python (as transformers' configs have): a validating __setattr__ and a
    __getattribute__ that maps names."""

    aliases = {"hidden": "width"}

    def __init__(self, width):
        self.width = width
        self.notes = ["made"]

    def __getattribute__(self, name):
        if name != "aliases" and name in super().__getattribute__("aliases"):
            name = super().__getattribute__("aliases")[name]
        return super().__getattribute__(name)

    def __setattr__(self, name, value):
        if name == "width" and value < 0:
            raise ValueError("width must be positive")
        super().__setattr__(name, value)


@dataclasses.dataclass
class Options:
    factor: float = 1.5
    tags: list = dataclasses.field(default_factory=lambda: ["a"])


class OwnReduce:
    def __init__(self, v):
        self.v = v

    def __reduce__(self):
        return (OwnReduce, (self.v + 1,))


CONFIG = Config()


def deepcopy_config_passed_in(x, config):
    c = copy.deepcopy(config)
    c.scale = 5
    c.layers[2]["heads"] = 8
    return x * c.scale + c.layers[2]["heads"] + config.layers[2]["heads"], c.pair, config.layers, c is config


def deepcopy_keeps_sharing(x):
    shared = [1, 2]
    d = {"a": shared, "b": shared, "t": (shared, 3)}
    e = copy.deepcopy(d)
    e["a"].append(9)
    return x + len(e["b"]) + len(e["t"][0]) + len(shared), e["a"] is e["b"], e["a"] is shared


def copy_shallow(x):
    d = {"a": [1], "n": 2}
    s = copy.copy(d)
    s["n"] = 3
    s["a"].append(2)
    lst = copy.copy([1, 2])
    return x + d["n"] + len(d["a"]) + s["n"] + len(lst), s is d


def deepcopy_made_inside(x):
    opts = copy.deepcopy(Options())
    opts.tags.append("b")
    strict = copy.deepcopy(StrictConfig(3))
    strict.width = 4
    return x * opts.factor + len(opts.tags) + strict.hidden + len(strict.notes), opts.tags


def ids_of_fresh_objects(x):
    a, b = [1], {"k": 1}
    seen = {id(a)}
    memo = {id(b): "b"}
    return (x + 1, id(a) == id(a), id(a) == id(b), id(a) in seen, id(b) in seen, memo[id(b)],
            id(a) != id(b), a is b, bool(id(a)))


def id_returned_with_its_object(x):
    a = [x.shape[0]]
    return x + 1, a, id(a)


def ids_of_equal_ints(x, n):
    m = n + 0
    return x + 1, id(n) == id(m)


def copy_with_own_reduce(x):
    c = copy.copy(OwnReduce(2))
    return x + c.v


def deepcopy_of_tensors_in_a_dict(x):
    d = copy.deepcopy({"w": x, "n": 1})
    d["w"].add_(1)
    return x + d["n"], d["w"]


@pytest.mark.parametrize("fn, args", [
    (deepcopy_config_passed_in, (randn(3), CONFIG)),
    (deepcopy_keeps_sharing, (randn(3),)),
    (copy_shallow, (randn(3),)),
    (deepcopy_made_inside, (randn(3),)),
    (ids_of_fresh_objects, (randn(3),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_copies_and_ids_stay_in_one_graph_through_both_doors(fn, args):
    check_against_eager(fn, args, expected_graphs=1)
    check_registered_against_eager(fn, args)
    report = jit.explain(fn, *args)
    assert report.graph_break_count == 0, str(report)


def test_the_deep_copy_is_a_new_object_and_the_original_is_untouched():
    config = Config()
    c = jit.compile(lambda cfg: copy.deepcopy(cfg), backend="eager")(config)
    assert type(c) is Config and c is not config
    assert c.layers == config.layers and c.layers is not config.layers and c.layers[2] is not config.layers[2]
    assert (c.scale, c.name, c.pair) == (2, "base", (1, (2, 3)))


def test_a_returned_id_is_the_id_of_the_returned_object():
    for door in (jit.compile(id_returned_with_its_object, backend="eager"),):
        _, a, ident = door(randn(3))
        assert ident == id(a)
    counting = CountingBackend()
    with jit.enabled(backend=counting):
        jit.register(id_returned_with_its_object)
        try:
            _, a, ident = id_returned_with_its_object(randn(3))
        finally:
            jit.unregister(id_returned_with_its_object)
    assert ident == id(a)


@pytest.mark.parametrize("fn, args", [
    (ids_of_equal_ints, (randn(3), 1000)),
    (copy_with_own_reduce, (randn(3),)),
    (deepcopy_of_tensors_in_a_dict, (randn(3),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_what_cannot_be_known_or_is_customised_breaks_and_gives_eagers_result(fn, args):
    check_against_eager(fn, args, expected_graphs=None)
    check_registered_against_eager(fn, args)


def test_a_validating_setattr_of_an_object_made_inside_raises_as_in_python():
    def bad(x):
        s = StrictConfig(1)
        s.width = -1
        return x

    with pytest.raises(ValueError, match="width must be positive"):
        jit.compile(bad, backend="eager")(randn(2))


def test_the_number_of_an_id_folds_only_for_an_object_pinned_by_identity():
    def printed(x, obj):
        return x + 1, str(id(obj))

    obj = Config()
    other = Config()
    compiled = jit.compile(printed, backend="eager")
    assert compiled(randn(2), obj)[1] == str(id(obj))
    assert compiled(randn(2), other)[1] == str(id(other))  # guarded by identity: recompiled, never stale


class Slotted:
    __slots__ = ("v", "w")

    def __init__(self, v):
        self.v = v
        self.w = [v]


class OwnDeepcopy:
    def __init__(self, v):
        self.v = v

    def __deepcopy__(self, memo):
        return OwnDeepcopy(self.v * 10)


def copy_slotted_and_own_deepcopy(x):
    s = copy.deepcopy(Slotted(3))
    o = copy.deepcopy(OwnDeepcopy(2))
    return x + s.v + len(s.w) + o.v


def test_slots_break_cleanly_and_a_python_deepcopy_method_is_traced():
    check_against_eager(copy_slotted_and_own_deepcopy, (randn(3),), expected_graphs=None)
    check_registered_against_eager(copy_slotted_and_own_deepcopy, (randn(3),))


def test_ids_of_objects_passed_in_follow_their_identity_on_every_call():
    def same(x, a, b):
        return x + 1, id(a) == id(b), a is b, id(a) in {id(b)}

    compiled = jit.compile(same, backend="eager")
    one, other = [1], [1]
    for a, b in ((one, other), (one, one), (other, one), (one, one)):
        assert compiled(randn(2), a, b)[1:] == same(randn(2), a, b)[1:]
    counting = CountingBackend()
    jit.register(same)
    try:
        with jit.enabled(backend=counting):
            for a, b in ((one, other), (one, one)):
                assert same(randn(2), a, b)[1:] == (a is b, a is b, a is b)
    finally:
        jit.unregister(same)


import typing  # noqa: E402

_VALIDATORS = {typing.Union: "union", list: "list", typing.Literal: "literal"}


@dataclasses.dataclass
class Validated:
    """A dataclass whose __setattr__ validates against the field's annotation, as huggingface_hub's strict
    dataclasses (transformers' configs) do: typing introspection and a table keyed by typing forms."""
    width: int = 2
    kind: typing.Optional[str] = None
    sizes: list[int] = dataclasses.field(default_factory=lambda: [1])
    notes = ["class-level"]

    def __setattr__(self, name, value):
        annotation = type(self).__annotations__.get(name)
        origin = typing.get_origin(annotation)
        kind = _VALIDATORS.get(origin)
        if kind == "union" and not isinstance(value, tuple(a for a in typing.get_args(annotation))):
            raise TypeError(f"{name}: {value!r} is not {annotation}")
        if annotation is int and not isinstance(value, int):
            raise TypeError(f"{name} must be an int")
        super().__setattr__(name, value)


def validated_copy(x, config):
    c = copy.deepcopy(config)
    c.width = c.width * 3
    c.kind = "wide"
    return x * c.width + len(c.notes) + len(c.sizes), c.kind, config.kind


def test_a_validating_dataclass_config_is_copied_and_set_in_one_graph():
    config = Validated()
    check_against_eager(validated_copy, (randn(3), config), expected_graphs=1)
    check_registered_against_eager(validated_copy, (randn(3), config))
    report = jit.explain(validated_copy, randn(3), config)
    assert report.graph_break_count == 0, str(report)

    def bad(x, config):
        c = copy.deepcopy(config)
        c.kind = 5
        return x

    with pytest.raises(TypeError, match="kind: 5 is not"):
        jit.compile(bad, backend="eager")(randn(2), config)


def test_a_class_attribute_read_through_an_object_made_inside_is_guarded():
    def f(x):
        return x + len(Validated().notes)

    compiled = jit.compile(f, backend="eager")
    assert torch.equal(compiled(randn(2)), f(randn(2)))
    Validated.notes.append("more")
    try:
        assert torch.equal(compiled(randn(2)), f(randn(2)))  # recompiled: never the stale length
    finally:
        Validated.notes.pop()
