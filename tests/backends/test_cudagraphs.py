"""The `cudagraphs` backend: a clear error without CUDA; with CUDA, replays equal eager, forward and backward.

The CUDA tests are skipped on machines without a GPU (CI); they run wherever torch.cuda.is_available().
"""

from __future__ import annotations

import pytest
import torch

from jitcore.backends import BackendError, lookup
from tests.backends.graphs import grads_of, graph_and_fake_inputs, leaf
from tests.support import assert_same

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="cudagraphs needs a CUDA device")


@pytest.fixture
def replays(monkeypatch):
    """A list that gets one entry per CUDA graph replay: proof that the backend replays rather than runs eagerly."""
    replayed = []

    class CountingCUDAGraph(torch.cuda.CUDAGraph):
        def replay(self):
            replayed.append(self)
            super().replay()

    monkeypatch.setattr(torch.cuda, "CUDAGraph", CountingCUDAGraph)
    return replayed


def sin_mul_and_matmul(x, y):
    return (torch.sin(x) * y + 1, (x @ y.t()).relu())


def test_lookup_cudagraphs_works_on_any_machine():
    assert callable(lookup("cudagraphs"))


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error given where CUDA is missing")
def test_cudagraphs_without_cuda_raises_backend_error_naming_alternatives():
    gm, example_inputs = graph_and_fake_inputs(sin_mul_and_matmul, leaf(3, 4, seed=1), leaf(3, 4, seed=2))
    with pytest.raises(BackendError, match=r"^cudagraphs needs CUDA.*use the 'inductor' or 'aot_eager' backend"):
        lookup("cudagraphs")(gm, example_inputs)


@needs_cuda
def test_cudagraphs_rejects_cpu_inputs():
    gm, example_inputs = graph_and_fake_inputs(sin_mul_and_matmul, leaf(3, 4, seed=1), leaf(3, 4, seed=2))
    with pytest.raises(BackendError, match=r"every tensor input on a CUDA device, got input 0 on cpu, input 1 on cpu"):
        lookup("cudagraphs")(gm, example_inputs)


@needs_cuda
def test_cudagraphs_replays_equal_the_graph_on_three_input_sets(replays):
    gm, example_inputs = graph_and_fake_inputs(
        sin_mul_and_matmul, leaf(3, 4, seed=1, device="cuda"), leaf(3, 4, seed=2, device="cuda")
    )
    compiled = lookup("cudagraphs")(gm, example_inputs)
    for seed in (10, 20, 30):  # the first call captures, the next two replay
        inputs = (leaf(3, 4, seed=seed, device="cuda"), leaf(3, 4, seed=seed + 1, device="cuda"))
        assert_same(gm(*inputs), compiled(*inputs))
    assert len(replays) == 3 and len(set(map(id, replays))) == 1


@needs_cuda
def test_cudagraphs_outputs_survive_the_next_replay():
    gm, example_inputs = graph_and_fake_inputs(lambda x: (x * 3,), leaf(8, seed=1, device="cuda"))
    compiled = lookup("cudagraphs")(gm, example_inputs)
    first_input = leaf(8, seed=2, device="cuda")
    (first,) = compiled(first_input)
    compiled(leaf(8, seed=3, device="cuda"))
    compiled(leaf(8, seed=4, device="cuda"))
    assert_same(first_input * 3, first)


@needs_cuda
def test_cudagraphs_grads_equal_eager_grads_over_two_steps(replays):
    x = leaf(3, 4, seed=1, requires_grad=True, device="cuda")
    y = leaf(3, 4, seed=2, requires_grad=True, device="cuda")
    gm, example_inputs = graph_and_fake_inputs(sin_mul_and_matmul, x, y)
    compiled = lookup("cudagraphs")(gm, example_inputs)
    for seed in (10, 20):  # the first backward captures the backward graph, the second replays it
        x = leaf(3, 4, seed=seed, requires_grad=True, device="cuda")
        y = leaf(3, 4, seed=seed + 1, requires_grad=True, device="cuda")
        expected_outputs, actual_outputs = gm(x, y), compiled(x, y)
        assert_same(expected_outputs, actual_outputs)
        assert_same(grads_of(expected_outputs, [x, y]), grads_of(actual_outputs, [x, y]))
    assert len(replays) == 4 and len(set(map(id, replays))) == 2  # forward and backward graphs, twice each


@needs_cuda
def test_cudagraphs_graph_with_cpu_work_runs_uncaptured_and_equals_the_graph(replays):
    def add_a_sum_taken_on_cpu(x):
        return (x + x.cpu().sum().to(x.device),)

    gm, example_inputs = graph_and_fake_inputs(add_a_sum_taken_on_cpu, leaf(8, seed=1, device="cuda"))
    compiled = lookup("cudagraphs")(gm, example_inputs)
    for seed in (10, 20):
        inputs = (leaf(8, seed=seed, device="cuda"),)
        assert_same(gm(*inputs), compiled(*inputs))
    assert replays == []
