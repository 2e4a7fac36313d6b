"""Generated code objects keep CPython's exception-table invariants (DESIGN §4 pitfalls)."""
import dis

import torch

import jitcore as jit
from jitcore.codegen.resume import resume_code, resume_origin
from jitcore.runtime import lazy_resume
from jitcore.runtime.prologue import build_prologue_code, FALLTHROUGH
from jitcore.runtime.resume_fns import _RESUMES


def _with_try(x, items):
    total = 0
    try:
        for item in items:
            total += item
        y = x * total
    except KeyError:
        y = x
    finally:
        total = -1
    return y, total


def _depths(code):
    return [(e.depth, e.lasti) for e in dis._parse_exception_table(code)]


def test_prologue_keeps_exception_depths():
    code = build_prologue_code(_with_try.__code__, lambda *a: FALLTHROUGH)
    # one entry of its own first: the dispatch call's handler (Note [Tracebacks through compiled code])
    assert _depths(code) == [(0, False)] + _depths(_with_try.__code__)


def test_resume_code_inside_try_keeps_exception_depths():
    insts = [i for i in dis.get_instructions(_with_try) if i.opname == "BINARY_OP"]
    target = insts[-1].offset  # x * total, inside the try body
    code = resume_code(_with_try.__code__, target, ("value", "value"), ("x", "items", "total"))
    assert _depths(code) == _depths(_with_try.__code__)
    assert all(depth < 1000 for depth, _ in _depths(build_prologue_code(code, lambda *a: FALLTHROUGH)))
    assert resume_origin(code)[0] is _with_try.__code__


def test_resume_function_code_never_has_unknown_depths(monkeypatch):
    def f(x):
        try:
            v = x.sum().item()
            return [1, 2][int(v) + 100]
        except KeyError:
            return None

    made = []
    monkeypatch.setattr(lazy_resume, "resume_code", lambda *a, **k: made.append(resume_code(*a, **k)) or made[-1])
    compiled = jit.compile(f, backend="eager", cache_limit=1)
    for scale in (1.0, 2.0, 3.0):  # a new `v` per call: the resume function after .item() runs natively
        try:
            compiled(torch.ones(2) * scale)
        except IndexError:
            pass
    stubs = [fn.__code__ for fn in _RESUMES.get(f.__code__, {}).values()]
    assert stubs and made
    for code in stubs + made:
        assert all(depth < 1000 for depth, _ in _depths(code)), _depths(code)


def test_tensor_branch_inside_try_with_two_successors_assembles_and_matches_eager():
    """Regression (fuzz seed 35): a step function with two tails inside one try region re-opens the region
    twice; the region's end must follow the latest copy, or `bytecode` never finishes assembling."""
    box = []

    def f(x, y):
        try:
            t = x / (y.abs() + 1.0) if x.sum() > 0 else torch.relu(y)
            u = t * 2
        finally:
            box.append("done")
        return u.tanh()

    compiled = jit.compile(f, backend="eager")
    for sign in (1.0, -1.0, 1.0):
        x, y = torch.full((3,), sign), torch.randn(3)
        torch.testing.assert_close(compiled(x, y), f(x, y))
    assert box == ["done"] * 6
