"""BatchIdentityMatch's container key lists: a container module's table keeps exactly its keys, in order, or the
batch fails and names the table and both key lists."""
import torch

from jitcore.guards import BatchIdentityMatch


def _batch(container):
    table = container._modules
    items = list(table.items())
    return BatchIdentityMatch(
        containers=[table] * len(items), keys=[k for k, _ in items], objects=[m for _, m in items], n_grads=0,
        empty=[], names=[f"c.{k}" for k, _ in items], empty_names=[], owners=[container],
        keyed=[table], keyed_keys=[tuple(table)], keyed_names=["c._modules"])


def test_appended_layer_fails_the_batch_and_is_named():
    layers = torch.nn.ModuleList([torch.nn.ReLU(), torch.nn.Tanh()])
    batch = _batch(layers)
    assert batch.holds() and batch.explain() is None
    layers.append(torch.nn.Sigmoid())
    assert not batch.holds()
    assert batch.explain() == "c._modules keys changed ('0', '1') -> ('0', '1', '2')"


def test_same_items_in_another_order_fail_the_batch():
    named = torch.nn.ModuleDict({"a": torch.nn.ReLU(), "b": torch.nn.Tanh()})
    batch = _batch(named)
    named["a"] = named.pop("a")
    assert not batch.holds()
    assert batch.explain() == "c._modules keys changed ('a', 'b') -> ('b', 'a')"


def test_key_lists_take_part_in_equality():
    layers = torch.nn.ModuleList([torch.nn.ReLU()])
    assert _batch(layers) == _batch(layers)
    plain = BatchIdentityMatch(containers=[], keys=[], objects=[], n_grads=0, empty=[], names=[], empty_names=[])
    assert plain != _batch(layers)
    assert "1 container key lists" in _batch(layers).describe()
