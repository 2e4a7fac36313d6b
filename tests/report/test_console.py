"""The live console: quiet by default, topics selected by config.log, one tidy block per event at any width,
each message once per location, a spinner only on terminals, and a plain line when rendering fails."""
import dataclasses
import io
import os
import time

import pytest
import torch
from rich.console import Console

import jitcore as jit
from jitcore.config import LOG_TOPICS, config, parse_log
from jitcore.report import console as console_module
from jitcore.report.console import EVENTS, compile_status, use_console
from tests.breaks.helpers import line_of

_THIS_FILE = os.path.basename(__file__)


def _prints(x):
    y = x * 2
    print("side")
    return y + 1


def _adds(x):
    return x + 1


def _printed(width: int, run) -> str:
    buffer = io.StringIO()
    with use_console(Console(file=buffer, width=width, color_system=None)):
        run()
    return buffer.getvalue()


def _tidy(text: str, width: int) -> None:
    lines = text.splitlines()
    assert lines, "something was printed"
    assert max(len(line) for line in lines) <= width
    assert not [line for line in lines if line != line.rstrip()], "no trailing blanks"


def test_quiet_by_default(capsys):
    text = _printed(80, lambda: jit.compile(_prints, backend="eager")(torch.ones(2)))
    assert text == ""
    assert "breaks" in [topic for topic, _ in EVENTS]  # recorded all the same


@pytest.mark.parametrize("width", [80, 200])
def test_break_block_names_location_source_hint_at_any_width(monkeypatch, width):
    monkeypatch.setattr(config, "log", "breaks")
    text = _printed(width, lambda: jit.compile(_prints, backend="eager")(torch.ones(2)))
    line = line_of(_prints, 'print("side")')
    assert "jitcore · graph break  in _prints()" in text
    assert f"{_THIS_FILE}:{line} in _prints()" in text
    assert f'{line} │ print("side")' in text
    assert "hint move the print/log call out of _prints()" in " ".join(text.split())
    assert "_prints() runs as a graph up to here, then continues in Python" in " ".join(text.split())
    _tidy(text, min(width, console_module.MAX_WIDTH))


def test_recompile_block_says_what_changed_and_the_entry_number(monkeypatch):
    monkeypatch.setattr(config, "log", "recompiles")
    compiled = jit.compile(_adds, backend="eager")
    text = _printed(80, lambda: (compiled(torch.ones(4, 2)), compiled(torch.ones(7, 2))))
    assert "jitcore · recompile  _adds()" in text
    assert f"{_THIS_FILE}:{_adds.__code__.co_firstlineno}   (entry 2 of at most 8)" in text
    assert "why x.shape[0] changed 4 -> 7: now dynamic" in text
    _tidy(text, 80)


def test_identical_messages_are_shown_once_per_location(monkeypatch):
    monkeypatch.setattr(config, "log", "breaks")
    compiled = jit.compile(_prints, backend="eager")
    text = _printed(80, lambda: [compiled(torch.ones(n)) for n in (2, 3, 4)])  # recompiles meet the same break
    assert text.count("jitcore · graph break") == 1


def test_cache_limit_block_is_shown_even_when_quiet():
    compiled = jit.compile(_adds, backend="eager", cache_limit=1)
    text = _printed(80, lambda: [compiled(torch.ones(n)) for n in (2, 3, 4)])
    assert text.count("jitcore · cache limit  _adds()") == 1
    assert "cache_limit=1" in text and "x: shape[0] changed 2 -> 3" in text
    _tidy(text, 80)


def test_fallback_after_an_internal_error_is_shown_even_when_quiet(monkeypatch):
    from jitcore.capture.opcodes import HANDLERS
    handler = HANDLERS["BINARY_OP"]

    def broken(state, inst, lhs, rhs):
        raise ZeroDivisionError("injected")

    monkeypatch.setitem(HANDLERS, "BINARY_OP", dataclasses.replace(handler, fn=broken))
    text = _printed(80, lambda: jit.compile(_adds, backend="eager")(torch.ones(2)))
    assert "jitcore · fallback  _adds()" in text
    assert "internal error during capture: CaptureInternalError" in text and "injected" in text
    assert "runs natively from now on" in text


