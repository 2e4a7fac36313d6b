"""Guards on sources: every Python value a graph depends on is guarded where it was read from.

Each test compiles a function whose graph depends on one Python value (a global, a closure cell, a default argument,
a module attribute, a list length, a dict key, `self.training`, the type or an attribute of a user object), calls
it, changes that one value, calls again, and compares every call with eager. The backend's graph count proves the
guard: a changed value must compile a new graph (a stale graph would give the old result), an unchanged one must not.
Globals are changed through monkeypatch, which restores them after the test.
"""

import sys
from collections import namedtuple
from dataclasses import dataclass

import torch
from torch import nn

import jitcore as jit
from tests.support import compare_call, randn

_THIS = sys.modules[__name__]

SCALE = 2.0
REPEATS = 2
USE_RELU = True
OFFSETS = [1.0, 2.0]
TABLE = {"a": 1.0}
BIAS = torch.ones(3)

Config = namedtuple("Config", ["width", "scale"])


@dataclass
class Options:
    scale: float
    shift: float = 0.0


class Scaler:
    def __init__(self, scale):
        self.scale = scale

    def apply(self, x):
        return x * self.scale


class Shifter(Scaler):
    def apply(self, x):
        return x + self.scale


class ScaledLinear(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(3, 3)
        self.scale = 2.0
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.linear(x)) * self.scale


class Outer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inner = ScaledLinear()

    def forward(self, x):
        return self.inner(x) + 1


class TrainingBranch(nn.Module):
    def forward(self, x):
        if self.training:
            return x * 2
        return x - 2


def _helper(x):
    return x + 1


def _module(cls):
    torch.manual_seed(0)
    return cls()


def _x(seed=1):
    return randn(4, 3, seed=seed)


# Globals


def test_global_float_change_recompiles(counting, monkeypatch):
    def f(x):
        return x * SCALE

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (_x(1),))
    monkeypatch.setattr(_THIS, "SCALE", 5.0)
    compare_call(f, compiled, (_x(2),))
    assert counting.graph_count == 2


def test_global_int_loop_bound_change_recompiles(counting, monkeypatch):
    def f(x):
        for _ in range(REPEATS):
            x = x * 2
        return x

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (_x(1),))
    monkeypatch.setattr(_THIS, "REPEATS", 3)
    compare_call(f, compiled, (_x(2),))
    assert counting.graph_count == 2


def test_global_bool_change_takes_the_other_branch(counting, monkeypatch):
    def f(x):
        return x.relu() if USE_RELU else x.tanh()

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (_x(1),))
    monkeypatch.setattr(_THIS, "USE_RELU", False)
    compare_call(f, compiled, (_x(2),))
    assert counting.graph_count == 2


def test_global_restored_value_reuses_the_first_graph(counting, monkeypatch):
    """Going back to the first value hits the first cache entry: no third graph."""

    def f(x):
        return x * SCALE

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (_x(1),))
    monkeypatch.setattr(_THIS, "SCALE", 5.0)
    compare_call(f, compiled, (_x(2),))
    monkeypatch.setattr(_THIS, "SCALE", 2.0)
    compare_call(f, compiled, (_x(3),))
    assert counting.graph_count == 2


def test_global_list_appended_recompiles(counting, monkeypatch):
    """The global list's length is guarded: an element appended in place is seen."""

    def f(x):
        for offset in OFFSETS:
            x = x + offset
        return x

    monkeypatch.setattr(_THIS, "OFFSETS", [1.0, 2.0])
    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (_x(1),))
    OFFSETS.append(10.0)
    compare_call(f, compiled, (_x(2),))
    assert counting.graph_count == 2


def test_global_list_element_changed_in_place_recompiles(counting, monkeypatch):
    def f(x):
        return x * OFFSETS[0]

    monkeypatch.setattr(_THIS, "OFFSETS", [1.0, 2.0])
    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (_x(1),))
    OFFSETS[0] = -4.0
    compare_call(f, compiled, (_x(2),))
    assert counting.graph_count == 2


def test_global_dict_key_added_recompiles(counting, monkeypatch):
    """`"b" in TABLE` is guarded on the dict's keys."""

    def f(x):
        if "b" in TABLE:
            return x * TABLE["b"]
        return x * TABLE["a"]

    monkeypatch.setattr(_THIS, "TABLE", {"a": 1.0})
    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (_x(1),))
    TABLE["b"] = 3.0
    compare_call(f, compiled, (_x(2),))
    assert counting.graph_count == 2


