"""`torch.IntTensor([4])` and its siblings given a sequence of numbers are graph nodes (a CPU tensor of their dtype,
whatever the default device); given sizes they stay a break. A slice whose bound is a tensor breaks cleanly where it
is built and again where a resume function receives it, so the indexing runs in Python: never an equality guard on
a slice holding a tensor (elementwise, and true for the same tensor written in place), never a real tensor in a fake
operation."""
import pytest
import torch

import jitcore as jit
from tests.support import CountingBackend, arg_sets, check_against_eager, check_registered_against_eager, randn


@pytest.fixture(autouse=True)
def _strict(monkeypatch):
    monkeypatch.setattr(jit.config, "strict", True)


@pytest.mark.parametrize("cls", [torch.IntTensor, torch.LongTensor, torch.FloatTensor, torch.DoubleTensor,
                                 torch.BoolTensor, torch.ByteTensor, torch.HalfTensor])
def test_legacy_typed_constructor_of_numbers_is_in_the_graph(cls):
    def f(x):
        return x.sum() + cls([1, 0, 3]).to(x.dtype), cls((2.5, True))

    counting = check_against_eager(f, *arg_sets((3,)))
    check_registered_against_eager(f, *arg_sets((3,)))
    assert counting.graph_count == 1


def test_legacy_constructor_ignores_the_default_device_like_eager():
    def f(x):
        t = torch.FloatTensor([1.0, 2.0])
        return t.device.type, x + 1

    torch.set_default_device("meta")
    try:
        expected = f(torch.ones(2, device="cpu"))
        got = jit.compile(f)(torch.ones(2, device="cpu"))
    finally:
        torch.set_default_device(None)
    assert got[0] == expected[0] == "cpu"


def test_legacy_constructor_with_sizes_matches_eager_in_shape_and_dtype():
    def f(x):
        return torch.FloatTensor(2, 3).shape, torch.IntTensor(4).dtype, x * 2

    x = randn(3)
    expected = f(x)
    got = jit.compile(f)(x)
    assert got[:2] == expected[:2]
    assert torch.equal(got[2], expected[2])


def test_slice_bound_from_a_tensor_matches_eager_and_runs_no_real_tensor_through_fake():
    def g(a, b, n):
        s = a + b
        return torch.tanh(s[:, :n, :]) * torch.sigmoid(s[:, n:, :])

    def f(a, b):
        t = torch.IntTensor([4])
        return g(a, b, t[0])

    counting = check_against_eager(f, *arg_sets((2, 8, 3), (2, 8, 3)), expected_graphs=None)
    assert counting.graph_count <= 2


def test_slice_of_a_tensor_written_in_place_between_calls_is_not_reused():
    n = torch.tensor(4)

    def f(x):
        return x[:, n:] * 2  # the slice is built around the same tensor object on every call

    compiled = jit.compile(f, backend=CountingBackend())
    x = randn(2, 8)
    assert torch.equal(compiled(x), f(x))
    n.fill_(6)
    assert compiled(x).shape == f(x).shape == (2, 2)
