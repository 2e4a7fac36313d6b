"""runtime/guard_batch.py: checks on a module captured by structure are never folded into the batch, which pins
objects by identity (Note [Instances shared by structure]); the same checks on a module captured by identity
are."""
import torch

from jitcore.guards import BatchIdentityMatch, DictKeysMatch, EqualsMatch, LengthMatch, TensorMatch, TypeMatch
from jitcore.capture.sources import AttrSource, LocalSource, ModuleDictSource
from jitcore.runtime.guard_batch import batch_module_guards, source_reader


def _collected(model):
    base = LocalSource("m")
    lin = ModuleDictSource(base, "_modules", "lin")
    return [(base, TypeMatch(type(model))),
            (AttrSource(base, "_modules"), DictKeysMatch(("lin",))),
            (lin, TypeMatch(torch.nn.Linear)),
            (ModuleDictSource(lin, "_parameters", "weight"), TensorMatch(model.lin.weight)),
            (ModuleDictSource(lin, "_parameters", "bias"), TensorMatch(model.lin.bias)),
            (AttrSource(lin, "_forward_hooks"), LengthMatch(0)),
            (AttrSource(lin, "training"), EqualsMatch(True))]


def _model():
    model = torch.nn.Module()
    model.lin = torch.nn.Linear(2, 2)
    return model


def _batch(structural):
    model = _model()
    read = source_reader(("m",), (model,), (), {}, {})
    pinned = {}
    return batch_module_guards(_collected(model), read, pinned, structural), pinned


def test_module_state_by_identity_is_batched_and_pinned():
    guards, pinned = _batch(frozenset())
    assert any(isinstance(check, BatchIdentityMatch) for _, check in guards)
    assert len([s for s in pinned if s is not None]) == 2


def test_module_state_under_a_structural_path_is_left_alone():
    collected_len = len(_collected(_model()))
    guards, pinned = _batch(frozenset({(("local", "m"),)}))
    assert not any(isinstance(check, BatchIdentityMatch) for _, check in guards)
    assert len(guards) == collected_len
    assert not [s for s in pinned if s is not None]