def test_global_dict_value_changed_recompiles(counting, monkeypatch):
    def f(x):
        return x + TABLE["a"]

    monkeypatch.setattr(_THIS, "TABLE", {"a": 1.0})
    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (_x(1),))
    TABLE["a"] = 7.0
    compare_call(f, compiled, (_x(2),))
    assert counting.graph_count == 2


def test_global_function_replaced_recompiles(counting, monkeypatch):
    def f(x):
        return _helper(x) * 2

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (_x(1),))
    monkeypatch.setattr(_THIS, "_helper", lambda t: t - 100)
    compare_call(f, compiled, (_x(2),))
    assert counting.graph_count == 2


def test_global_tensor_updated_in_place_is_used_without_recompiling(counting, monkeypatch):
    """A global tensor is a graph input read at each call, not a constant captured once."""

    def f(x):
        return x + BIAS

    monkeypatch.setattr(_THIS, "BIAS", torch.ones(3))
    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (_x(1),))
    BIAS.mul_(-3)
    compare_call(f, compiled, (_x(1),))
    assert counting.graph_count == 1


def test_global_tensor_replaced_with_new_shape_recompiles(counting, monkeypatch):
    def f(x):
        return x + BIAS

    monkeypatch.setattr(_THIS, "BIAS", torch.ones(3))
    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (_x(1),))
    monkeypatch.setattr(_THIS, "BIAS", torch.arange(4.0).reshape(4, 1))
    compare_call(f, compiled, (_x(2),))
    assert counting.graph_count == 2


# Closure cells and defaults


def test_closure_cell_change_recompiles(counting):
    scale = 2.0

    def f(x):
        return x * scale

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (_x(1),))
    scale = -1.5  # noqa: F841 - read through f's closure cell
    compare_call(f, compiled, (_x(2),))
    assert counting.graph_count == 2


def test_closure_cell_holding_list_appended_recompiles(counting):
    offsets = [1.0]

    def f(x):
        for offset in offsets:
            x = x + offset
        return x

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (_x(1),))
    offsets.append(3.0)
    compare_call(f, compiled, (_x(2),))
    assert counting.graph_count == 2


def test_closure_cell_holding_object_attribute_change_recompiles(counting):
    scaler = Scaler(2.0)

    def f(x):
        return scaler.apply(x)

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (_x(1),))
    scaler.scale = 0.25
    compare_call(f, compiled, (_x(2),))
    assert counting.graph_count == 2


def test_default_argument_change_recompiles(counting):
    def f(x, scale=2.0):
        return x * scale

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (_x(1),))
    f.__defaults__ = (4.0,)
    compare_call(f, compiled, (_x(2),))
    assert counting.graph_count == 2


def test_keyword_only_default_change_recompiles(counting):
    def f(x, *, shift=1.0):
        return x + shift

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (_x(1),))
    f.__kwdefaults__ = {"shift": -6.0}
    compare_call(f, compiled, (_x(2),))
    assert counting.graph_count == 2


def test_mutable_default_list_appended_recompiles(counting):
    def f(x, offsets=[1.0]):  # noqa: B006 - the shared default is what the test changes
        return x + sum(offsets)

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (_x(1),))
    f.__defaults__[0].append(5.0)
    compare_call(f, compiled, (_x(2),))
    assert counting.graph_count == 2


# Module attributes


def test_module_scale_attribute_change_recompiles(counting):
    model = _module(ScaledLinear)
    compiled = jit.compile(model, backend=counting)
    compare_call(model, compiled, (_x(1),))
    model.scale = -0.5
    compare_call(model, compiled, (_x(2),))
    assert counting.graph_count == 2


def test_submodule_attribute_change_recompiles(counting):
    model = _module(Outer)
    compiled = jit.compile(model, backend=counting)
    compare_call(model, compiled, (_x(1),))
    model.inner.scale = 3.0
    compare_call(model, compiled, (_x(2),))
    assert counting.graph_count == 2


def test_submodule_replaced_by_another_type_recompiles(counting):
    model = _module(ScaledLinear)
    compiled = jit.compile(model, backend=counting)
    compare_call(model, compiled, (_x(1),))
    model.act = nn.Tanh()
    compare_call(model, compiled, (_x(2),))
    assert counting.graph_count == 2


def test_training_flag_switch_recompiles_both_ways(counting):
    """`self.training` is guarded: eval() compiles once more, train() again reuses the first graph."""
    model = TrainingBranch()
    compiled = jit.compile(model, backend=counting)
    compare_call(model, compiled, (_x(1),))
    model.eval()
    compare_call(model, compiled, (_x(2),))
    model.train()
    compare_call(model, compiled, (_x(3),))
    assert counting.graph_count == 2


