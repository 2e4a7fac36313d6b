"""Objects whose classes customise attribute access or dict methods, functions read by decorators, imports."""
import torch

import jitcore as jit
from tests.support import check_against_eager, randn


class _Config:
    attribute_map = {"width": "hidden"}

    def __init__(self):
        self.hidden = 3
        self.scale = 2.0

    def __getattribute__(self, key):
        if key != "attribute_map" and key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        return super().__getattribute__(key)


class _Lazy:
    def __init__(self):
        self.base = 1.5

    def __getattr__(self, name):
        return self.base * 2


class _Registry(dict):
    def get(self, key):
        return super().get(str(key.__class__)) or {}


REGISTRY = _Registry()


def test_python_getattribute_is_inlined_and_guarded(counting):
    def f(x, cfg):
        return x * cfg.scale + cfg.width

    cfg = _Config()
    compiled = jit.compile(f, backend=counting)
    x = randn(3, seed=1)
    torch.testing.assert_close(compiled(x, cfg), f(x, cfg))
    cfg.hidden = 5
    torch.testing.assert_close(compiled(x, cfg), f(x, cfg))
    assert counting.graph_count == 2


def test_python_getattr_fallback_is_inlined(counting):
    def f(x, obj):
        return x + obj.anything

    check_against_eager(f, (randn(3, seed=1), _Lazy()), expected_graphs=1)


def test_dict_subclass_method_override_is_honoured():
    def f(x, module):
        flags = REGISTRY.get(module)
        return x * (2 if flags else 3), module.__class__.__name__

    check_against_eager(f, (randn(3, seed=1), torch.nn.ReLU()), expected_graphs=1)


def test_decorator_reading_the_wrapped_functions_code_is_captured():
    def inner(x, scale=2):
        return x * scale

    def f(x):
        names = inner.__code__.co_varnames
        return inner(x) + len(names)

    check_against_eager(f, (randn(3, seed=1),), expected_graphs=1)


def test_import_of_an_imported_module_inside_the_function_is_captured():
    def f(x):
        import math
        from torch.nn import functional as F
        return F.relu(x) * math.pi

    check_against_eager(f, (randn(3, seed=1),), expected_graphs=1)
