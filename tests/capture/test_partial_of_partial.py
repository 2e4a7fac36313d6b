"""functools.partial of a partial inside captured code is flattened as CPython flattens it: the inner partial's
function, its arguments first, its keywords overridden by the outer's, so `.func`, `.args` and `.keywords` read
back the flattened form. Whether CPython flattens a partial passed in depends on whether its `__dict__` was ever
materialised, which cannot be read without materialising it: reading those attributes there breaks the graph and
Python answers."""
import functools

import torch

import jitcore as jit


def _scale(x, k, *, bias=0.0):
    return x * k + bias


def _made_inside(x):
    inner = functools.partial(_scale, k=2.0)
    outer = functools.partial(inner, bias=1.0)
    again = functools.partial(outer, x)
    return outer(x), again(), outer.func is _scale, sorted(outer.keywords), len(again.args), again.func is _scale


def _with_dict(x):
    inner = functools.partial(_scale, k=2.0)
    inner.__dict__["note"] = 1
    outer = functools.partial(inner, bias=1.0)
    return outer(x), outer.func is _scale, len(outer.keywords)


def _passed_in(x, given):
    outer = functools.partial(given, bias=2.0)
    return outer(x), outer.func is _scale, len(outer.keywords)


def _same(a, b):
    assert len(a) == len(b)
    for u, v in zip(a, b):
        assert torch.equal(u, v) if isinstance(u, torch.Tensor) else u == v, (a, b)


def test_partial_of_partial_made_inside_reads_flattened_attributes():
    x = torch.randn(3)
    for fn in (_made_inside, _with_dict):
        _same(jit.compile(fn, backend="eager")(x), fn(x))


def test_partial_over_a_partial_passed_in_answers_as_python_does():
    x = torch.randn(3)
    compiled = jit.compile(_passed_in, backend="eager")
    plain, materialised = functools.partial(_scale, k=3.0), functools.partial(_scale, k=3.0)
    vars(materialised)
    for given in (plain, materialised):
        expected = _passed_in(x, functools.partial(_scale, k=3.0) if given is plain else given)
        _same(compiled(x, given), expected)
    assert _passed_in(x, functools.partial(_scale, k=3.0))[1] is True
    assert _passed_in(x, materialised)[1] is False
