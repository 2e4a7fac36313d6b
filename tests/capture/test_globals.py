"""Capture: reads of globals and of module attributes (math, torch dtypes, enums, module objects) in one graph.

Each test reads a module-level value, a `math` constant or function on Python numbers, a torch dtype or an enum
member, requires eager-equal results with exactly one graph, and, where the test says so in its docstring, changes
the global between calls (through monkeypatch, which restores it) to prove the read is guarded.
"""

import enum
import math
import sys
import types

import torch
import torch.nn.functional as F

import jitcore as jit
from tests.support import arg_sets, assert_same, check_against_eager, compare_call, randn

#: the module itself, for monkeypatching the globals below.
_THIS = sys.modules[__name__]

SCALE = 2.0
STEPS = 3
ENABLED = True
WEIGHTS = [0.5, 1.5, -1.0]
SETTINGS = {"shift": 0.25, "scale": 3.0}
SHAPE = (2, 6)
DTYPE = torch.float64
CONSTANT = torch.arange(3, dtype=torch.float32)
COUNTER = 0
LOG = []

#: a module object with attributes, read as `config.<name>` by the functions below.
config = types.ModuleType("capture_config")
config.scale = 4.0
config.use_bias = True


class Mode(enum.Enum):
    FAST = 1
    PRECISE = 2


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 3


MODE = Mode.FAST


def _helper(x):
    return x * SCALE + 1


# Reads of plain globals


def test_global_float_read_matches_eager():
    def f(x):
        return x * SCALE

    check_against_eager(f, *arg_sets((4, 3)))


def test_global_int_as_loop_bound_matches_eager():
    def f(x):
        for _ in range(STEPS):
            x = x * 0.5 + 1
        return x

    check_against_eager(f, *arg_sets((4, 3)))


def test_global_bool_decides_branch_matches_eager():
    def f(x):
        if ENABLED:
            return x.relu()
        return x.tanh()

    check_against_eager(f, *arg_sets((4, 3)))


def test_global_list_of_floats_iterated_matches_eager():
    def f(x):
        for w in WEIGHTS:
            x = x * w
        return x

    check_against_eager(f, *arg_sets((4, 3)))


def test_global_dict_values_read_matches_eager():
    def f(x):
        return x * SETTINGS["scale"] + SETTINGS["shift"]

    check_against_eager(f, *arg_sets((4, 3)))


def test_global_tuple_as_shape_matches_eager():
    def f(x):
        return x.reshape(SHAPE) + 1

    check_against_eager(f, *arg_sets((4, 3)))


def test_global_function_call_is_inlined_matches_eager():
    def f(x):
        return _helper(x) - 1

    check_against_eager(f, *arg_sets((4, 3)))


def test_global_tensor_read_matches_eager():
    def f(x):
        return x + CONSTANT

    check_against_eager(f, *arg_sets((4, 3)))


def test_global_float_change_recompiles_and_matches_eager(counting, monkeypatch):
    """SCALE is guarded: the new value gives a new graph whose result equals eager's."""

    def f(x):
        return x * SCALE

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (randn(4, 3, seed=1),))
    monkeypatch.setattr(_THIS, "SCALE", -3.0)
    compare_call(f, compiled, (randn(4, 3, seed=2),))
    assert counting.graph_count == 2


def test_global_statement_store_matches_eager(counting, monkeypatch):
    """`global COUNTER; COUNTER += 1` leaves eager's value; the new value is guarded, so the next call recompiles."""

    def f(x):
        global COUNTER
        COUNTER += 1
        return x * COUNTER

    monkeypatch.setattr(_THIS, "COUNTER", 0)
    compiled = jit.compile(f, backend=counting)
    for seed in (1, 2):
        x = randn(4, 3, seed=seed)
        start = COUNTER
        expected = f(x)
        after_eager = COUNTER
        monkeypatch.setattr(_THIS, "COUNTER", start)
        assert_same(expected, compiled(x))
        assert COUNTER == after_eager
    assert counting.graph_count == 2


def test_global_list_appended_inside_matches_eager(counting, monkeypatch):
    """The compiled call appends to the global list what eager appends; a graph proves it was captured."""

    def f(x):
        y = x * 2
        LOG.append(y.sum())
        return y + 1

    compiled = jit.compile(f, backend=counting)
    eager_log, compiled_log = [], []
    for seed in (1, 2):
        x = randn(4, 3, seed=seed)
        monkeypatch.setattr(_THIS, "LOG", eager_log)
        expected = f(x)
        monkeypatch.setattr(_THIS, "LOG", compiled_log)
        assert_same(expected, compiled(x))
        assert_same(eager_log, compiled_log, "LOG")
    assert counting.graph_count >= 1


