"""Compiling leaves Python's `random` state as it was (Note [Compiling leaves no trace] in runtime/cache.py): a
seeded program draws the same numbers compiled or not, whatever jitcore imports or runs while it compiles."""
import random

import torch

import jitcore as jit


def _drawing_backend(gm, example_inputs):
    random.random()  # what a module imported on the first compile does (rich.style draws at import)
    return gm.forward


def _scale(x):
    return torch.sin(x) * 3


def test_a_compiled_call_leaves_python_random_as_eager_does():
    compiled = jit.compile(_scale, backend=_drawing_backend)
    x = torch.ones(4)
    random.seed(0)
    compiled(x)
    compiled(x * 2)  # a recompile too
    after_compiled = [random.random() for _ in range(3)]
    random.seed(0)
    _scale(x)
    _scale(x * 2)
    assert after_compiled == [random.random() for _ in range(3)]


def test_a_registered_function_leaves_python_random_as_eager_does():
    jit.register(_scale)
    try:
        random.seed(1)
        with jit.enabled(backend=_drawing_backend):
            _scale(torch.ones(2))
            _scale(torch.ones(2))
        drawn = random.random()
    finally:
        jit.unregister(_scale)
    random.seed(1)
    assert drawn == random.random()


def test_the_programs_own_draws_between_compiled_calls_are_kept():
    compiled = jit.compile(_scale, backend=_drawing_backend)
    random.seed(2)
    first = random.random()
    compiled(torch.ones(3))
    second = random.random()
    random.seed(2)
    assert [first, second] == [random.random(), random.random()]
