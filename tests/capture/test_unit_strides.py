"""Strides of dims of size 1 (Note [Strides of size-1 dims], guards/torch_checks.py): they take part in no
address, so a graph over a tensor is shared whatever they are (the rows of a (k, 1) `nonzero()` result have stride
(k,)), and where captured code reads them into Python (`x.stride()`) the answer is each call's own. Each case runs
eagerly and through `jit.compile`, with a counting backend."""
import torch

import jitcore as jit
from tests.support import CountingBackend, assert_same


def _rows(k):
    """Row 0 of a (k, 1) tensor laid out as nonzero() lays it out: shape (1,), stride (k,)."""
    return torch.arange(float(k)).reshape(1, k).t()[0]


def _check(fn, ks, graphs):
    counting = CountingBackend()
    compiled = jit.compile(fn, backend=counting)
    for k in ks:
        row = _rows(k)
        assert row.stride() == (k,)
        assert_same(fn(row), compiled(row))
    assert counting.graph_count == graphs


def test_a_graph_over_a_size_one_dim_is_shared_whatever_its_stride():
    _check(lambda x: torch.sin(x) * 2 + x.sum(), (3, 4, 7), graphs=1)


def test_a_stride_read_into_python_answers_for_each_call():
    _check(lambda x: x * x.stride()[0], (3, 4, 3, 7), graphs=3)


def test_a_stride_read_of_one_dim_answers_for_each_call():
    _check(lambda x: x + x.stride(0), (5, 6), graphs=2)


def test_a_stride_read_through_the_class_answers_for_each_call():
    _check(lambda x: x - torch.Tensor.stride(x, 0), (2, 9), graphs=2)


def test_a_stride_read_of_a_view_made_inside_answers_for_each_call():
    _check(lambda x: x.unsqueeze(0).stride()[1] + x, (4, 8), graphs=2)


def test_a_loop_over_nonzero_rows_that_breaks_reuses_its_entries_for_a_new_row_count():
    """The body breaks on a tensor branch every iteration; a call with another number of hit rows (another row
    stride) adds no graph once the loop's entries exist."""
    def f(hit, x):
        out = torch.zeros_like(x)
        for idx in hit:
            if idx[0] > 2:
                out = out + x * idx
        return out

    x = torch.randn(3)
    counting = CountingBackend()
    compiled = jit.compile(f, backend=counting)
    masks = ([1, 0, 1, 1, 0, 1], [1, 1, 1, 1, 1, 0], [0, 1, 0, 1, 1, 1], [1, 0, 0, 1, 1, 1])
    for mask in masks:
        hit = torch.tensor(mask).nonzero()
        assert_same(f(hit, x), compiled(hit, x))
    settled = counting.graph_count
    for mask in ([1, 1, 0, 1, 0, 1], [1, 1, 1, 0, 1, 1]):
        hit = torch.tensor(mask).nonzero()
        assert_same(f(hit, x), compiled(hit, x))
    assert counting.graph_count == settled


def test_a_4d_tensors_size_one_strides_stay_guarded():
    """torch's memory-format guess (channels_last) reads a size-1 dim's stride of a 4-d tensor and it decides
    the layout of results: there a new stride is a new entry."""
    base = torch.arange(200.0)
    counting = CountingBackend()

    def f(x):
        return torch.nn.functional.relu(x).clone() * 2

    compiled = jit.compile(f, backend=counting)
    for k in (48, 48, 7):
        x = base.as_strided((1, 3, 4, 4), (k, 16, 4, 1))
        expected, got = f(x), compiled(x)
        assert_same(expected, got)
        assert got.stride() == expected.stride()
    assert counting.graph_count == 2
