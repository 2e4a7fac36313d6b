"""Internal objects in the user's words: resume functions, stack slots, paths and a concrete hint per break kind."""
import os

import pytest
import torch

import jitcore as jit
from jitcore.capture.breaks import KINDS, GraphBreak
from jitcore.capture.values import call_rules
from jitcore.report.describe import frame_of, hint_for, readable, short_path, snippet
from jitcore.runtime.install import ALL_CACHES
from tests.breaks.helpers import line_of


def _print_then_branch(x):
    y = x + 1
    print("a")
    if y.sum() > 0:
        return y * 2
    return y


def test_resume_functions_read_as_the_function_and_the_line_they_continue_at():
    jit.compile(_print_then_branch, backend="eager")(torch.ones(2))
    labels = {frame_of(cache.code).label for cache in ALL_CACHES if cache.entries}
    printed = line_of(_print_then_branch, 'print("a")')
    taken = line_of(_print_then_branch, "return y * 2")
    assert {"_print_then_branch()", f'_print_then_branch() from line {printed}, after `print("a")`',
            f"_print_then_branch() from line {taken}"} <= labels


def test_internal_names_in_free_text_are_rewritten():
    assert readable("___stack0: shape[0] changed 3 -> 4") == "stack slot 0: shape[0] changed 3 -> 4"
    assert readable("recompiling jitcore_resume_in_f_at_12() at x.py:3") == "recompiling f() at line 12 at x.py:3"
    assert readable("___stackx and jitcore_resume_in_") == "___stackx and jitcore_resume_in_"


def test_paths_are_short():
    assert short_path("/x/lib/python3.12/site-packages/torch/nn/modules/linear.py") == "torch/nn/modules/linear.py"
    assert short_path(os.path.join(os.getcwd(), "train.py")) == "train.py"
    assert short_path("<string>") == "<string>"


def test_snippet_marks_the_line_and_keeps_a_few_around():
    line = line_of(_print_then_branch, 'print("a")')
    rows = snippet(__file__, line, context=1)
    assert [(number, marked) for number, _, marked in rows] == [(line - 1, False), (line, True), (line + 1, False)]
    assert rows[1][1] == 'print("a")'  # the common indentation is removed


def _raised(operation) -> GraphBreak:
    """The break an operation of capture raises (with the typed fields its raise site gives it)."""
    with pytest.raises(GraphBreak) as caught:
        operation()
    return caught.value


@pytest.mark.parametrize("brk, line, expected", [
    (GraphBreak("print_or_io", "print()"), 'print("x")', "move the print/log call out of step()"),
    (GraphBreak("tensor_branch"), "if x.sum() > 0:", "use torch.where(x.sum() > 0, a, b) instead of a Python `if`"),
    (GraphBreak("data_dependent"), "n = x.sum().item()", "instead of calling .item() inside step()"),
    (GraphBreak("disabled_function"), "helper(x)", "marked with jit.disable"),
    (_raised(lambda: call_rules.call(None, torch.set_num_threads, [], {})), "torch.set_num_threads(1)",
     "call torch.set_num_threads once outside step()"),
    (GraphBreak("unsupported_call", "builtin open on these arguments"), "open(p)", "mark the callee with @jit.disable"),
    (GraphBreak("recursion_limit"), "return fib(n - 1)", "mark the recursive helper with @jit.disable"),
])
def test_hints_are_concrete_per_kind(brk, line, expected):
    assert expected in hint_for(brk, line, "step")


def test_every_break_kind_has_a_hint():
    for kind in KINDS.values():
        assert hint_for(GraphBreak(kind.id), "", "step")


def test_every_hint_variant_fills_in():
    for kind in KINDS.values():
        for variant in kind.hints:
            fields = {"where": "step()", "condition": "c", "call": ".item()", "callee": "torch.f"}
            assert kind.hint_text(variant, **fields)
