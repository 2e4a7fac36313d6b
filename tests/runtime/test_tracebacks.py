"""An exception raised inside compiled code shows the user's frames as eager's traceback does (Note [Tracebacks
through compiled code]): the same file, function and line for every frame of the user's code, innermost included,
and none of jitcore's frames (dispatchers, entries, the FX graph's code, resume-function names), through both
doors; and capture logs nothing of torch's own for an op that fails on fake tensors."""
import logging
import os
import traceback

import pytest
import torch

import jitcore as jit

_JITCORE_DIR = os.path.dirname(jit.__file__)


def _shape_error(x):
    y = x * 2
    z = y @ torch.ones(5, 5)
    return z


def _inner(y):
    return y @ torch.ones(5, 5)


def _error_in_a_callee(x):
    y = x + 1
    return _inner(y) * 2


def _error_after_a_break(x):
    y = x.sin()
    print("between")
    z = y @ torch.ones(5, 5)
    return z


def _raises_after_a_branch(x):
    y = x.cos()
    if y.sum() > 100:
        return y
    raise ValueError("too small")


def _mutates_then_fails(x):
    x.mul_(2)
    return x @ torch.ones(5, 5)


def _index_error(x):
    return x[10]


def _with_a_cell(x):
    # a cell variable: the prologue is assembled with `bytecode`, not spliced
    scale = lambda: x
    y = scale() * 2
    return y @ torch.ones(5, 5)


def _closure_error_after_a_break():
    weight = torch.ones(5, 5)

    def _closure_error(x):
        # free variables: the resume function's stub gets its prologue assembled, and its closure cells
        y = x.cos()
        print("between")
        return y @ weight
    return _closure_error


def _recursive(x, n=2):
    if n == 0:
        return x @ torch.ones(5, 5)
    print("level", n)
    return _recursive(x + 1, n - 1)


def _error_after_a_loop_break(x):
    # the break inside the loop runs this frame natively with its calls hooked (Note [Breaks inside loops])
    for i in range(2):
        x = _inner(x) if i else x * 2
        print("step", i)
    return x @ torch.ones(5, 5)


_CASES = [(_error_after_a_loop_break, (3, 3)), (_closure_error_after_a_break(), (3, 3)), (_recursive, (3, 3)), (_with_a_cell, (3, 3)), (_shape_error, (3, 3)), (_error_in_a_callee, (3, 3)), (_error_after_a_break, (3, 3)),
          (_raises_after_a_branch, (3,)), (_mutates_then_fails, (300, 300)), (_index_error, (3,))]


def _frames(call, fn, shape):
    with pytest.raises(Exception) as info:
        call(torch.ones(*shape))
    frames = traceback.extract_tb(info.value.__traceback__)
    assert not [f for f in frames if f.filename.startswith(("<jitcore", "<eval_with_key>", _JITCORE_DIR))], \
        traceback.format_list(frames)
    assert not [f for f in frames if "jitcore_resume" in f.name or f.name.startswith("___")]
    return [(f.filename, f.name, f.lineno, f.line) for f in frames if f.filename == __file__
            and f.name not in ("_frames", "<lambda>", "call")], (type(info.value), str(info.value))


@pytest.mark.parametrize("fn, shape", _CASES, ids=[fn.__name__ for fn, _ in _CASES])
@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_compiled_traceback_names_the_users_frames_and_lines_as_eager(fn, shape, backend, capsys):
    eager = _frames(lambda x: fn(x), fn, shape)
    compiled = jit.compile(fn, backend=backend)
    for _ in range(2):  # the first call captures, the second runs the entry
        assert _frames(lambda x: compiled(x), fn, shape) == eager


@pytest.mark.parametrize("fn, shape", _CASES[:3], ids=[fn.__name__ for fn, _ in _CASES[:3]])
def test_registered_traceback_names_the_users_frames_and_lines_as_eager(fn, shape, capsys):
    eager = _frames(lambda x: fn(x), fn, shape)
    jit.register(fn)
    try:
        for _ in range(2):
            def call(x):
                with jit.enabled(backend="eager"):
                    return fn(x)
            assert _frames(call, fn, shape) == eager
    finally:
        jit.unregister(fn)


def test_a_shape_error_during_capture_logs_nothing_of_torchs_own(caplog):
    compiled = jit.compile(_shape_error, backend="eager")
    with caplog.at_level(logging.DEBUG):
        with pytest.raises(RuntimeError):
            compiled(torch.ones(3, 3))
    assert not [r for r in caplog.records if "failed while attempting to run meta" in r.getMessage()]
