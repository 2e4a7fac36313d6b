"""Attribute reads see the writes and deletes made earlier in the same call, in every form: getattr (also with a
default), hasattr, o.__dict__, vars(o), `name in o.__dict__`, delattr, on objects passed in, nn.Modules and Python
modules; and a probe of an attribute that is absent is guarded, so adding it later recompiles.

Each case runs eagerly, through `jit.compile(backend="eager")` and through `register` + `enabled()`, and compares
results, exceptions and the objects' attribute dicts afterwards."""
import sys
import types

import pytest
import torch

import jitcore as jit
from tests.support import assert_same, both_doors, outcome, randn


class Knob:
    shared = 5

    def __init__(self):
        self.a = 1


def _state(obj):
    return dict(vars(obj)) if not isinstance(obj, torch.Tensor) else obj


def _check(fn, make_args):
    """fn eagerly, compiled and registered: same results or exception, same attribute dicts afterwards."""
    eager_args = make_args()
    expected = outcome(fn, *eager_args)
    with both_doors(fn) as (compiled, registered):
        for runner in (compiled, compiled, registered, registered):
            args = make_args()
            got = outcome(runner, *args)
            assert got[0] == expected[0], (got, expected)
            if got[0] == "returned":
                assert_same(expected[1], got[1])
            else:
                assert got[1] == expected[1]
            for e, a in zip(eager_args, args):
                if not isinstance(e, torch.Tensor):
                    assert _state(a) == _state(e)


def set_then_probe(x, k):
    setattr(k, "extra", 3)
    return x + getattr(k, "extra", 0) + hasattr(k, "extra")


def set_then_read_dict(x, k):
    k.b = 2
    d = k.__dict__
    return x + ("b" in d) + len(vars(k)) + ("b" in k.__dict__) + d["b"]


def delete_then_probe(x, k):
    del k.a
    return x + hasattr(k, "a") + getattr(k, "a", 10), "a" in vars(k)


def write_through_dict_then_attributes(x, k):
    d = vars(k)
    d["z"] = 4
    k.y = 1
    del k.a
    return x + k.z + hasattr(k, "a") + len(d) + ("y" in d)


def delete_shadowing_attribute(x, k):
    k.shared = 1
    first = k.shared
    del k.shared
    return x + first + k.shared


def delete_twice(x, k):
    del k.a
    del k.a
    return x


def delete_missing_caught(x, k):
    try:
        del k.missing
    except AttributeError:
        return x + 1
    return x


def set_probe_through_vars_then_delete(x, k):
    k.tmp = 1
    seen = int("tmp" in vars(k))
    delattr(k, "tmp")
    return x + seen


def delete_after_reading_dict_then_set(x, k):
    del k.a
    d = vars(k)
    k.a = 5
    return x + len(d) + k.a


@pytest.mark.parametrize("fn", [set_then_probe, set_then_read_dict, delete_then_probe,
                                write_through_dict_then_attributes, delete_shadowing_attribute, delete_twice,
                                delete_missing_caught, set_probe_through_vars_then_delete,
                                delete_after_reading_dict_then_set], ids=lambda f: f.__name__)
def test_reads_see_pending_writes_of_an_object(fn):
    _check(fn, lambda: (randn(3), Knob()))


def module_attribute_probe(x, m):
    m.extra = 3
    return x + hasattr(m, "extra") + getattr(m, "extra", 0)


def test_reads_see_pending_writes_of_a_module():
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 3)
    _check(module_attribute_probe, lambda: (randn(3), lin))


# -- Python modules: module attributes are the module's globals -------------------------------------------------
HERE = sys.modules[__name__]
LEVEL = 1


def module_global_written_then_read(x):
    global LEVEL
    LEVEL = 5
    HERE.ADDED = 7
    out = x + HERE.LEVEL + hasattr(HERE, "ADDED") + getattr(HERE, "ADDED", 0)
    del HERE.ADDED
    return out


def test_module_attributes_see_pending_global_writes():
    global LEVEL
    results = []
    for runner in (module_global_written_then_read, jit.compile(module_global_written_then_read, backend="eager")):
        LEVEL = 1
        results.append((runner(randn(3)), LEVEL, hasattr(HERE, "ADDED")))
    assert_same(results[0], results[1])


def probe_absent(x, holder):
    return x + hasattr(holder, "late") + getattr(holder, "late", 0)


def test_an_absent_attribute_is_guarded():
    holder = types.SimpleNamespace()
    compiled = jit.compile(probe_absent, backend="eager")
    assert_same(probe_absent(randn(3), holder), compiled(randn(3), holder))
    holder.late = 4
    assert_same(probe_absent(randn(3), holder), compiled(randn(3), holder))
    module = types.ModuleType("jitcore_probe_module")
    sys.modules[module.__name__] = module
    try:
        assert_same(probe_absent(randn(3), module), compiled(randn(3), module))
        module.late = 2
        assert_same(probe_absent(randn(3), module), compiled(randn(3), module))
    finally:
        del sys.modules[module.__name__]
