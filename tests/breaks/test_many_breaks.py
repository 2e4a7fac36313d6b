"""A long function with many graph breaks: results and printed output match eager, and the per-break work of a
first call does not redo whole-function work (Note [Resume functions are stubs] in runtime/lazy_resume.py, Note
[Resume bodies hold what is reachable] in codegen/resume.py, Note [Spliced prologues] in runtime/prologue.py): an
original is analysed once, no resume code is assembled until one runs natively, and one that does holds only what
is reachable from where it resumes and behaves as the rest of the function (past the cache limit, in try regions,
with a closure, with cell variables, a generator)."""
import dis
import traceback
import types

import pytest
import torch

import jitcore as jit
from jitcore.capture import frame, liveness
from jitcore.codegen import resume
from jitcore.runtime import lazy_resume, prologue
from tests.breaks.helpers import compare_printing
from tests.support import both_doors


def _long_function(lines: int, every: int):
    body = []
    for i in range(lines):
        if i % every == every - 1:
            body.append(f"    print('step', {i})")
        else:
            body.append(f"    x = x * 1.001 + {i % 7}")
    source = "def long_fn(x):\n" + "\n".join(body) + "\n    return x\n"
    namespace = {}
    exec(compile(source, "<long_fn>", "exec"), namespace)
    return namespace["long_fn"]


def test_a_function_with_many_prints_matches_eager_and_analyses_its_code_once(counting, capsys, monkeypatch):
    fn = _long_function(120, 10)
    parses, analyses, assembled = [], [], []
    real_from_code, real_analyse, real_resume_code = resume.Bytecode.from_code, liveness._analyse, resume.resume_code
    monkeypatch.setattr(resume.Bytecode, "from_code", staticmethod(lambda code, *a, **k: (
        parses.append(code), real_from_code(code, *a, **k))[1]))
    monkeypatch.setattr(liveness, "_analyse", lambda code: (analyses.append(code), real_analyse(code))[1])
    monkeypatch.setattr(lazy_resume, "resume_code", lambda *a, **k: (assembled.append(a), real_resume_code(*a, **k))[1])
    x = torch.randn(4)
    expected = fn(x)
    eager_out = capsys.readouterr().out
    compiled = jit.compile(fn, backend=counting)
    for _ in range(2):
        assert torch.allclose(compiled(x), expected)
        assert capsys.readouterr().out == eager_out
    assert counting.graph_count == 12  # 12 prints: a graph before each, none after the last; once each
    # its liveness is analysed once; the resume functions are stubs captured from the original itself, so no
    # resume code is assembled (nor the original parsed for one) while every graph hits
    assert analyses == [fn.__code__]
    assert parses == [] and assembled == []


def _long_function_with_cells(lines: int, every: int):
    body = ["    def get():", "        return x"]
    for i in range(lines):
        if i % every == every - 1:
            body.append(f"    print('step', {i}, get().shape)")
        else:
            body.append(f"    x = x * 1.001 + {i % 7}")
    source = "def long_fn(x):\n" + "\n".join(body) + "\n    return x, get\n"
    namespace = {}
    exec(compile(source, "<long_fn_cells>", "exec"), namespace)
    return namespace["long_fn"]


def test_stubs_of_a_frame_with_cells_run_over_its_cells_and_assemble_nothing(counting, capsys, monkeypatch):
    fn = _long_function_with_cells(60, 10)
    assert fn.__code__.co_cellvars == ("x",)
    assembled = []
    real_resume_code = resume.resume_code
    monkeypatch.setattr(lazy_resume, "resume_code", lambda *a, **k: (assembled.append(a), real_resume_code(*a, **k))[1])
    compiled = jit.compile(fn, backend=counting)
    for seed in range(3):
        x = torch.randn(4, generator=torch.Generator().manual_seed(seed))
        expected, get_e = fn(x)
        eager_out = capsys.readouterr().out
        got, get_c = compiled(x)
        assert capsys.readouterr().out == eager_out
        assert torch.allclose(got, expected)
        # the closure returned holds this call's cell, the one the code after every break wrote
        assert torch.allclose(get_c(), get_e()) and get_c.__closure__[0].cell_contents is got
    assert counting.graph_count == 6  # a graph before each print, once each
    assert assembled == []


