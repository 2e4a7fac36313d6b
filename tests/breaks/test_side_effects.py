"""Side effects made before a graph break (or before return) are replayed in order and exactly once.

Lists on inputs (append, pop), attribute writes on passed objects and modules, module-level globals of this test
module (restored after each test by monkeypatch), dict updates and closure cells (`nonlocal`) must end up as eager
leaves them, after several calls, and the native step at the break (a print) must already see them.
"""

import pytest
import torch
from torch import nn

import jitcore as jit
from tests.breaks.helpers import check_breaks, compare_printing
from tests.support import randn

COUNTER = 0
HISTORY = []


@pytest.fixture
def module_globals(monkeypatch):
    """Fresh values for this module's globals, restored after the test."""
    monkeypatch.setitem(globals(), "COUNTER", 0)
    monkeypatch.setitem(globals(), "HISTORY", [])
    return globals()


class _Box:
    def __init__(self):
        self.value = 0
        self.seen = []


class _CallCounting(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        print("forward", self.calls)
        return x * self.calls


def _twins(make, count=2):
    """`count` independent copies of some state (one for eager, one for compiled)."""
    return [make() for _ in range(count)]


def test_list_append_on_input_before_print_happens_once(counting, capsys):
    def f(x, out):
        out.append(x.shape[0])
        print("appended")
        return x + 1

    check_breaks(f, (randn(3, seed=1), [0]), counting=counting, capsys=capsys)


def test_list_append_of_tensor_before_print_happens_once(counting, capsys):
    def f(x, out):
        out.append(x * 2)
        print("appended")
        return x + 1

    check_breaks(f, (randn(3, seed=1), [randn(3, seed=2)]), counting=counting, capsys=capsys)


def test_list_pop_on_input_before_print_happens_once(counting, capsys):
    def f(x, stack):
        top = stack.pop()
        print("popped", len(stack))
        return x + top

    check_breaks(f, (randn(3, seed=1), [1, 2, 3, 4]), counting=counting, capsys=capsys)


def test_list_appends_before_and_after_break_keep_order(counting, capsys):
    def f(x, out):
        out.append("before")
        print("middle")
        out.append("after")
        return x * 2

    check_breaks(f, (randn(3, seed=1), []), counting=counting, capsys=capsys)


def test_list_mutation_before_break_is_visible_to_print(counting, capsys):
    def f(x, out):
        out.append(len(out))
        out.append(x.shape[0])
        print(out)
        return x - 1

    check_breaks(f, (randn(2, seed=1), [7]), counting=counting, capsys=capsys)


def test_list_append_counts_after_several_calls_equal_eager(counting, capsys):
    def f(x, out):
        out.append(x.shape[0])
        print("n", len(out))
        return x * len(out)

    eager_list, compiled_list = [], []
    compiled = jit.compile(f, backend=counting)
    for seed in range(4):
        compare_printing(lambda x: f(x, eager_list), lambda x: compiled(x, compiled_list), (randn(3, seed=seed),),
                         capsys)
    assert compiled_list == eager_list == [3, 3, 3, 3]


def test_attribute_write_on_passed_object_before_print_happens_once(counting, capsys):
    def f(x, box):
        box.value += 1
        box.seen.append(box.value)
        print("value", box.value)
        return x * box.value

    eager_box, compiled_box = _twins(_Box)
    compiled = jit.compile(f, backend=counting)
    for seed in range(3):
        compare_printing(lambda x: f(x, eager_box), lambda x: compiled(x, compiled_box), (randn(2, seed=seed),),
                         capsys)
    assert (compiled_box.value, compiled_box.seen) == (eager_box.value, eager_box.seen) == (3, [1, 2, 3])


def test_new_attribute_set_before_print_is_visible_after(counting, capsys):
    def f(x, box):
        box.label = f"n{x.shape[0]}"
        print("label", box.label)
        return x + len(box.label)

    eager_box, compiled_box = _twins(_Box)
    compiled = jit.compile(f, backend=counting)
    compare_printing(lambda x: f(x, eager_box), lambda x: compiled(x, compiled_box), (randn(4, seed=1),), capsys)
    assert compiled_box.label == eager_box.label == "n4"


def test_module_calls_counter_incremented_once_per_call_with_print(counting, capsys):
    eager_model, model = _twins(_CallCounting)
    compiled = jit.compile(model, backend=counting)
    for seed in range(4):
        compare_printing(eager_model, compiled, (randn(2, seed=seed),), capsys)
    assert model.calls == eager_model.calls == 4


def test_global_write_before_print_happens_once(counting, capsys, module_globals):
    def f(x):
        global COUNTER
        COUNTER += 1
        print("counter", COUNTER)
        return x * COUNTER

    compiled = jit.compile(f, backend=counting)
    eager_values, compiled_values = [], []
    for seed in range(3):
        module_globals["COUNTER"] = len(eager_values)
        expected = f(randn(2, seed=seed))
        eager_values.append(module_globals["COUNTER"])
        module_globals["COUNTER"] = len(compiled_values)
        torch.testing.assert_close(compiled(randn(2, seed=seed)), expected)
        compiled_values.append(module_globals["COUNTER"])
    assert compiled_values == eager_values == [1, 2, 3]
    out = capsys.readouterr().out
    assert out == "counter 1\ncounter 1\ncounter 2\ncounter 2\ncounter 3\ncounter 3\n"


def test_global_counter_after_several_calls_equals_call_count(counting, capsys, module_globals):
    def f(x):
        global COUNTER
        y = x + 1
        COUNTER += 1
        print("tick")
        return y

    compiled = jit.compile(f, backend=counting)
    for seed in range(5):
        compiled(randn(2, seed=seed))
    assert module_globals["COUNTER"] == 5


def test_global_list_append_before_print_happens_once(counting, capsys, module_globals):
    def f(x):
        HISTORY.append(x.shape[0])
        print("history", HISTORY)
        return x * 2

    compiled = jit.compile(f, backend=counting)
    for seed in range(3):
        compiled(randn(seed + 1, seed=seed))
    assert module_globals["HISTORY"] == [1, 2, 3]
    assert capsys.readouterr().out == "history [1]\nhistory [1, 2]\nhistory [1, 2, 3]\n"


def test_global_write_before_tensor_branch_happens_once(counting, capsys, module_globals):
    def f(x):
        global COUNTER
        COUNTER += 10
        if x.sum() > 0:
            return x + COUNTER
        return x - COUNTER

    compiled = jit.compile(f, backend=counting)
    for sign in (1, -1, 1):
        compiled(sign * torch.ones(2))
    assert module_globals["COUNTER"] == 30


def test_dict_update_before_print_happens_once(counting, capsys):
    def f(x, d):
        d["n"] = d.get("n", 0) + 1
        d.update(shape=tuple(x.shape))
        print(sorted(d))
        return x * d["n"]

    check_breaks(f, (randn(3, seed=1), {"n": 5}), counting=counting, capsys=capsys)


def test_dict_counts_after_several_calls_equal_eager(counting, capsys):
    def f(x, d):
        d["calls"] = d.get("calls", 0) + 1
        print("calls", d["calls"])
        d["last"] = d["calls"] * 10
        return x + d["calls"]

    eager_dict, compiled_dict = {}, {}
    compiled = jit.compile(f, backend=counting)
    for seed in range(3):
        compare_printing(lambda x: f(x, eager_dict), lambda x: compiled(x, compiled_dict), (randn(2, seed=seed),),
                         capsys)
    assert compiled_dict == eager_dict == {"calls": 3, "last": 30}


def test_dict_delete_before_print_happens_once(counting, capsys):
    def f(x, d):
        del d["drop"]
        print("keys", list(d))
        return x + len(d)

    check_breaks(f, (randn(2, seed=1), {"drop": 1, "keep": 2}), counting=counting, capsys=capsys)


def test_closure_nonlocal_counter_with_print_after_several_calls(counting, capsys):
    def make():
        count = 0

        def f(x):
            nonlocal count
            count += 1
            print("count", count)
            return x * count

        return f, lambda: count

    eager_f, eager_count = make()
    f, count = make()
    compiled = jit.compile(f, backend=counting)
    for seed in range(4):
        compare_printing(eager_f, compiled, (randn(2, seed=seed),), capsys)
    assert count() == eager_count() == 4


def test_closure_nonlocal_write_after_break_is_visible_to_next_call(counting, capsys):
    def make():
        last = None

        def f(x):
            nonlocal last
            print("last", last)
            last = x.shape[0]
            return x + 1

        return f, lambda: last

    eager_f, eager_last = make()
    f, last = make()
    compiled = jit.compile(f, backend=counting)
    for n in (2, 3, 3):
        compare_printing(eager_f, compiled, (randn(n, seed=n),), capsys)
    assert last() == eager_last() == 3


def test_side_effects_before_return_without_break_happen_once(counting, capsys):
    def f(x, out, box):
        out.append(x.shape[0])
        box.value += 1
        return x * 2

    eager_box, compiled_box = _twins(_Box)
    eager_out, compiled_out = [], []
    compiled = jit.compile(f, backend=counting)
    for seed in range(3):
        torch.testing.assert_close(compiled(randn(2, seed=seed), compiled_out, compiled_box),
                                   f(randn(2, seed=seed), eager_out, eager_box))
    assert compiled_out == eager_out == [2, 2, 2]
    assert compiled_box.value == eager_box.value == 3


def test_side_effects_before_break_then_exception_happen_once(counting, capsys):
    def f(x, out):
        out.append("start")
        print("about to fail")
        raise ValueError(f"failed after {len(out)}")

    check_breaks(f, (randn(2, seed=1), []), counting=counting, capsys=capsys)


def test_side_effect_seen_by_disabled_function_at_break(counting, capsys):
    @jit.disable
    def read(box):
        return box.value

    def f(x, box):
        box.value = 41
        seen = read(box)
        return x + seen

    eager_box, compiled_box = _twins(_Box)
    compiled = jit.compile(f, backend=counting)
    torch.testing.assert_close(compiled(torch.zeros(2), compiled_box), f(torch.zeros(2), eager_box))
    assert compiled_box.value == 41


def test_side_effects_in_loop_with_print_happen_once_per_iteration(counting, capsys):
    def f(x, out):
        for i in range(5):
            out.append(i)
            print(len(out))
        return x + len(out)

    check_breaks(f, (randn(2, seed=1), []), counting=counting, capsys=capsys)
