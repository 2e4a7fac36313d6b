"""Hostile input: objects whose special methods raise or have side effects, tensor subclasses, hooks that come and
go, functions whose code, defaults or globals are replaced between calls, and re-entrant calls.

Every case runs the same calls eagerly and compiled (through `jit.compile` and through `register` + `enabled()`)
and requires the same results, the same exceptions and the same side effects, call after call.
"""
import types

import pytest
import torch

import jitcore as jit
from tests.support import compare_call, randn


def _both_ways(fn):
    """The compiled forms a user can reach: a jit.compile copy, and the function itself under enabled()."""
    yield jit.compile(fn)
    jit.register(fn)

    def under_enabled(*args, **kwargs):
        with jit.enabled():
            return fn(*args, **kwargs)
    yield under_enabled
    jit.unregister(fn)


# Special methods that raise or have side effects


class Loud:
    """Counts every __getattr__ / __eq__ / __bool__ / __len__ / __hash__ it serves."""

    def __init__(self, fail=None):
        self.__dict__["log"] = []
        self.__dict__["fail"] = fail

    def __getattr__(self, name):
        self.log.append(("getattr", name))
        if self.fail == "getattr":
            raise RuntimeError(f"no {name} today")
        return 2.0

    def __eq__(self, other):
        self.log.append(("eq", other))
        if self.fail == "eq":
            raise ValueError("cannot compare")
        return other == 3

    def __hash__(self):
        self.log.append(("hash",))
        if self.fail == "hash":
            raise TypeError("unhashable today")
        return 7

    def __bool__(self):
        self.log.append(("bool",))
        if self.fail == "bool":
            raise ZeroDivisionError("no truth")
        return True

    def __len__(self):
        self.log.append(("len",))
        if self.fail == "len":
            raise OverflowError("too long")
        return 4


def _uses_every_dunder(x, obj):
    y = x * obj.scale
    if obj == 3:
        y = y + 1
    if obj:
        y = y * 2
    table = {obj: 5}
    return y + len(obj) + table[obj]


@pytest.mark.parametrize("fail", [None, "getattr", "eq", "hash", "bool", "len"])
def test_special_methods_that_raise_or_log_behave_like_eager(fail):
    for compiled in _both_ways(_uses_every_dunder):
        for seed in (1, 2, 3):
            eager_obj, compiled_obj = Loud(fail), Loud(fail)
            x = randn(3, seed=seed)
            try:
                expected = _uses_every_dunder(x, eager_obj)
            except Exception as eager_error:  # noqa: BLE001
                with pytest.raises(type(eager_error), match=str(eager_error)):
                    compiled(x, compiled_obj)
            else:
                torch.testing.assert_close(compiled(x, compiled_obj), expected)
            assert compiled_obj.log == eager_obj.log


class Flaky:
    """A guarded attribute whose __eq__ raises: the guard must treat it as a miss, never crash the call."""

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        raise RuntimeError("do not compare me")

    __hash__ = object.__hash__


def test_object_whose_eq_raises_inside_a_guard_gives_eager_results():
    def f(x, box):
        return x * len(box.items)

    compiled = jit.compile(f)
    box = types.SimpleNamespace(items=[Flaky(1), Flaky(2)])
    for n in (2, 3, 1):
        box.items = [Flaky(i) for i in range(n)]
        torch.testing.assert_close(compiled(randn(2, seed=n), box), f(randn(2, seed=n), box))


# Tensor subclasses


class Plain(torch.Tensor):
    """A subclass without overrides."""


class Logged(torch.Tensor):
    """A subclass that records every torch call made on it."""

    calls: list = []

    @classmethod
    def __torch_function__(cls, func, types_, args=(), kwargs=None):
        cls.calls.append(getattr(func, "__name__", str(func)))
        return super().__torch_function__(func, types_, args, kwargs or {})


@pytest.mark.parametrize("subclass", [Plain, Logged, torch.nn.Parameter])
def test_tensor_subclass_arguments_give_eager_results_and_types(subclass):
    def f(x, y):
        return (x * 2 + y).sum(0), x.relu()

    for compiled in _both_ways(f):
        for seed in (1, 2):
            Logged.calls = []
            x = randn(3, 4, seed=seed).as_subclass(subclass) if subclass is not torch.nn.Parameter \
                else torch.nn.Parameter(randn(3, 4, seed=seed))
            y = randn(4, seed=seed + 10)
            expected = f(x, y)
            eager_calls = list(Logged.calls)
            Logged.calls = []
            actual = compiled(x, y)
            compiled_calls = list(Logged.calls)
            for a, e in zip(actual, expected):
                assert type(a) is type(e)
                torch.testing.assert_close(a.detach().as_subclass(torch.Tensor),
                                           e.detach().as_subclass(torch.Tensor))
            assert compiled_calls == eager_calls


def test_switching_between_plain_and_subclass_tensors_recompiles_correctly():
    def f(x):
        return x.exp()

    compiled = jit.compile(f)
    for x in (randn(3, seed=1), randn(3, seed=2).as_subclass(Plain), randn(3, seed=3)):
        out = compiled(x)
        assert type(out) is type(f(x))
        torch.testing.assert_close(out.as_subclass(torch.Tensor), f(x).as_subclass(torch.Tensor))


# Hooks that come and go


def test_forward_hooks_added_and_removed_between_calls():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    compiled = jit.compile(model)
    seen = []
    x = randn(3, 4, seed=1)
    torch.testing.assert_close(compiled(x), model(x))
    handle = model[0].register_forward_hook(lambda m, a, out: out * 10)
    pre = model[2].register_forward_pre_hook(lambda m, a: seen.append(a[0].shape))
    torch.testing.assert_close(compiled(x), model(x))
    assert len(seen) == 2
    handle.remove()
    torch.testing.assert_close(compiled(x), model(x))
    pre.remove()
    torch.testing.assert_close(compiled(x), model(x))
    assert len(seen) == 4


