"""`str.format` with arguments that are not constants is formatted field by field inside the graph's capture:
fields read through a tensor's attributes and items (`{t.shape[0]}`), keyword arguments from `**config`, explicit
and automatic numbering, conversions and specs; CPython's errors (an index out of range, a missing key, switching
numbering) are the program's own. A field capture cannot format (a tensor's text) breaks the graph at the call and
Python formats it, with the graph before the call kept."""
import pytest
import torch

import jitcore as jit
from tests.support import CountingBackend

CFG = {"name": "enc", "dim": 4, "drop": 0.1}


def _fields(x):
    title = "{name}[{dim}] p={drop:.2f}".format(**CFG)
    pos = "{0}-{1}-{0}".format(x.shape[0], CFG["dim"])
    attr = "{t.shape[0]} {t.dtype} {t.shape!r} {:>4}|".format(3, t=x)
    return x * CFG["dim"], title, pos, attr


def test_template_with_tensor_fields_is_formatted_in_one_graph():
    backend = CountingBackend()
    compiled = jit.compile(_fields, backend=backend)
    for n in (2, 3, 2):
        x = torch.randn(n)
        expected, got = _fields(x), compiled(x)
        assert torch.equal(expected[0], got[0]) and expected[1:] == got[1:]
    assert backend.graph_count == 2  # the size made dynamic on the second shape, then reused


@pytest.mark.parametrize("template, args, kwargs", [
    ("{2}", (1,), {}),
    ("{missing}", (1,), {}),
    ("{0} {}", (1, 2), {}),
    ("{} {1}", (1, 2), {}),
])
def test_bad_templates_raise_what_python_raises(template, args, kwargs):
    def f(x):
        return x + 1, template.format(x.shape[0], *args, **kwargs)
    with pytest.raises(Exception) as expected:
        f(torch.ones(2))
    with pytest.raises(type(expected.value)) as got:
        jit.compile(f, backend="eager")(torch.ones(2))
    assert str(got.value) == str(expected.value)


def test_a_tensor_field_breaks_at_the_call_and_python_formats_it():
    def f(x):
        y = x * 2
        return y, "{} {}".format(x.shape[0], y)
    backend = CountingBackend()
    x = torch.ones(3)
    got = jit.compile(f, backend=backend)(x)
    assert got[1] == f(x)[1]
    assert backend.graph_count == 1


def _sized_text(x):
    n = x.shape[0]
    return x * 2, f"{n} rows, {n * 2:>4}|{n!r}", "{}x{}".format(n, x.shape[1])


def test_a_dynamic_size_formatted_into_text_is_not_pinned():
    # Note [Text of a symbolic number]: the entry formats the text after the graph, so once the size is dynamic
    # every later size reuses the entry
    compiled = jit.compile(_sized_text, backend="eager")
    for n in (2, 3, 4, 5, 6):
        x = torch.randn(n, 2)
        expected, got = _sized_text(x), compiled(x)
        assert torch.equal(expected[0], got[0]) and expected[1:] == got[1:]
    counting = CountingBackend()
    again = jit.compile(_sized_text, backend=counting)
    for n in (2, 3, 4, 5, 6):
        again(torch.randn(n, 2))
    assert counting.graph_count == 2  # the first size, then the dynamic one for every later size


def _compared_text(x):
    s = f"{x.shape[0]}"
    return x + 1, s == "3", s.upper() + "!"


def test_text_used_while_tracing_pins_the_size_and_stays_right():
    compiled = jit.compile(_compared_text, backend="eager")
    for n in (2, 3, 4, 3):
        x = torch.randn(n)
        expected, got = _compared_text(x), compiled(x)
        assert torch.equal(expected[0], got[0]) and expected[1:] == got[1:]
