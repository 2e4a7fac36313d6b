"""Duck shapes under dynamic=True, as torch.compile's: dims of equal size on the captured call share one symbol,
guarded by their equality in the user's names; a call where they differ recompiles (never reuses the shared
symbol) and equals eager; dims that varied between calls (automatic dynamic) or were marked get symbols of their
own. The symbol structure is compared with the graphs torch.compile hands its backend for the same calls."""
from __future__ import annotations

import torch
import torch.nn.functional as F

import jitcore as jit
from jitcore import events
from tests.support import CountingBackend, compare_call, recompile_messages


def _pool(images, bias):
    # a square image's H and W, and a bias as long as W
    return F.avg_pool2d(images, 2).flatten(2).softmax(-1).sum(-1) + (images.mean((0, 1, 2)) + bias).sum()


def _symbol_pattern(gm) -> list:
    """Each tensor input's sizes with symbols numbered by first appearance: [[0, 3, 1, 1], [1]] says dims 2 and 3
    of the first input and dim 0 of the second share one symbol."""
    numbers, pattern = {}, []
    for node in gm.graph.nodes:
        example = node.meta.get("example_value", node.meta.get("val"))
        if node.op != "placeholder" or not isinstance(example, torch.Tensor):
            continue
        row = []
        for size in example.size():
            if isinstance(size, torch.SymInt):
                row.append(numbers.setdefault(str(size.node.expr), len(numbers)))
            else:
                row.append(f"={size}")
        pattern.append(row)
    return pattern


def _torch_compile_patterns(fn, calls, dynamic) -> list:
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    compiled = torch.compile(fn, backend=backend, dynamic=dynamic)
    for args in calls:
        compiled(*args)
    torch._dynamo.reset()
    return [_symbol_pattern(gm) for gm in graphs]


def _calls(sizes):
    return [(torch.randn(2, 3, h, w), torch.randn(w)) for h, w in sizes]


def test_equal_dims_share_one_symbol_under_dynamic_true_as_torch_compile():
    calls = _calls([(8, 8), (12, 12)])
    counting = CountingBackend()
    compiled = jit.compile(_pool, backend=counting, dynamic=True)
    for args in calls:
        compare_call(_pool, compiled, args)
    assert counting.graph_count == 1
    (pattern,) = [_symbol_pattern(gm) for gm in counting.graphs]
    images, bias = pattern
    assert images[2] == images[3] == bias[0]  # H, W and the bias length: one symbol
    assert [_symbol_pattern(gm) for gm in counting.graphs] == _torch_compile_patterns(_pool, calls, True)


def test_unequal_dims_fail_the_equality_recompile_and_equal_eager(monkeypatch):
    found, listen = recompile_messages(monkeypatch)
    counting = CountingBackend()
    compiled = jit.compile(_pool, backend=counting, dynamic=True)
    calls = _calls([(8, 8), (8, 12), (10, 10), (6, 14)])
    try:
        for args in calls:
            compare_call(_pool, compiled, args)
    finally:
        events.unsubscribe(listen)
    # the square calls share the first graph; the others one with H and W apart
    assert counting.graph_count == 2
    assert len(found) == 1 and "images.shape[3] == images.shape[2] no longer holds" in found[0]
    assert "(images.shape[3] = 12, images.shape[2] = 8)" in found[0]
    square, apart = (_symbol_pattern(gm)[0] for gm in counting.graphs)
    assert square[2] == square[3] and apart[2] != apart[3]
    assert [_symbol_pattern(gm) for gm in counting.graphs] == _torch_compile_patterns(_pool, calls, True)


def test_automatic_dynamic_and_marked_dims_get_symbols_of_their_own():
    counting = CountingBackend()
    compiled = jit.compile(_pool, backend=counting)
    calls = _calls([(8, 8), (12, 12), (16, 16)])
    for args in calls:
        compare_call(_pool, compiled, args)
    assert counting.graph_count == 2
    images, bias = _symbol_pattern(counting.graphs[1])
    # H and W varied together and stay apart; the bias length is W's because tracing added them
    assert images[2] != images[3] == bias[0]
    assert [_symbol_pattern(gm) for gm in counting.graphs] == _torch_compile_patterns(_pool, calls, None)
    marked = CountingBackend()
    compiled = jit.compile(_pool, backend=marked)
    images, bias = _calls([(8, 8)])[0]
    jit.mark_dynamic(images, 2)
    jit.mark_dynamic(images, 3)
    torch.testing.assert_close(compiled(images, bias), _pool(images, bias))  # compare_call's clones drop marks
    pattern = _symbol_pattern(marked.graphs[0])[0]
    assert pattern[2] != pattern[3]


def test_explain_names_the_shared_symbol_and_its_guard():
    report = jit.explain(jit.compile(_pool, dynamic=True), *_calls([(8, 8)])[0])
    (graph,) = report.graphs
    lines = graph.dynamic_dims
    assert any(line.startswith("images.shape[3] = ") and "the same symbol as images.shape[2]" in line
               for line in lines)
    assert "images.shape[3] == images.shape[2]" in " ".join(str(report).split())