# Each case reads `.item()` (a break whose value, different on every call, is guarded by the resume functions
# after it) and prints: with cache_limit=1 the first entry of each function serves the same arguments again, and
# every later call runs the resume functions after the `.item()` natively.

def _prints_in_a_loop(x, n):
    s = x.sum().item()
    total = x
    for i in range(n):
        total = total * 1.5 + i + s
        print("step", i, total.shape)
        total = total - 0.25
    return total


def _prints_in_try(x, n):
    total = x
    try:
        s = x.sum().item()
        for i in range(n):
            total = total * 1.5 + s
            print("inside", i)
            total = total + i
        total = total / (n - 3)
    except ZeroDivisionError:
        total = total - 1
    finally:
        print("finally")
    return total


def _prints_in_with(x, n):
    with torch.no_grad():
        y = x * 2
        s = y.sum().item()
        print("in no_grad", y.requires_grad)
        y = y + n + s
    return y * 3


def _closure(scale):
    def _scaled_with_prints(x, n):
        y = x * scale
        s = y.sum().item()
        print("scaled")
        for i in range(n):
            y = y + scale * i + s
            print("added", i)
        return y
    return _scaled_with_prints


def _scaled_items(x, s, n):
    for i in range(n):
        yield x * i + s


def _generator_after_a_break(x, n):
    s = x.sum().item()
    made = _scaled_items(x, s, n)
    first = next(made)
    print("first taken")
    rest = sum(made)
    print("rest taken")
    return first + rest


def _cells_with_prints(x, n):
    # a frame with a cell variable: its stubs are made per call over the frame's cells (Note [Resume functions
    # share the frame's cells]) and so is the resume code one runs natively
    s = x.sum().item()
    total = x

    def add(t):
        nonlocal total
        total = total + t

    print("made")
    for i in range(n):
        add(x * i + s)
        print("added", i)
    return total


_NATIVE_CASES = [_prints_in_a_loop, _prints_in_try, _prints_in_with, _closure(2.0), _generator_after_a_break,
                 _cells_with_prints]


@pytest.mark.parametrize("fn", _NATIVE_CASES, ids=lambda fn: fn.__name__)
def test_resume_functions_past_the_cache_limit_run_natively_as_eager(fn, capsys, monkeypatch):
    """From the second call on, the resume functions after `.item()` are past their cache limit: they run
    natively, through resume codes assembled then (once per resume function)."""
    assembled = []
    real_resume_code = resume.resume_code
    monkeypatch.setattr(lazy_resume, "resume_code", lambda *a, **k: (assembled.append(a), real_resume_code(*a, **k))[1])
    calls = [(torch.randn(3), 4) for _ in range(4)]
    compiled = jit.compile(fn, backend="eager", cache_limit=1)
    for args in calls:
        compare_printing(fn, compiled, args, capsys)

    assert assembled and len(assembled) == len(set(assembled))  # ran natively, each assembled once

    def registered(*args):
        with jit.enabled(backend="eager", cache_limit=1):
            return fn(*args)

    jit.register(fn)
    try:
        for args in calls:
            compare_printing(fn, registered, args, capsys)
    finally:
        jit.unregister(fn)


@pytest.mark.parametrize("fn", _NATIVE_CASES, ids=lambda fn: fn.__name__)
def test_resume_functions_match_eager_through_both_doors(fn, capsys):
    with both_doors(fn, "eager") as doors:
        for door in doors:
            for args in [(torch.randn(3), 4), (torch.randn(3), 4), (torch.randn(4), 2)]:
                compare_printing(fn, door, args, capsys)