# Module attributes: math, torch and module objects


def test_math_pi_and_e_constants_matches_eager():
    def f(x):
        return x * math.pi + math.e

    check_against_eager(f, *arg_sets((4, 3)))


def test_math_functions_on_python_numbers_matches_eager():
    def f(x):
        return x * math.sqrt(x.shape[-1]) + math.log(2.0) - math.cos(0.5)

    check_against_eager(f, *arg_sets((4, 3)))


def test_math_floor_ceil_and_prod_on_shapes_matches_eager():
    def f(x):
        half = math.ceil(x.shape[0] / 3)
        return x[: math.floor(x.shape[0] / 3)].sum() + x[:half].sum() * math.prod(x.shape)

    check_against_eager(f, *arg_sets((5, 3)))


def test_math_inf_comparison_matches_eager():
    def f(x, limit=math.inf):
        if limit == math.inf:
            return x * 2
        return x.clamp(max=limit)

    check_against_eager(f, *arg_sets((4, 3)))


def test_math_isclose_decides_branch_matches_eager():
    def f(x, scale):
        if math.isclose(scale, 1.0):
            return x + 1
        return x * scale

    check_against_eager(f, (randn(4, 3, seed=1), 1.0 + 1e-12), (randn(4, 3, seed=2), 1.0 + 1e-12))


def test_torch_dtype_attribute_conversion_matches_eager():
    def f(x):
        return x.to(torch.float16) * 2, x.to(torch.int64)

    check_against_eager(f, *arg_sets((4, 3)))


def test_global_dtype_in_factory_matches_eager():
    def f(x):
        return torch.ones(3, dtype=DTYPE) + x.to(DTYPE)

    check_against_eager(f, *arg_sets((4, 3)))


def test_torch_pi_and_finfo_constants_matches_eager():
    def f(x):
        return x * torch.pi + torch.finfo(torch.float32).eps

    check_against_eager(f, *arg_sets((4, 3)))


def test_torch_nn_functional_attribute_call_matches_eager():
    def f(x):
        return F.silu(x) + torch.nn.functional.gelu(x)

    check_against_eager(f, *arg_sets((4, 3)))


def test_module_object_attributes_read_matches_eager():
    def f(x):
        y = x * config.scale
        if config.use_bias:
            y = y + 1
        return y

    check_against_eager(f, *arg_sets((4, 3)))


def test_module_object_attribute_change_recompiles_and_matches_eager(counting, monkeypatch):
    """`config.scale` is guarded on its source, the module object's attribute."""

    def f(x):
        return x * config.scale

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (randn(4, 3, seed=1),))
    monkeypatch.setattr(config, "scale", 0.5)
    compare_call(f, compiled, (randn(4, 3, seed=2),))
    assert counting.graph_count == 2


# Enums


def test_enum_member_comparison_decides_branch_matches_eager():
    def f(x):
        if MODE is Mode.FAST:
            return x * 2
        return x.double() * 2

    check_against_eager(f, *arg_sets((4, 3)))


def test_enum_member_value_as_scale_matches_eager():
    def f(x):
        return x * Mode.PRECISE.value

    check_against_eager(f, *arg_sets((4, 3)))


def test_enum_member_as_argument_matches_eager():
    def f(x, mode):
        if mode == Mode.PRECISE:
            return x.double()
        return x * 3

    check_against_eager(f, (randn(4, 3, seed=1), Mode.PRECISE), (randn(4, 3, seed=2), Mode.FAST), expected_graphs=2)


def test_int_enum_arithmetic_matches_eager():
    def f(x):
        return x * (Level.HIGH - Level.LOW) + int(Level.HIGH)

    check_against_eager(f, *arg_sets((4, 3)))


def test_enum_member_name_lookup_matches_eager():
    def f(x):
        return x * Mode["PRECISE"].value + len(Mode.FAST.name)

    check_against_eager(f, *arg_sets((4, 3)))


def test_global_enum_change_recompiles_and_matches_eager(counting, monkeypatch):
    """MODE is guarded: switching the member changes the branch taken."""

    def f(x):
        if MODE is Mode.FAST:
            return x * 2
        return x - 2

    compiled = jit.compile(f, backend=counting)
    compare_call(f, compiled, (randn(4, 3, seed=1),))
    monkeypatch.setattr(_THIS, "MODE", Mode.PRECISE)
    compare_call(f, compiled, (randn(4, 3, seed=2),))
    assert counting.graph_count == 2