def test_global_forward_hook_registered_after_compiling_is_honoured():
    model = torch.nn.Linear(4, 4)
    compiled = jit.compile(model)
    x = randn(2, 4, seed=1)
    compiled(x)
    seen = []
    handle = torch.nn.modules.module.register_module_forward_hook(
        lambda m, a, out: seen.append((type(m).__name__, m.__dict__ is model.__dict__)))
    try:
        torch.testing.assert_close(compiled(x), model(x))
    finally:
        handle.remove()
    # the compiled module shares the original's state and its class name
    assert seen == [("Linear", True), ("Linear", True)]


# Functions whose code, defaults or globals change between calls


def test_replacing_code_of_the_compiled_function_between_calls():
    def f(x):
        return x + 1

    def g(x):
        return x * 100

    compiled = jit.compile(f)
    x = randn(3, seed=1)
    torch.testing.assert_close(compiled(x), x + 1)
    f.__code__ = g.__code__
    torch.testing.assert_close(compiled(x), x * 100)


def helper(x):
    return x + 1


def _times_hundred(x):
    return x * 100


def test_replacing_code_of_an_inlined_helper_between_calls():
    def f(x):
        return helper(x) * 2

    original = helper.__code__
    for compiled in _both_ways(f):
        x = randn(3, seed=1)
        try:
            torch.testing.assert_close(compiled(x), (x + 1) * 2)
            helper.__code__ = _times_hundred.__code__
            torch.testing.assert_close(compiled(x), (x * 100) * 2)
        finally:
            helper.__code__ = original


def test_replacing_defaults_between_calls():
    def scaled(x, k=2):
        return x * k

    def f(x):
        return scaled(x) + 1

    compiled = jit.compile(f)
    x = randn(3, seed=1)
    torch.testing.assert_close(compiled(x), x * 2 + 1)
    scaled.__defaults__ = (5,)
    torch.testing.assert_close(compiled(x), x * 5 + 1)

    def g(x, k=3):
        return x * k

    compiled_g = jit.compile(g)
    torch.testing.assert_close(compiled_g(x), x * 3)
    g.__defaults__ = (7,)
    torch.testing.assert_close(compiled_g(x), x * 7)


SCALE = 2.0


def scale_by_global(x):
    return x * SCALE


def test_replacing_a_global_and_a_global_function_between_calls():
    global SCALE, scale_by_global
    original = scale_by_global

    def f(x):
        return scale_by_global(x) + SCALE

    try:
        for compiled in _both_ways(f):
            SCALE = 2.0
            scale_by_global = original
            x = randn(3, seed=1)
            compare_call(f, compiled, (x,))
            SCALE = 3.0
            compare_call(f, compiled, (x,))
            scale_by_global = lambda t: t - 1  # noqa: E731
            compare_call(f, compiled, (x,))
    finally:
        SCALE = 2.0
        scale_by_global = original


def test_function_with_swapped_globals_dict_via_new_function_object():
    def f(x):
        return x * FACTOR  # noqa: F821 - provided by the globals each copy is made with

    first = types.FunctionType(f.__code__, {"FACTOR": 2}, "f")
    second = types.FunctionType(f.__code__, {"FACTOR": 5}, "f")
    x = randn(3, seed=1)
    torch.testing.assert_close(jit.compile(first)(x), x * 2)
    torch.testing.assert_close(jit.compile(second)(x), x * 5)
    torch.testing.assert_close(jit.compile(first)(x), x * 2)


# Re-entrant calls


def test_compiled_function_called_from_a_forward_hook_of_a_compiled_model():
    def post(x):
        return x.tanh() * 3

    compiled_post = jit.compile(post)
    model = torch.nn.Linear(4, 4)
    model.register_forward_hook(lambda m, a, out: compiled_post(out))
    compiled = jit.compile(model)
    x = randn(2, 4, seed=1)
    for _ in range(3):
        torch.testing.assert_close(compiled(x), post(torch.nn.functional.linear(x, model.weight, model.bias)))


def test_compiled_function_called_from_inside_a_backend():
    inner = jit.compile(lambda t: t * 2)

    def backend(gm, example_inputs):
        inner(torch.ones(2))  # re-enters jitcore while it is compiling another function
        return gm.forward

    def f(x):
        return x.sin() + 1

    compiled = jit.compile(f, backend=backend)
    x = randn(3, seed=1)
    for _ in range(2):
        torch.testing.assert_close(compiled(x), f(x))
    torch.testing.assert_close(inner(x), x * 2)


def test_recursive_compiled_function_matches_eager():
    def fact(x, n):
        if n <= 1:
            return x
        return x * n + compiled_fact(x, n - 1)

    compiled_fact = jit.compile(fact)
    x = randn(3, seed=1)
    expected = fact.__wrapped__(x, 5) if hasattr(fact, "__wrapped__") else None
    eager = x * 5 + (x * 4 + (x * 3 + (x * 2 + x)))
    torch.testing.assert_close(compiled_fact(x, 5), eager)
    assert expected is None or torch.allclose(expected, eager)


def test_function_registered_and_called_inside_itself_under_enabled():
    def walk(x, depth):
        if depth == 0:
            return x
        return walk(x + depth, depth - 1) * 1.5

    jit.register(walk)
    try:
        expected = walk(randn(3, seed=1), 4)
        with jit.enabled():
            actual = walk(randn(3, seed=1), 4)
            again = walk(randn(3, seed=1), 4)
    finally:
        jit.unregister(walk)
    torch.testing.assert_close(actual, expected)
    torch.testing.assert_close(again, expected)
