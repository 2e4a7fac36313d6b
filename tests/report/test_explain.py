"""jit.explain(): the whole function is reported (graphs after each break too), in the user's names and lines,
with the same counts in the text, the rich view and the HTML page."""
import html.parser
import io
import os

import pytest
import torch
from rich.console import Console

import jitcore as jit
from tests.breaks.helpers import line_of

_THIS_FILE = os.path.basename(__file__)


def _prints_between(x):
    y = x + 1
    print("inside")
    return torch.sin(y) * 2


def _branches_on_a_tensor(x):
    y = x * 3
    if y.sum() > 0:
        y = y - 1
    return y.cos()


def _noisy(t):
    print("noisy")
    return t * 2


def _calls_noisy_twice(x):
    a = _noisy(x)
    b = _noisy(x[:2])
    return a.sum() + b.sum()


def _raises_after_a_graph(x):
    y = x.relu()
    raise ValueError("bad input")


def _straight(x, w):
    return torch.relu(x @ w).sum(dim=1)


def test_graphs_after_a_break_are_reported_with_where_they_resume(capsys):
    report = jit.explain(_prints_between, torch.randn(3))
    assert capsys.readouterr().out == "inside\n"  # explain runs the function once
    assert report.graph_count == 2
    assert report.ops_per_graph == [1, 2]
    assert report.graphs[0].frame.label == "_prints_between()"
    line = line_of(_prints_between, 'print("inside")')
    assert report.graphs[1].frame.label == f'_prints_between() from line {line}, after `print("inside")`'
    assert "torch.sin" in report.graphs[1].readable_code


def test_break_names_the_users_file_line_source_and_a_concrete_hint():
    report = jit.explain(_prints_between, torch.randn(3))
    assert report.graph_break_count == 1
    brk = report.breaks[0]
    line = line_of(_prints_between, 'print("inside")')
    assert (os.path.basename(brk.filename), brk.lineno) == (_THIS_FILE, line)
    assert brk.source_line == 'print("inside")'
    assert brk.function == "_prints_between"
    assert "move the print" in brk.hint and "_prints_between()" in brk.hint
    marked = [(number, text) for number, text, is_break in brk.lines if is_break]
    assert marked == [(line, '    print("inside")')]
    assert len(brk.lines) >= 3  # a few lines around it


def test_text_report_shows_locations_and_never_internal_names():
    report = jit.explain(_branches_on_a_tensor, torch.ones(3))
    text = str(report)
    branch = line_of(_branches_on_a_tensor, "if y.sum() > 0:")
    assert f"{_THIS_FILE}:{branch}" in text
    assert "if y.sum() > 0:" in text
    assert "torch.where(y.sum() > 0, a, b)" in text  # the hint quotes the condition
    assert f"_branches_on_a_tensor() from line {branch + 1}" in text  # the taken branch's resume function
    assert "jitcore_resume" not in text and "___stack" not in text


def test_carried_stack_slots_are_named_in_words():
    text = str(jit.explain(_prints_between, torch.randn(3)))  # print's result is on the stack at the break
    assert "stack slot 0" in text and "___stack" not in text


def test_counts_agree_in_fields_text_and_html():
    report = jit.explain(_branches_on_a_tensor, torch.ones(3))
    assert report.graph_count == len(report.graphs) == len(report.ops_per_graph)
    assert report.graph_break_count == len(report.breaks) == len(report.break_reasons)
    assert len(report.guards) == sum(len(tree) for _, tree in report.guards.trees)
    headline = (f"graphs: {report.graph_count}   graph breaks: {report.graph_break_count}   "
                f"ops: {sum(report.ops_per_graph)}   guards: {len(report.guards)}")
    assert headline in str(report)
    page = report._repr_html_()
    for label, value in (("graphs", report.graph_count), ("graph breaks", report.graph_break_count),
                         ("ops", sum(report.ops_per_graph)), ("guards", len(report.guards))):
        assert f"<td>{label}</td><td>{value}</td>" in page
    assert page.count('<details class="graph"') == report.graph_count
    assert page.count('<details class="break"') == report.graph_break_count


