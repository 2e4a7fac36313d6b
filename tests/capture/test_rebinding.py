"""Facts capture reads that change between calls: a function value rebound or passed in, a class changed after the
call, a builtin shadowed by a module global later, the same object passed as two arguments.

Each test runs a function eagerly, through `jit.compile` and through `register` + `enabled()`, changes one fact
between two calls, and compares every call (results and the objects it mutates) with eager Python; the compiled
copy's first entry must then miss, naming what changed.
"""
import sys
import types

import pytest
import torch

import jitcore as jit
from tests.support import assert_same

_THIS = sys.modules[__name__]

ACT = torch.relu
IS_COMPILING = torch.compiler.is_compiling


@jit.allow_in_graph
def _double(x):
    return x * 2


@jit.allow_in_graph
def _triple(x):
    return x * 3


ALLOWED = _double


def _check(fn, before, after, change, reason=None, restore=None):
    """fn(*before()) then `change()` then fn(*after()), eagerly and in both compiled forms; `before`/`after` make
    fresh arguments for each run (lists mutated in place are compared too). `reason`: a text the first entry's
    failure on the second call's arguments must contain."""
    expected = []
    for form in ("eager", "compile", "register"):
        if restore is not None:
            restore()
        first = before()
        if form == "eager":
            runner = fn
        elif form == "compile":
            runner = compiled = jit.compile(fn, backend="eager")
        else:
            jit.register(fn)

            def runner(*args):
                with jit.enabled(backend="eager"):
                    return fn(*args)
        try:
            out1 = runner(*first)
            change()
            second = after()
            out2 = runner(*second)
        finally:
            if form == "register":
                jit.unregister(fn)
        got = (out1, first, out2, second)
        if form == "eager":
            expected = got
        else:
            assert_same(expected, got, f"{form}")
        if form == "compile" and reason is not None:
            failures = compiled._jitcore_cache.entries[0].guard_function.failures(second, None)
            assert any(reason in text for text in failures), failures
    if restore is not None:
        restore()


# -- 1. a function value rebound or passed in ----------------------------------------------------------------

def _global_act(x):
    return ACT(x)


def test_a_global_bound_to_a_torch_function_rebound(monkeypatch):
    x = torch.randn(4)
    _check(_global_act, lambda: (x,), lambda: (x,),
           lambda: monkeypatch.setattr(_THIS, "ACT", torch.tanh), "G.ACT",
           restore=lambda: monkeypatch.setattr(_THIS, "ACT", torch.relu))


def _act_arg(x, act):
    return act(x) + 1


def test_a_torch_function_passed_in_then_another():
    x = torch.randn(4)
    _check(_act_arg, lambda: (x, torch.relu), lambda: (x, torch.tanh), lambda: None, "act")


def test_a_lookaside_passed_in_then_another():
    _check(lambda x, pick: x * len(pick([1, 2, 3])), lambda: (torch.ones(2), list), lambda: (torch.ones(2), sorted),
           lambda: None)