def test_a_resume_code_holds_only_what_is_reachable_from_its_target():
    fn = _long_function(60, 1000)
    stores = [i.offset for i in dis.get_instructions(fn) if i.opname == "STORE_FAST"]
    early = resume.resume_code(fn.__code__, stores[2], ("value",), ())
    late = resume.resume_code(fn.__code__, stores[50], ("value",), ())
    assert len(late.co_code) < len(early.co_code) < len(fn.__code__.co_code)
    # offsets still map back to the original, instruction by instruction
    original, offsets = resume.resume_origin(late)
    assert original is fn.__code__
    names = {i.offset: i.opname for i in dis.get_instructions(fn)}
    for inst in dis.get_instructions(late):
        if inst.offset in offsets:
            assert names[offsets[inst.offset]] in (inst.opname, "LOAD_FAST") or inst.opname == "NOP"


def _looping(x, n):
    total = 0
    for i in range(n):
        try:
            total += i
            if i == 2:
                raise KeyError(i)
        except KeyError:
            total -= 1
    return x * total


def test_a_resume_code_inside_a_loop_keeps_the_loop_head_and_handlers():
    adds = [i.offset for i in dis.get_instructions(_looping) if i.opname == "BINARY_OP"]
    code = resume.resume_code(_looping.__code__, adds[0], (), ("x", "n", "total", "i"))
    # a resume function entered at `total += i` with the loop iterator gone cannot be called directly here;
    # what matters is that the loop head (FOR_ITER) and the except handler are still in the body
    ops = [i.opname for i in dis.get_instructions(code)]
    assert "FOR_ITER" in ops and "CHECK_EXC_MATCH" in ops
    assert len(dis._parse_exception_table(code)) >= 1


def _raises_in_try(a, b):
    try:
        c = a / b
    except ZeroDivisionError:
        c = -1
    d = {"k": c}
    return d["missing"]


def test_a_spliced_prologue_keeps_the_body_lines_exception_table_and_behaviour():
    code = _raises_in_try.__code__
    spliced = prologue._spliced(code, lambda *a: prologue.FALLTHROUGH)
    assembled = prologue._assembled(code, lambda *a: prologue.FALLTHROUGH)
    assert len(spliced.co_code) == len(assembled.co_code)
    assert [tuple(e) for e in dis._parse_exception_table(spliced)] == \
        [tuple(e) for e in dis._parse_exception_table(assembled)]
    assert [p for p in spliced.co_positions() if p[0] is not None] == \
        [p for p in code.co_positions() if p[0] is not None]
    fn = types.FunctionType(spliced, globals(), "spliced")
    with pytest.raises(KeyError) as info:
        fn(1, 0)
    frames = traceback.extract_tb(info.value.__traceback__)
    assert frames[-1].lineno == _raises_in_try.__code__.co_firstlineno + 6
    assert frames[-1].line == 'return d["missing"]'


def _prints_with_a_cell(x):
    y = x * 2

    def get():
        return y

    print("one")
    y = y + 1
    print("two", get().shape)
    return y


@pytest.mark.parametrize("fn", [_long_function(30, 10), _prints_with_a_cell], ids=["plain", "cells"])
def test_a_break_at_an_untouched_print_is_interpreted_once(fn, counting, capsys, monkeypatch):
    # Note [A break at an untouched instruction] (capture/frame.py): a print breaks before doing anything, so the
    # first capture attempt stops there itself, a frame with cell variables too; no replay
    attempts = []
    real_attempt = frame._attempt
    monkeypatch.setattr(frame, "_attempt", lambda *a: (attempts.append(a[-1]), real_attempt(*a))[1])
    x = torch.randn(4)
    expected = fn(x)
    eager_out = capsys.readouterr().out
    got = jit.compile(fn, backend=counting)(x)
    assert capsys.readouterr().out == eager_out
    assert torch.allclose(got, expected)
    assert attempts and all(stop is None for stop in attempts)