def test_save_html_writes_one_self_contained_page_with_the_same_facts(tmp_path):
    report = jit.explain(_prints_between, torch.randn(3))
    path = tmp_path / "report.html"
    assert report.save_html(path) == str(path)
    page = path.read_text(encoding="utf-8")
    line = line_of(_prints_between, 'print("inside")')
    assert page.startswith("<!DOCTYPE html>")
    for fact in (f"{_THIS_FILE}:{line}", "print(&quot;inside&quot;)", "move the print", "_prints_between() from line",
                 "graph 1", "TensorMatch"):
        assert fact in page, fact
    assert "<script" not in page and "<link" not in page and "src=" not in page  # nothing to fetch
    parser = html.parser.HTMLParser()
    parser.feed(page)  # well-formed enough for the standard parser
    parser.close()


def test_recompiles_during_the_call_are_reported():
    report = jit.explain(_calls_noisy_twice, torch.randn(4))
    line = line_of(_noisy, "print")
    assert report.recompiles == [f'_noisy() from line {line}, after `print("noisy")`: t.shape[0] changed 4 -> 2: now dynamic']
    assert "recompiles: 1" in str(report)
    assert report.graph_break_count == 1  # one break site, met from two calls
    assert "_noisy()" in report.breaks[0].hint


def test_an_exception_of_the_call_is_reported_with_what_ran_before():
    report = jit.explain(_raises_after_a_graph, torch.randn(3))
    assert isinstance(report.error, ValueError)
    assert "the call raised ValueError: bad input" in str(report)


def test_drill_down_parts_render_on_their_own():
    report = jit.explain(_prints_between, torch.randn(3))
    graph, brk, guards = report.graphs[1], report.breaks[0], report.guards
    assert "torch.sin" in str(graph) and graph.code == graph.gm.code  # a GraphModule underneath
    torch.testing.assert_close(graph(torch.ones(3))[0], torch.sin(torch.ones(3)) * 2)
    assert 'print("inside")' in str(brk) and "hint" in str(brk)
    assert '<span class="mark">' in brk._repr_html_()
    assert "_prints_between() from line" in guards.pretty()
    assert len(guards) == report_guard_count(report)


def report_guard_count(report) -> int:
    return int(str(report).split("guards: ")[1].split()[0])


def test_report_reads_well_at_80_and_200_columns():
    report = jit.explain(_branches_on_a_tensor, torch.ones(3))
    for width in (80, 200):
        buffer = io.StringIO()
        Console(file=buffer, width=width, color_system=None).print(report)
        lines = buffer.getvalue().splitlines()
        assert max(len(line) for line in lines) <= width
        assert not [line for line in lines if line != line.rstrip()], "no trailing blanks"


def test_explain_keeps_the_torch_dynamo_like_fields():
    report = jit.explain(_straight, torch.randn(3, 4), torch.randn(4, 2))
    assert (report.graph_count, report.graph_break_count, report.break_reasons) == (1, 0, [])
    assert report.ops_per_graph == [3]
    assert set(report.compile_time) == {"capture", "backend", "codegen"}
    assert "x: TensorMatch" in str(report)


def test_explain_does_not_print_live_messages_or_mark_them_seen(monkeypatch):
    from jitcore.config import config
    from jitcore.report.console import EVENTS
    monkeypatch.setattr(config, "log", "all")
    buffer = io.StringIO()
    from jitcore.report.console import use_console
    with use_console(Console(file=buffer, width=80)):
        jit.explain(_prints_between, torch.randn(3))
        assert buffer.getvalue() == ""
        jit.compile(_prints_between, backend="eager")(torch.randn(3))  # the break is still news afterwards
    assert any(topic == "breaks" for topic, _ in EVENTS)
    assert "graph break" in buffer.getvalue()


def test_explain_rejects_arguments_that_do_not_fit():
    with pytest.raises(jit.InvalidArgumentError, match="do not fit _straight"):
        jit.explain(_straight, torch.randn(3))
