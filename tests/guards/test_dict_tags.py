"""Dict version tags (Note [Dict version tags], guards/dict_tags.py): the tag moves on every kind of change of a
dict, and a module-state batch that skips its item reads while the tags stand still still sees every change it
guards against (the compiled module recompiles and matches eager)."""
import collections

import pytest
import torch

import jitcore as jit
from jitcore.guards import BatchIdentityMatch
from jitcore.guards.dict_tags import read_tags, tag_views
from tests.support import CountingBackend


def _mutations():
    return [
        ("set new key", lambda d: d.__setitem__("new", 1)),
        ("replace a value", lambda d: d.__setitem__("a", object())),
        ("del", lambda d: d.__delitem__("a")),
        ("pop", lambda d: d.pop("a")),
        ("popitem", lambda d: d.popitem()),
        ("clear", lambda d: d.clear()),
        ("update", lambda d: d.update(b=object())),
        ("setdefault", lambda d: d.setdefault("c", 1)),
        ("in-place or", lambda d: d.__ior__({"a": object()})),
    ]


@pytest.mark.parametrize("name,mutate", _mutations(), ids=[n for n, _ in _mutations()])
def test_tag_moves_on_every_kind_of_change(name, mutate):
    table = {"a": object(), "b": object()}
    views = tag_views([table])
    assert views is not None
    before = read_tags(views)
    mutate(table)
    assert read_tags(views) != before, name


def test_tag_stands_still_on_reads_and_on_storing_the_same_object():
    value = object()
    table = {"a": value}
    views = tag_views([table])
    before = read_tags(views)
    table.get("a"), table["a"], list(table), len(table), "a" in table
    table["a"] = value
    assert read_tags(views) == before


def test_tag_agrees_with_cpythons_own_reader():
    testcapi = pytest.importorskip("_testcapi")
    table = {"a": 1}
    views = tag_views([table])
    for step in range(3):
        table[step] = step
        assert read_tags(views) == [testcapi.dict_get_version(table)]


def test_tag_moves_on_specialized_attribute_stores():
    class Holder:
        pass

    holder = Holder()
    holder.a = 0
    views = tag_views([vars(holder)])  # the instance dict exists from here on: STORE_ATTR_WITH_HINT writes it
    seen = set()
    for step in range(40):  # enough runs for the adaptive interpreter to specialize the store
        holder.a = step + 1000
        seen.add(read_tags(views)[0])
    assert len(seen) == 40


def test_only_exact_dicts_get_views():
    assert tag_views([collections.OrderedDict()]) is None
    assert tag_views([{}, {}]) is not None


class Stack(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(3, 3) for _ in range(3))
        self.scale = 2

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x * self.scale


def _warm(n=4):
    torch.manual_seed(0)
    model = Stack()
    backend = CountingBackend()
    compiled = jit.compile(model, backend=backend)
    x = torch.randn(2, 3)
    for _ in range(n):
        compiled(x)
    batches = [c for c in _batches() if c._seen[0] is not None]
    assert batches, "the batch reads tags after its first pass"
    return model, compiled, backend, x


def _batches():
    import gc
    return [o for o in gc.get_objects() if type(o) is BatchIdentityMatch and o._live]


def _hook(module, args, output):
    return output + 100


def _pre_hook(module, args):
    return (args[0] * 3,)


CHANGES = [
    ("parameter replaced", lambda m: setattr(m.layers[1], "weight", torch.nn.Parameter(torch.ones(3, 3)))),
    ("forward hook added", lambda m: m.layers[2].register_forward_hook(_hook)),
    ("forward pre-hook added", lambda m: m.layers[0].register_forward_pre_hook(_pre_hook)),
    ("hook dict replaced, then a hook added to the new one",
     lambda m, compiled, x: (setattr(m.layers[1], "_forward_hooks", collections.OrderedDict()), compiled(x),
                             compiled(x), m.layers[1].register_forward_hook(_hook))),
    ("forward set on the instance", lambda m: setattr(m.layers[0], "forward", lambda x: x - 5)),
    ("module attribute changed", lambda m: setattr(m, "scale", 3)),
    ("layer deleted", lambda m: m.layers.__delitem__(1)),
    ("layer appended", lambda m: m.layers.append(torch.nn.Linear(3, 3))),
    ("requires_grad changed", lambda m: m.layers[0].weight.requires_grad_(False)),
    ("data swapped for another shape", lambda m: setattr(m.layers[2].bias, "data", torch.zeros(1))),
    ("data swapped for another dtype",
     lambda m: [setattr(p, "data", p.data.double()) for p in m.parameters()]),
]


@pytest.mark.parametrize("name,change", CHANGES, ids=[n for n, _ in CHANGES])
def test_a_change_the_batch_guards_against_still_recompiles(name, change):
    model, compiled, backend, x = _warm()
    graphs = backend.graph_count
    if change.__code__.co_argcount == 3:
        change(model, compiled, x)
    else:
        change(model)
    if name == "data swapped for another dtype":
        x = x.double()
    expected = model(x)
    got = compiled(x)
    torch.testing.assert_close(got, expected)
    assert backend.graph_count > graphs, name


def test_batch_passes_on_tags_until_a_change_then_reads_items(monkeypatch):
    model, compiled, backend, x = _warm()
    calls = []
    monkeypatch.setattr(BatchIdentityMatch, "_holds_read",
                        lambda self, original=BatchIdentityMatch._holds_read: calls.append(1) or original(self))
    compiled(x)
    assert calls == []  # nothing changed: the tags stood for the item reads
    model.layers[0].tag = 1  # a change to a dict the batch reads, that no check cares about
    compiled(x)
    assert calls == [1]
    compiled(x)
    assert calls == [1]  # the tags were read again with the pass
    assert backend.graph_count == 1


class Counting(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(3, 3) for _ in range(2))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def test_a_model_that_writes_its_state_every_call_stops_reading_tags_and_stays_correct():
    model = Counting()
    compiled = jit.compile(model, backend="eager")
    x = torch.randn(2, 3)
    for step in range(20):
        model.layers[0].calls = step  # an attribute no check reads, in a dict the batch reads from
        torch.testing.assert_close(compiled(x), model(x))
    assert [b for b in _batches() if b._tag_views is None and b._live]
    model.layers[1].register_forward_hook(_hook)
    torch.testing.assert_close(compiled(x), model(x))
