"""TorchFunctionMode (Note [Torch function modes], capture/frame.py): code under a mode runs in Python, so the
mode's __torch_function__ decides every torch call there as in eager; a `with mode:` inside the function breaks
at its entry, and the code before it stays a graph; an entry made outside a mode never runs inside one."""
import torch
from torch.overrides import TorchFunctionMode

from tests.support import CountingBackend, check_against_eager, randn


class ShiftMul(TorchFunctionMode):
    """Adds 100 to the result of every Tensor.mul: a graph that ignored the mode would miss it."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        return out + 100 if func is torch.Tensor.mul else out


def mode_inside(x):
    y = x.sin()
    with ShiftMul():
        y = y.mul(2)
    return y.mul(3)


def test_with_mode_inside_matches_eager_and_keeps_the_prefix_graph():
    counting = check_against_eager(mode_inside, (randn(3),), (randn(3, seed=1),), expected_graphs=None)
    targets = [node.target for gm in counting.graphs for node in gm.graph.nodes if node.op == "call_method"]
    assert "sin" in targets and targets.count("mul") <= 1  # the mul under the mode is never a graph op


def test_entry_made_outside_a_mode_is_not_run_inside_one():
    import jitcore as jit
    counting = CountingBackend("eager")
    compiled = jit.compile(lambda x: x.mul(2).sum(), backend=counting)
    x = randn(3)
    torch.testing.assert_close(compiled(x), x.mul(2).sum())
    with ShiftMul():
        expected = x.mul(2).sum()
        got = compiled(x)
    torch.testing.assert_close(got, expected)
    torch.testing.assert_close(compiled(x), x.mul(2).sum())  # outside again: the first entry
    assert counting.graph_count == 1


def test_device_context_under_a_compiled_call_moves_factories():
    import jitcore as jit
    compiled = jit.compile(lambda x: x + torch.zeros(3).device.type.__len__(), backend="eager")
    x = randn(3)
    compiled(x)
    with torch.device("meta"):
        got = compiled(x)
    torch.testing.assert_close(got, x + 4)  # "meta": torch.zeros made under the device context
