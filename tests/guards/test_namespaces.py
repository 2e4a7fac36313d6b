"""NamespaceBatchMatch: many name-resolution facts (an attribute absent from the classes before the one defining it,
a method found on its class, a module global) tested as one root check, with failures in each member's words."""
import types

import torch

import jitcore as jit
from jitcore.guards import ABSENT, NamespaceBatchMatch, NamespaceEntryMatch, batch_namespace_checks


class _Base:
    scale = 2

    def w(self):
        return 3


class _Mid(_Base):
    pass


class _Leaf(_Mid):
    pass


def _members(module_dict):
    return [
        NamespaceEntryMatch(_Leaf.__dict__, "w", ABSENT, "_Leaf.w", owner=_Leaf),
        NamespaceEntryMatch(_Mid.__dict__, "w", ABSENT, "_Mid.w", owner=_Mid),
        NamespaceEntryMatch(_Base.__dict__, "w", _Base.__dict__["w"], "_Base.w", owner=_Base),
        NamespaceEntryMatch(_Base.__dict__, "scale", 2, "_Base.scale", owner=_Base),
        NamespaceEntryMatch(module_dict, "helper", module_dict["helper"], "m.helper"),
    ]


def _module():
    module = types.ModuleType("m")
    module.helper = lambda: 1
    return module


def test_the_batch_holds_while_every_member_holds_and_fails_with_the_members_words():
    module = _module()
    batch = NamespaceBatchMatch(_members(vars(module)))
    assert batch.holds() and batch.explain() is None and batch.failed_members() == []
    _Mid.w = lambda self: 5
    try:
        assert not batch.holds()
        assert batch.explain().startswith("_Mid.w now set to")
        assert [row[1] for row in batch.failed_members()] == ["_Mid.w"]
    finally:
        del _Mid.w
    assert batch.holds()


def test_a_rebound_or_deleted_entry_fails_the_batch():
    module = _module()
    batch = NamespaceBatchMatch(_members(vars(module)))
    module.helper = lambda: 2  # another function object
    assert not batch.holds() and "m.helper" in batch.explain()
    del module.helper
    assert not batch.holds() and batch.explain().startswith("m.helper was deleted")
    module = _module()
    batch = NamespaceBatchMatch(_members(vars(module)))
    _Base.scale = 3
    try:
        assert not batch.holds() and "_Base.scale" in batch.explain()
    finally:
        _Base.scale = 2


def test_an_entry_rebound_to_none_after_its_object_died_fails():
    module = _module()
    batch = NamespaceBatchMatch(_members(vars(module)))
    module.helper = None  # the lambda dies: its weak reference now answers None, like the entry
    assert not batch.holds()


def test_root_namespace_checks_fold_into_one_batch_and_a_few_stay_as_they_are():
    module = _module()
    members = _members(vars(module))
    other = (object(), object())
    folded = batch_namespace_checks([(None, m) for m in members] + [other])
    assert other in folded and len(folded) == 2
    assert isinstance(folded[-1][1], NamespaceBatchMatch) and len(folded[-1][1].members) == len(members)
    few = [(None, m) for m in members[:2]]
    assert batch_namespace_checks(few) == few


class _A:
    def f(self, x):
        return x + 1


class _B(_A):
    pass


class _C(_B):
    pass


class _D(_C):
    pass


def test_a_method_overridden_deep_in_a_hierarchy_after_the_call_recompiles():
    obj = _D()

    def fn(x):
        return obj.f(x) * 2

    compiled = jit.compile(fn, backend="eager")
    x = torch.ones(3)
    assert torch.equal(compiled(x), fn(x))
    _C.f = lambda self, x: x - 1
    try:
        assert torch.equal(compiled(x), fn(x))
        assert torch.equal(compiled(x), torch.zeros(3))
    finally:
        del _C.f
    assert torch.equal(compiled(x), fn(x))
