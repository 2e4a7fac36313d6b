"""The console says each thing once and in the user's words: a break once per place in the user's code (whichever
resume function or recompile met it again), never an unknown location, resume labels that read as the function
and line, a function's recompiles and graphs shown once then counted, a cache-limit hint that fits what changes,
summary counts that add up, and blocks that stay within one width with no line restarting at column 0."""
import io
import os

import pytest
import torch
import torch.nn as nn
from rich.console import Console

import jitcore as jit
from jitcore.capture.breaks import GraphBreak
from jitcore.config import config
from jitcore.report import console as console_module
from jitcore.report.console import EVENTS, use_console
from jitcore.report.describe import break_location, frame_of
from jitcore.report import summary as report_summary
from jitcore.runtime.install import ALL_CACHES
from tests.breaks.helpers import line_of

_THIS_FILE = os.path.basename(__file__)


def _printed(width, run) -> str:
    buffer = io.StringIO()
    with use_console(Console(file=buffer, width=width, color_system=None)):
        run()
    return buffer.getvalue()


def _prints_twice(x, n):
    y = x * n
    print("one")
    z = y + 1
    print("two")
    return z


def test_a_break_met_again_after_recompiles_and_from_resume_functions_is_printed_once(monkeypatch, capsys):
    monkeypatch.setattr(config, "log", "breaks")
    compiled = jit.compile(_prints_twice, backend="eager", dynamic=False)

    def run():
        for n in range(1, 4):
            for size in (2, 3):
                torch.testing.assert_close(compiled(torch.ones(size), n), _prints_twice(torch.ones(size), n))
    text = _printed(100, run)
    assert text.count("jitcore · graph break") == 2, text
    for printed in ('print("one")', 'print("two")'):
        assert text.count(f"{_THIS_FILE}:{line_of(_prints_twice, printed)} in _prints_twice()") == 1


def test_an_unlocated_break_is_placed_at_the_function_never_at_an_unknown_location():
    brk = GraphBreak("print_or_io", "print()")
    filename, lineno, _, function = break_location(_prints_twice.__code__, brk)
    assert (filename, lineno, function) == (__file__, _prints_twice.__code__.co_firstlineno, "_prints_twice")


def _formats(x):
    y = x.sin()
    print(f"mean {y.mean().item():.3f}")
    return y


def test_resume_labels_read_as_the_function_and_line_never_a_fragment(monkeypatch):
    jit.compile(_formats, backend="eager")(torch.ones(3))
    line = line_of(_formats, "print(f")
    labels = {frame_of(cache.code).label for cache in list(ALL_CACHES)
              if frame_of(cache.code).function == "_formats"}
    assert labels, "resume functions were made"
    for label in labels:
        assert "`.3f`" not in label and "jitcore_resume" not in label, labels
        assert label == "_formats()" or label.startswith(f"_formats() from line {line}") \
            or label.startswith(f"_formats() from within line {line}"), labels
    assert f"_formats() from line {line}, after `y.mean().item()`" in labels, labels


def _step(x, w):
    y = (x @ w).relu()
    print("loss", float(y.sum()))
    return y


def test_a_long_loop_under_log_all_says_each_thing_once_then_counts(monkeypatch):
    monkeypatch.setattr(config, "log", "all")
    compiled = jit.compile(_step, backend="eager")
    w = torch.randn(4, 4)

    def run():
        for i in range(60):
            compiled(torch.randn(2 + i % 5, 4), w)
    text = _printed(100, run)
    shown = [line for line in text.splitlines() if not line.startswith("loss")]
    assert text.count("jitcore · recompile") <= 2, text
    assert len(shown) < 150, len(shown)
    counted = console_module.counted_lines()
    assert counted and all("not shown" in line for line in counted), counted


def _scaled(x, n):
    return x * n


def _sine(x):
    return x.sin()


class _Lin(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)

    def forward(self, x):
        return self.lin(x).relu()


def _limit_hint(run) -> str:
    text = _printed(120, run)
    assert "jitcore · cache limit" in text, text
    return " ".join(text.split())


def test_cache_limit_hint_for_a_python_scalar_says_pass_it_as_a_tensor():
    f = jit.compile(_scaled, backend="eager", cache_limit=2, dynamic=False)
    text = _limit_hint(lambda: [f(torch.ones(2), n) for n in range(4)])
    assert "the Python value n keeps changing: pass it as a tensor" in text


def test_cache_limit_hint_for_changing_shapes_says_mark_dynamic_not_tensor():
    f = jit.compile(_sine, backend="eager", cache_limit=2, dynamic=False)
    text = _limit_hint(lambda: [f(torch.ones(n)) for n in range(1, 5)])
    assert "the shape of x keeps changing" in text and "jit.mark_dynamic(x, dim)" in text and "dynamic=True" in text
    assert "as a tensor" not in text


def test_cache_limit_hint_for_another_self_says_compile_the_instance_not_tensor():
    # with room for a second entry, another instance would share one entry by structure (no limit): limit 1
    f = jit.compile(_Lin.forward, backend="eager", cache_limit=1)
    modules = [_Lin() for _ in range(4)]
    text = _limit_hint(lambda: [f(m, torch.ones(2)) for m in modules])
    assert "self is a different object in each call" in text and "jit.compile(module)" in text
    assert "as a tensor" not in text


def test_summary_counts_add_up_over_its_rows():
    jit.compile(_prints_twice, backend="eager")(torch.ones(2), 2)
    jit.compile(_sine, backend="eager")(torch.ones(2))
    summary = report_summary.collect(list(ALL_CACHES))
    assert len(summary.rows) == summary.functions_compiled + summary.functions_native
    assert summary.graphs == sum(row.graphs for row in summary.rows)
    assert len(summary.breaks) == sum(row.breaks for row in summary.rows)
    headline = summary.headline()
    assert headline.startswith(f"{len(summary.rows)} functions") and f"{summary.graphs} graphs" in headline
    assert all(row.function != "<lambda>()" for row in summary.rows)


@pytest.mark.parametrize("width", [80, 100])
def test_every_block_stays_within_its_width_and_no_line_restarts_at_column_zero(monkeypatch, width):
    monkeypatch.setattr(config, "log", "all")

    def run():
        compiled = jit.compile(_formats, backend="eager")
        for n in (3, 4, 5):
            compiled(torch.ones(n))
        jit.compile(_scaled, backend="eager", cache_limit=1, dynamic=False)(torch.ones(2), 1)
        jit.compile(_scaled, backend="eager", cache_limit=1, dynamic=False)(torch.ones(2), 2)
    text = _printed(width, run)
    for line in text.splitlines():
        if line.startswith("mean "):
            continue  # the program's own output
        assert len(line) <= width, line
        assert line.startswith(("jitcore · ", " ")) or not line, f"a line restarts at column 0: {line!r}"