def test_child_training_flag_switch_recompiles(counting):
    """Only the child is put in eval mode: its own flag is guarded, not just the root's."""

    class Parent(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.child = TrainingBranch()

        def forward(self, x):
            return self.child(x) + 1

    model = Parent()
    compiled = jit.compile(model, backend=counting)
    compare_call(model, compiled, (_x(1),))
    model.child.eval()
    compare_call(model, compiled, (_x(2),))
    assert counting.graph_count == 2


# Arguments: list lengths, dict keys, Python numbers


def test_list_argument_length_change_recompiles(counting):
    def f(xs):
        total = xs[0]
        for t in xs[1:]:
            total = total + t
        return total

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, ([_x(1), _x(2)],))
    compare_call(f, compiled, ([_x(3), _x(4), _x(5)],))
    assert counting.graph_count == 2


def test_list_argument_int_element_change_recompiles(counting):
    def f(x, sizes):
        return x.reshape(sizes[0], -1) * sizes[1]

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (_x(1), [2, 3]))
    compare_call(f, compiled, (_x(2), [6, 5]))
    assert counting.graph_count == 2


def test_dict_argument_key_change_recompiles(counting):
    def f(x, options):
        if "shift" in options:
            return x + options["shift"]
        return x * options["scale"]

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (_x(1), {"scale": 2.0}))
    compare_call(f, compiled, (_x(2), {"shift": 2.0}))
    assert counting.graph_count == 2


def test_dict_argument_same_keys_and_values_reuses_graph(counting):
    """A new dict object with equal keys and values passes the guards: no second graph."""

    def f(x, options):
        return x * options["scale"]

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (_x(1), {"scale": 2.0}))
    compare_call(f, compiled, (_x(2), {"scale": 2.0}))
    assert counting.graph_count == 1


def test_python_int_argument_change_recompiles(counting):
    def f(x, n):
        return x * n

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (_x(1), 2))
    compare_call(f, compiled, (_x(2), 5))
    assert counting.graph_count == 2


def test_none_then_tensor_argument_recompiles(counting):
    def f(x, bias=None):
        if bias is None:
            return x * 2
        return x + bias

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (_x(1), None))
    compare_call(f, compiled, (_x(2), randn(3, seed=9)))
    assert counting.graph_count == 2


def test_namedtuple_int_field_change_recompiles(counting):
    def f(x, config):
        return x[:, : config.width] * config.scale

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (_x(1), Config(2, 0.5)))
    compare_call(f, compiled, (_x(2), Config(1, 0.5)))
    assert counting.graph_count == 2


def test_dataclass_field_change_recompiles(counting):
    def f(x, options):
        return x * options.scale + options.shift

    compiled = jit.compile(f, backend=counting)
    options = Options(2.0)
    compare_call(f, compiled, (_x(1), options))
    options.shift = 1.5
    compare_call(f, compiled, (_x(2), options))
    assert counting.graph_count == 2


# User objects


def test_user_object_type_change_recompiles(counting):
    """Same attribute values, different class: the method resolved through the type must be guarded."""

    def f(x, op):
        return op.apply(x)

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (_x(1), Scaler(2.0)))
    compare_call(f, compiled, (_x(2), Shifter(2.0)))
    assert counting.graph_count == 2


def test_user_object_attribute_change_recompiles(counting):
    def f(x, op):
        return op.apply(x)

    op = Scaler(2.0)
    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (_x(1), op))
    op.scale = 10.0
    compare_call(f, compiled, (_x(2), op))
    assert counting.graph_count == 2


def test_user_object_attribute_added_recompiles(counting):
    """`hasattr` is guarded: an attribute set after the first call changes the branch."""

    def f(x, op):
        if hasattr(op, "bias"):
            return op.apply(x) + op.bias
        return op.apply(x)

    op = Scaler(2.0)
    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (_x(1), op))
    op.bias = 4.0
    compare_call(f, compiled, (_x(2), op))
    assert counting.graph_count == 2


def test_class_attribute_change_recompiles(counting):
    """An attribute read through the instance but stored on the class is guarded on the class."""

    class Holder:
        factor = 2.0

    def f(x, holder):
        return x * holder.factor

    holder = Holder()
    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (_x(1), holder))
    Holder.factor = -1.0
    compare_call(f, compiled, (_x(2), holder))
    assert counting.graph_count == 2
