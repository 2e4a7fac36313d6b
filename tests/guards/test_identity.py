"""Note [Identity keys without id()] (jitcore/guards/identity.py): `address(obj)` tells live objects apart as
`id()` does, whatever their class defines, raises no audit event, and the memos keyed by it still see every change that must
recompile: a method's code replaced, a module attribute changed, an instance of another structure."""
from __future__ import annotations

import functools
import sys

import torch

import jitcore as jit
from jitcore.guards.identity import address
from jitcore.marks import disabled_by_torch

_EVENTS: list = []
_RECORDING = [False]
_INSTALLED: list = []


def _record(event, args, recording=_RECORDING, events=_EVENTS):
    # bound as defaults: the hook outlives this module's globals (they are None at shutdown)
    if recording[0] and event in ("builtins.id", "object.__getattr__"):
        events.append(event)


def _audited_events(fn, *args) -> int:
    """The `id()` calls and audited attribute reads made while running `fn(*args)`."""
    if not _INSTALLED:  # hooks cannot be removed: one, installed when a test first needs it
        sys.addaudithook(_record)
        _INSTALLED.append(True)
    _EVENTS.clear()
    _RECORDING[0] = True
    try:
        fn(*args)
    finally:
        _RECORDING[0] = False
    return len(_EVENTS)


class _SameHash:
    def __hash__(self):
        return 1

    def __eq__(self, other):
        return True


class _HashingMeta(type):
    def __hash__(cls):
        return 7


class _WithMeta(metaclass=_HashingMeta):
    pass


def test_address_tells_live_objects_apart_whatever_they_define():
    objects = [{}, [], {}, _SameHash(), _SameHash(), _WithMeta, _HashingMeta, 1.5, (), None, torch.zeros(1),
               torch.nn.Linear(1, 1), test_address_tells_live_objects_apart_whatever_they_define]
    keys = [address(o) for o in objects]
    assert len(set(keys)) == len(objects)
    assert keys == [address(o) for o in objects]
    # the same one-to-one function of the address as id(): equal keys, equal ids
    assert len({(address(o), id(o)) for o in objects}) == len(objects)


def test_address_raises_no_audit_event():
    obj = object()
    assert _audited_events(address, obj) == 0
    assert _audited_events(id, obj) == 1


class Block(torch.nn.Module):
    def __init__(self, scale=2.0):
        super().__init__()
        self.scale = scale

    def helper(self, x, k=1.0):
        return x * self.scale + k

    def forward(self, x):
        for _ in range(self.repeats):
            x = self.helper(x)
        return x


def _first_call(block_class, repeats, x):
    model = block_class()
    model.repeats = repeats
    jit.reset()
    return jit.compile(model, backend="eager")(x)


def test_a_method_inlined_again_in_one_capture_costs_only_its_own_reads():
    # each inline reads __code__, __defaults__ and __kwdefaults__ (3 audited reads); the guards of a method found
    # again (its lookup, its FunctionMatch) and the memos of values met again are made or found without any.
    # With id() keys and a FunctionMatch per inline, each repeat cost 29 events
    x = torch.randn(3)
    _first_call(Block, 2, x)  # imports and first-time set-up out of the way
    few = _audited_events(_first_call, Block, 2, x)
    many = _audited_events(_first_call, Block, 12, x)
    assert many - few <= 10 * 4, (few, many)


def _compiled_block(backend):
    """A Block whose forward inlines `helper` three times in one capture, compiled and called once."""
    model = Block()
    model.repeats = 3
    compiled = jit.compile(model, backend=backend)
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x), model(x))
    return model, compiled, x


def test_replacing_the_code_of_a_method_inlined_several_times_recompiles(counting):
    model, compiled, x = _compiled_block(counting)
    original = Block.helper.__code__
    try:
        Block.helper.__code__ = (lambda self, x, k=1.0: x - k).__code__
        torch.testing.assert_close(compiled(x), model(x))
        assert counting.graph_count == 2
    finally:
        Block.helper.__code__ = original


def test_a_module_attribute_changed_after_the_first_call_is_seen(counting):
    model, compiled, x = _compiled_block(counting)
    model.scale = 5.0
    torch.testing.assert_close(compiled(x), model(x))
    model.repeats = 1
    torch.testing.assert_close(compiled(x), model(x))


class Other(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(3, 3)

    def helper(self, x, k=1.0):
        return self.linear(x) - k


def test_an_instance_of_another_structure_is_seen(counting):
    def run(block, x):
        return block.helper(x) + block.helper(x)

    compiled = jit.compile(run, backend=counting)
    x = torch.randn(3)
    first, second = Block(), Other()
    torch.testing.assert_close(compiled(first, x), run(first, x))
    torch.testing.assert_close(compiled(second, x), run(second, x))
    torch.testing.assert_close(compiled(first, x), run(first, x))
    assert counting.graph_count == 2


def _plain(x):
    return x


def test_torch_disable_wrappers_are_recognised_and_look_alikes_are_not():
    assert disabled_by_torch(torch._disable_dynamo(_plain))
    assert disabled_by_torch(torch._dynamo.disable(_plain))
    assert not disabled_by_torch(_plain)

    # a user's wrapper with the same name and qualname (functools.wraps copies them): not torch's
    def inner(*args):
        return _plain(*args)

    inner.__qualname__ = "_disable_dynamo.<locals>.inner"
    assert not disabled_by_torch(functools.wraps(_plain)(inner))
    assert not disabled_by_torch(inner)
