"""Note [is_compiling() in a capture with no graph]: a helper that only asks torch.compiler.is_compiling(), compiled
as a frame of its own (here: called from a frame run natively because a break lies inside its loop), answers as
eager Python does, so the native caller takes eager's path, as it does under torch.compile."""
import pytest
import torch

import jitcore as jit
from tests.support import CountingBackend


def compiling():
    return torch.compiler.is_compiling()


def encoder(x, mask=None):
    if mask is None and not compiling():
        mask = torch.ones(x.shape[0], 1)  # skipped by library code "when compiling"
    for i in range(2):
        x = x * 2
        print("step", i)  # a break inside the loop: this frame runs natively
    return x * mask[:, :1]


@pytest.mark.parametrize("door", ["compile", "register"])
def test_a_helper_asking_is_compiling_answers_false_to_a_native_caller(door, capsys):
    x = torch.randn(3, 4)
    expected = encoder(x)
    if door == "compile":
        got = jit.compile(encoder, backend=CountingBackend())(x)
    else:
        jit.register(encoder)
        with jit.enabled(backend=CountingBackend()):
            got = encoder(x)
    torch.testing.assert_close(got, expected)


def test_is_compiling_inside_a_captured_graph_is_still_true():
    def forward(x):
        return x + 1 if torch.compiler.is_compiling() else x - 1

    counting = CountingBackend()
    got = jit.compile(forward, backend=counting)(torch.zeros(2))
    torch.testing.assert_close(got, torch.ones(2))  # traced code takes the compiler's path, as under torch.compile
    assert counting.graph_count == 1