def test_graphs_and_guards_topics_show_code_and_the_guard_tree(monkeypatch):
    monkeypatch.setattr(config, "log", "graphs,guards")
    text = _printed(80, lambda: jit.compile(_adds, backend="eager")(torch.ones(2)))
    assert "jitcore · graph  _adds() · 1 op" in text
    assert 'add: "f32[2]" = x + 1' in text
    assert "jitcore · guards  _adds()" in text and "└── x: TensorMatch" in text
    _tidy(text, 80)


def test_log_selects_topics_from_a_string_an_iterable_or_all():
    assert parse_log("recompiles, BREAKS") == {"recompiles", "breaks"}
    assert parse_log(["graphs"]) == {"graphs"}
    assert parse_log("all") == set(LOG_TOPICS)
    assert parse_log("") == frozenset()


@pytest.mark.parametrize("value", ["recompile", "breaks,everything", "all,x"])
def test_bad_log_value_is_a_jit_error_listing_the_valid_topics(value):
    with pytest.raises(jit.JitError) as info:
        config.log = value
    message = str(info.value)
    assert "unknown JITCORE_LOG topic" in message
    assert "recompiles, breaks, guards, graphs, fallbacks, distributed, all" in message


def test_bad_log_value_from_the_environment_is_the_same_error():
    from jitcore.config import Config
    with pytest.raises(jit.JitError, match="valid topics are: recompiles, breaks"):
        Config.from_environ({"JITCORE_LOG": "recompiles,bogus"})
    with pytest.raises(jit.JitError, match="log topics must be strings"):
        config.log = [3]


def test_compile_status_is_invisible_off_a_terminal():
    buffer = io.StringIO()
    with use_console(Console(file=buffer, force_terminal=False, width=80)):
        with compile_status(_adds.__code__, "inductor", delay=0.01):
            time.sleep(0.2)
    assert buffer.getvalue() == ""


def test_compile_status_spins_on_a_terminal_and_clears_itself():
    buffer = io.StringIO()
    with use_console(Console(file=buffer, force_terminal=True, width=80)):
        with compile_status(_adds.__code__, "inductor", delay=0.01):
            time.sleep(0.4)
    assert "jitcore: compiling a graph of _adds() with inductor" in buffer.getvalue()


def test_compile_status_never_breaks_a_compile(monkeypatch):
    import rich.live

    def refuse(*args, **kwargs):
        raise RuntimeError("no display")

    monkeypatch.setattr(rich.live.Live, "start", refuse)
    with use_console(Console(file=io.StringIO(), force_terminal=True, width=80)):
        with compile_status(_adds.__code__, "eager", delay=0.01):
            time.sleep(0.1)


def test_a_rendering_failure_falls_back_to_one_plain_line(monkeypatch, capsys):
    from jitcore.report import live
    monkeypatch.setattr(config, "log", "breaks")

    def broken(event, selected):
        raise RuntimeError("layout bug")

    monkeypatch.setattr(live, "render_event", broken)
    jit.compile(_prints, backend="eager")(torch.ones(2))
    err = capsys.readouterr().err
    assert "jitcore breaks: _prints: printing, logging and I/O have to run in Python" in err


def _tagged(x, tag):
    return x * 2 if tag.startswith("a") else x - 1


def test_giving_up_past_the_limit_is_its_own_block():
    compiled = jit.compile(_tagged, backend="eager", cache_limit=1)
    text = _printed(80, lambda: [compiled(torch.ones(2), f"t{i}") for i in range(80)])
    assert text.count("jitcore · cache limit  _tagged()") == 2
    assert "matched none of its 1 compiled" in text and "without trying them" in text
    _tidy(text, 80)


def _prints_in_loop(x):
    for i in range(2):
        x = x * 2
        print("turn", i)
    return x


def test_break_inside_a_loop_says_the_frame_runs_natively_and_its_callees_compile(monkeypatch, capsys):
    monkeypatch.setattr(config, "log", "breaks")
    text = _printed(200, lambda: jit.compile(_prints_in_loop, backend="eager")(torch.ones(2)))
    line = line_of(_prints_in_loop, 'print("turn", i)')
    said = " ".join(text.split())
    assert "then graph break inside a loop at " in said
    assert f"{_THIS_FILE}:{line}: _prints_in_loop() runs natively, the functions it calls are compiled" in said
