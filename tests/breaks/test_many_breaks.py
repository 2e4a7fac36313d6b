"""A long function with many graph breaks: results and printed output match eager, and the per-break work of a
first call does not redo whole-function work (Note [Resume bodies hold what is reachable] in codegen/resume.py,
Note [Spliced prologues] in runtime/prologue.py): an original is parsed and analysed once, and each resume code
holds only what is reachable from where it resumes."""
import dis
import traceback
import types

import pytest
import torch

import jitcore as jit
from jitcore.capture import liveness
from jitcore.codegen import resume
from jitcore.runtime import prologue


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


def test_a_function_with_many_prints_matches_eager_and_parses_its_code_once(counting, capsys, monkeypatch):
    fn = _long_function(120, 10)
    parses, analyses = [], []
    real_from_code, real_analyse = resume.Bytecode.from_code, liveness._analyse
    monkeypatch.setattr(resume.Bytecode, "from_code", staticmethod(lambda code, *a, **k: (
        parses.append(code), real_from_code(code, *a, **k))[1]))
    monkeypatch.setattr(liveness, "_analyse", lambda code: (analyses.append(code), real_analyse(code))[1])
    x = torch.randn(4)
    expected = fn(x)
    eager_out = capsys.readouterr().out
    compiled = jit.compile(fn, backend=counting)
    for _ in range(2):
        assert torch.allclose(compiled(x), expected)
        assert capsys.readouterr().out == eager_out
    assert counting.graph_count == 12  # 12 prints: a graph before each, none after the last; once each
    # the original is parsed once for all its resume codes, and its liveness analysed once
    assert parses == [fn.__code__]
    assert analyses == [fn.__code__]


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