class _Activated(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.act = torch.relu

    def forward(self, x):
        return self.act(x) * 2


def test_a_modules_function_attribute_switched():
    model = _Activated()
    x = torch.randn(4)

    def run(x):
        return model(x)
    _check(run, lambda: (x,), lambda: (x,), lambda: setattr(model, "act", torch.tanh), "act",
           restore=lambda: setattr(model, "act", torch.relu))


def _lib_arg(x, lib):
    return lib.relu(x)


def test_torch_passed_in_then_a_namespace_whose_relu_is_tanh():
    x = torch.randn(4)
    _check(_lib_arg, lambda: (x, torch), lambda: (x, types.SimpleNamespace(relu=torch.tanh)), lambda: None, "lib")


def test_a_torch_attribute_monkeypatched(monkeypatch):
    x = torch.randn(4)

    def run(x):
        return torch.nn.functional.softsign(x)
    _check(run, lambda: (x,), lambda: (x,),
           lambda: monkeypatch.setattr(torch.nn.functional, "softsign", torch.tanh), "softsign",
           restore=monkeypatch.undo)


def _compiling_branch(x):
    return x + 1 if IS_COMPILING() else x - 1


def test_a_global_alias_of_is_compiling_rebound(monkeypatch):
    x = torch.zeros(3)
    compiled = jit.compile(_compiling_branch, backend="eager")
    assert_same(x + 1, compiled(x))  # compiled code is compiling
    monkeypatch.setattr(_THIS, "IS_COMPILING", lambda: False)
    assert_same(x - 1, compiled(x))
    jit.register(_compiling_branch)
    try:
        with jit.enabled(backend="eager"):
            monkeypatch.setattr(_THIS, "IS_COMPILING", torch.compiler.is_compiling)
            _compiling_branch(x)  # a registered function's first call in a block may run as it is
            assert_same(x + 1, _compiling_branch(x))
            monkeypatch.setattr(_THIS, "IS_COMPILING", lambda: False)
            assert_same(x - 1, _compiling_branch(x))
    finally:
        jit.unregister(_compiling_branch)


def _allowed(x):
    return ALLOWED(x)


def test_a_global_bound_to_an_allow_in_graph_function_rebound(monkeypatch):
    _check(_allowed, lambda: (torch.ones(3),), lambda: (torch.ones(3),),
           lambda: monkeypatch.setattr(_THIS, "ALLOWED", _triple), "G.ALLOWED",
           restore=lambda: monkeypatch.setattr(_THIS, "ALLOWED", _double))


# -- 2. classes changed after the call -------------------------------------------------------------------------

class _Weights:
    def w(self):
        return 2


class _Derived(_Weights):
    pass


class _Keyed:
    @property
    def k(self):
        return 3


class _Forward(torch.nn.Module):
    def forward(self, x):
        return x + 1


def _restorer(cls, names):
    saved = {name: cls.__dict__[name] for name in names if name in cls.__dict__}

    def restore():
        for name in names:
            if name in saved:
                setattr(cls, name, saved[name])
            elif name in cls.__dict__:
                delattr(cls, name)
    return restore


def test_a_method_replaced_on_the_class():
    obj = _Weights()
    _check(lambda x: x * obj.w(), lambda: (torch.ones(2),), lambda: (torch.ones(2),),
           lambda: setattr(_Weights, "w", lambda self: 5), "_Weights.w: was replaced",
           restore=_restorer(_Weights, ["w"]))


def test_a_method_overridden_in_a_subclass_later():
    obj = _Derived()
    _check(lambda x: x * obj.w(), lambda: (torch.ones(2),), lambda: (torch.ones(2),),
           lambda: setattr(_Derived, "w", lambda self: 11), "_Derived.w: now set to",
           restore=_restorer(_Derived, ["w"]))


def test_a_method_of_an_object_made_inside_replaced():
    _check(lambda x: x * _Weights().w(), lambda: (torch.ones(2),), lambda: (torch.ones(2),),
           lambda: setattr(_Weights, "w", lambda self: 13), "_Weights.w", restore=_restorer(_Weights, ["w"]))


def test_a_property_replaced_on_the_class():
    obj = _Keyed()
    _check(lambda x: x * obj.k, lambda: (torch.ones(2),), lambda: (torch.ones(2),),
           lambda: setattr(_Keyed, "k", property(lambda self: 7)), "_Keyed.k", restore=_restorer(_Keyed, ["k"]))


def test_a_modules_forward_replaced_on_the_class():
    model = _Forward()
    _check(lambda x: model(x), lambda: (torch.ones(2),), lambda: (torch.ones(2),),
           lambda: setattr(_Forward, "forward", lambda self, x: x * 10), "_Forward.forward",
           restore=_restorer(_Forward, ["forward"]))


def test_a_dunder_added_to_the_class_later():
    obj = _Weights()
    _check(lambda x: x + (obj == obj), lambda: (torch.ones(2),), lambda: (torch.ones(2),),
           lambda: setattr(_Weights, "__eq__", lambda self, other: False), "_Weights.__eq__",
           restore=_restorer(_Weights, ["__eq__", "__hash__"]))


# -- 3. a builtin shadowed later by a module global --------------------------------------------------------------

def _uses_len(x, items):
    return x * len(items)


def test_a_builtin_shadowed_by_a_module_global_later(monkeypatch):
    def shadow():
        monkeypatch.setattr(_THIS, "len", lambda s: 100, raising=False)

    def unshadow():
        monkeypatch.delattr(_THIS, "len", raising=False)
    _check(_uses_len, lambda: (torch.ones(2), [1, 2]), lambda: (torch.ones(2), [1, 2]), shadow, "G.len: now set to",
           restore=unshadow)


# -- 7. the same object passed as two arguments ------------------------------------------------------------------

def _append_and_measure(x, a, b):
    a.append(1)
    return x * len(b)


def _aliased_list():
    shared = []
    return (torch.ones(2), shared, shared)


def test_the_same_list_passed_twice_after_two_lists():
    _check(_append_and_measure, lambda: (torch.ones(2), [], []), _aliased_list, lambda: None,
           "is now the same object as a")


def test_two_lists_after_the_same_list_passed_twice():
    _check(_append_and_measure, _aliased_list, lambda: (torch.ones(2), [], []), lambda: None,
           "is no longer the same object as a")


def _add_then_read(a, b):
    a.add_(1)
    return b * 2


def test_the_same_tensor_passed_twice_after_two_tensors():
    def aliased():
        t = torch.zeros(3)
        return (t, t)
    _check(_add_then_read, lambda: (torch.zeros(3), torch.zeros(3)), aliased, lambda: None,
           "is now the same object as a")
    _check(_add_then_read, aliased, lambda: (torch.zeros(3), torch.zeros(3)), lambda: None,
           "is no longer the same object as a")


def test_a_dict_reached_as_an_argument_and_through_a_global(monkeypatch):
    def through_the_global():
        table = {"n": 1}
        monkeypatch.setattr(_THIS, "TABLE", table, raising=False)
        return (torch.ones(2), table)

    def bump(x, d):
        d["n"] += 1
        return x * TABLE["n"]
    _check(bump, through_the_global, lambda: (torch.ones(2), {"n": 1}), lambda: None,
           "is no longer the same object as d")


# -- code objects and defaults of functions found without a source; classes read from torch -----------------------

class _Defaults:
    def w(self, k=2):
        return k


def _code_plus_100(self, k=2):
    return k + 100


def _fn_restorer(fn):
    code, defaults = fn.__code__, fn.__defaults__

    def restore():
        fn.__code__, fn.__defaults__ = code, defaults
    return restore


def test_a_methods_defaults_changed():
    obj = _Defaults()
    _check(lambda x: x * obj.w(), lambda: (torch.ones(2),), lambda: (torch.ones(2),),
           lambda: setattr(_Defaults.w, "__defaults__", (5,)), "_Defaults.w: __defaults__ changed (2,) -> (5,)",
           restore=_fn_restorer(_Defaults.w))


def test_a_methods_code_replaced():
    obj = _Defaults()
    _check(lambda x: x * obj.w(), lambda: (torch.ones(2),), lambda: (torch.ones(2),),
           lambda: setattr(_Defaults.w, "__code__", _code_plus_100.__code__), "_Defaults.w: __code__ was replaced",
           restore=_fn_restorer(_Defaults.w))


KIND = torch.Tensor


def _is_kind(x, p):
    return x + 1 if isinstance(p, KIND) else x - 1


def test_a_global_alias_of_a_torch_class_rebound(monkeypatch):
    x = torch.zeros(2)
    _check(_is_kind, lambda: (x, torch.ones(2)), lambda: (x, torch.ones(2)),
           lambda: monkeypatch.setattr(_THIS, "KIND", torch.nn.Parameter), "G.KIND",
           restore=lambda: monkeypatch.setattr(_THIS, "KIND", torch.Tensor))


def test_a_forward_assigned_to_a_module_instance_later():
    model = torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Tanh())

    def restore():
        model[1].__dict__.pop("forward", None)
    _check(lambda x: model(x), lambda: (torch.ones(3),), lambda: (torch.ones(3),),
           lambda: setattr(model[1], "forward", lambda x: x * 100), "1.forward was set on the instance",
           restore=restore)


def test_tied_weights_untied_after_the_call_recompile():
    class Tied(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(3, 3, bias=False)
            self.b = torch.nn.Linear(3, 3, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))
    model = Tied()

    def untie():
        model.b.weight = torch.nn.Parameter(torch.ones(3, 3))

    def tie():
        model.b.weight = model.a.weight
    _check(lambda x: model(x), lambda: (torch.ones(2, 3),), lambda: (torch.ones(2, 3),), untie, restore=tie)
