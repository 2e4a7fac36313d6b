"""A size that depends on tensor data (after x[mask], nonzero, unique), read in Python, breaks at the op that made it
(Note [A data-dependent size read in Python], capture/graph.py): the resume function receives an ordinary tensor, so
a sweep takes no more graphs than torch.compile's; a torch.Size argument is guarded item by item, so its sizes
become dynamic after one change (Note [A torch.Size read from a source], capture/values/__init__.py).
"""
from __future__ import annotations

import torch

import jitcore as jit
from jitcore import events
from tests.support import CountingBackend, compare_call


def _mask_then_size(x):
    picked = x[x > 0]
    return picked * picked.shape[0], picked.numel()


def _nonzero_rows(x):
    rows = x.nonzero()[:, 0]
    return rows.float().sum() * len(rows)


def _nonzero_kept(x):
    idx = x.nonzero()
    return idx.sum(0) + 1


def _sweep(fn, sizes, dynamic=None):
    counting = CountingBackend()
    compiled = jit.compile(fn, backend=counting, dynamic=dynamic)
    for n in sizes:
        compare_call(fn, compiled, (torch.randn(n, 3, generator=torch.Generator().manual_seed(n)),))
    return counting


def test_mask_size_read_in_python_takes_torch_compiles_four_graphs():
    # torch.compile: x > 0 static then dynamic; the resume after x[mask] static then dynamic
    assert _sweep(_mask_then_size, (2, 3, 4, 5, 6, 7, 8)).graph_count == 4


def test_mask_size_read_under_dynamic_true_takes_two_graphs():
    assert _sweep(_mask_then_size, (2, 3, 4, 5, 6, 7, 8), dynamic=True).graph_count == 2


def test_the_break_is_reported_at_the_op_that_made_the_size(monkeypatch):
    seen = []

    def listen(topic, message, key, always, facts):
        if topic == "breaks":
            seen.append(message)

    events.subscribe(listen)
    try:
        _sweep(_nonzero_rows, (4,))
    finally:
        events.unsubscribe(listen)
    assert seen and "rows = x.nonzero()[:, 0]" in seen[0] and "the op that made it runs in Python" in seen[0]


def test_a_data_dependent_size_never_read_in_python_stays_in_the_graph():
    counting = _sweep(_nonzero_kept, (2, 3, 4, 5))
    assert counting.graph_count == 2
    assert any(node.target == torch.ops.aten.nonzero.default or node.target == "nonzero"
               for gm in counting.graphs for node in gm.graph.nodes)


def test_a_torch_size_argument_becomes_dynamic_after_one_change():
    def f(x, shape):
        return x.reshape(shape) * shape[0]

    counting = CountingBackend()
    compiled = jit.compile(f, backend=counting)
    for n in (2, 3, 4, 5, 6):
        compare_call(f, compiled, (torch.randn(n * 4), torch.Size([n, 4])))
    assert counting.graph_count == 2


def test_a_torch_size_argument_of_another_length_recompiles():
    def f(x, shape):
        return x.reshape(shape).sum(-1), len(shape)

    counting = CountingBackend()
    compiled = jit.compile(f, backend=counting)
    for shape in ((2, 6), (3, 4), (2, 2, 3), (12,)):
        compare_call(f, compiled, (torch.randn(12), torch.Size(shape)))
    assert counting.graph_count == 4
