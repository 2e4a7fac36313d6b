"""The interpreter's per-code caches (instructions, step plans, exception tables): weak in the code object, emptied by reset()."""
import gc
import weakref

import torch

import jitcore as jit
from jitcore.capture import interpreter

_SOURCE = """
def f(x):
    try:
        return x + 1
    except ValueError:
        return x
"""


def _fresh_function():
    namespace = {}
    exec(compile(_SOURCE, "<test_code_caches>", "exec"), namespace)
    return namespace["f"]


def test_reset_empties_the_code_caches():
    fn = _fresh_function()
    jit.compile(fn, backend="eager")(torch.ones(2))
    interpreter.exception_handler(fn.__code__, 0)
    assert fn.__code__ in interpreter._INSTRUCTIONS
    assert fn.__code__ in interpreter._EXCEPTION_TABLES
    assert fn.__code__ in interpreter._PLANS
    jit.reset()
    assert len(interpreter._INSTRUCTIONS) == 0
    assert len(interpreter._PLANS) == 0
    assert len(interpreter._EXCEPTION_TABLES) == 0


def test_dropping_a_function_frees_its_entries():
    fn = _fresh_function()
    code = fn.__code__
    interpreter.instructions_of(code)
    interpreter.exception_handler(code, 0)
    before = len(interpreter._INSTRUCTIONS), len(interpreter._EXCEPTION_TABLES)
    gone = weakref.ref(code)
    del fn, code
    gc.collect()
    assert gone() is None
    assert (len(interpreter._INSTRUCTIONS), len(interpreter._EXCEPTION_TABLES)) == (before[0] - 1, before[1] - 1)
