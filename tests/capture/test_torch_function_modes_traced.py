"""TorchFunctionModes entered inside the captured function (Note [Torch function modes traced],
capture/values/function_modes.py): each torch call under the mode goes through its inlined __torch_function__ with
the mode taken off, so the graph holds what the mode made of it and the mode object's own changes are replayed; a
break under a mode happens where the mode was entered, so nothing after it runs without the mode.
"""

import torch
from torch.overrides import TorchFunctionMode

import jitcore as jit
from tests.support import CountingBackend


class AddBecomesSub(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is torch.Tensor.add or func is torch.add:
            func = torch.sub
        return func(*args, **(kwargs or {}))


class Log(TorchFunctionMode):
    def __init__(self, log, tag="log"):
        super().__init__()
        self.log = log
        self.tag = tag
        self.calls = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.calls += 1
        self.log.append((self.tag, func))
        return func(*args, **(kwargs or {}))


class FallThrough(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _compiled(fn):
    backend = CountingBackend()
    return jit.compile(fn, backend=backend), backend


def _same_log_as_eager(fn, x):
    """fn(x, log) compiled and eager: the same result and the same calls seen by the modes; (eager's log, backend)."""
    eager_log, jit_log = [], []
    want = fn(x, eager_log)
    compiled, backend = _compiled(fn)
    assert torch.equal(compiled(x, jit_log), want)
    assert jit_log == eager_log
    return eager_log, backend


def rewrite_add(x):
    with AddBecomesSub():
        y = x + 1
        z = torch.add(x, 2)
    return y, z, x + 1


def test_a_mode_that_rewrites_an_op_is_traced_into_one_graph():
    x = torch.randn(4)
    compiled, backend = _compiled(rewrite_add)
    for got, want in zip(compiled(x), rewrite_add(x)):
        assert torch.equal(got, want)
    assert backend.graph_count == 1
    targets = [n.target for n in backend.graphs[0].graph.nodes if n.op == "call_function"]
    assert targets.count(torch.sub) == 2


def counted(x, mode):
    with mode:
        y = x * 2 + x.shape[0]
        y = y.sin()[1:]
    return y


def test_a_counting_mode_sees_every_call_and_its_count_is_replayed():
    x = torch.randn(5)
    eager_log, jit_log = [], []
    eager_mode, jit_mode = Log(eager_log), Log(jit_log)
    want = counted(x, eager_mode)
    compiled, backend = _compiled(counted)
    got = compiled(x, jit_mode)
    assert torch.equal(got, want)
    assert jit_log == eager_log and jit_mode.calls == eager_mode.calls == len(eager_log)
    assert ("log", torch.Tensor.__getitem__) in jit_log and ("log", torch.Tensor.shape.__get__) in jit_log
    assert backend.graph_count == 1
    compiled(x, jit_mode)
    assert jit_log == eager_log * 2


def falls_through(x):
    with FallThrough():
        y = x[torch.tensor(1)] + x.sum()
    return y * 2


def test_a_mode_that_falls_through_leaves_the_ops_as_they_were():
    x = torch.randn(3)
    compiled, backend = _compiled(falls_through)
    assert torch.equal(compiled(x), falls_through(x))
    assert backend.graph_count == 1


def nested(x, log):
    with Log(log, "outer"):
        with Log(log, "inner"):
            y = x + 1
        z = y * 2
    return z


def test_nested_modes_see_calls_innermost_first_then_the_next():
    eager_log, backend = _same_log_as_eager(nested, torch.randn(3))
    assert eager_log[:2] == [("inner", torch.Tensor.add), ("outer", torch.Tensor.add)]
    assert backend.graph_count == 1


def entered_outside(x):
    return x + 1


def test_a_mode_entered_before_the_call_still_decides_the_ops():
    x = torch.randn(3)
    compiled, _ = _compiled(entered_outside)
    with AddBecomesSub():
        assert torch.equal(compiled(x), x - 1)
    assert torch.equal(compiled(x), x + 1)


def raises_inside(x, log):
    try:
        with Log(log):
            y = x + 1
            raise ValueError("inside")
    except ValueError:
        y = y + 1
    return y


def test_an_exception_inside_the_block_leaves_the_mode():
    eager_log, _ = _same_log_as_eager(raises_inside, torch.randn(3))
    assert eager_log == [("log", torch.Tensor.add)]


def breaks_inside(x, log):
    with Log(log):
        y = x + 1
        print("under the mode")
        z = y * 2
    return z - 1


def test_a_break_under_a_mode_runs_the_block_under_the_real_mode(capsys):
    eager_log, backend = _same_log_as_eager(breaks_inside, torch.randn(3))
    assert eager_log == [("log", torch.Tensor.add), ("log", torch.Tensor.mul)]
    # the break is at the `with` (the mode is real from there), and the resume function starts under it: native
    reason = jit.explain(breaks_inside, torch.randn(3), []).breaks[0]
    assert reason.kind == "print_or_io" and "under Log" in reason.reason


def vmapped(x, log):
    with Log(log):
        return torch.vmap(lambda a: a * 2 + 1)(x)


def test_vmap_under_a_mode_shows_the_mode_what_eager_shows_it():
    _same_log_as_eager(vmapped, torch.randn(2, 3))


def vmapped_pure(x):
    with FallThrough():
        return torch.vmap(lambda a: a[torch.tensor(0)] * 2)(x)


def test_vmap_under_a_pure_mode_is_one_graph():
    x = torch.randn(2, 3)
    compiled, backend = _compiled(vmapped_pure)
    assert torch.equal(compiled(x), vmapped_pure(x))
    assert backend.graph_count == 1


def mask(pad):
    from torch._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex

    def both(b, q, kv):
        return (kv <= q) & pad[b, kv]
    f = both
    for dims in [(None, None, 0), (None, 0, None), (0, None, None)]:
        f = torch.vmap(f, in_dims=dims)
    with TransformGetItemToIndex():
        return f(torch.arange(2), torch.arange(4), torch.arange(4))


def test_transformers_getitem_to_index_mode_builds_the_same_mask():
    pad = torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1]], dtype=torch.bool)
    compiled, backend = _compiled(mask)
    assert torch.equal(compiled(pad), mask(pad))
    assert backend.graph_count == 1


class CountSizes(TorchFunctionMode):
    """Counts only metadata questions, so the vmapped body (a * 2 + 1) stays pure and is traced."""

    def __init__(self):
        super().__init__()
        self.asked = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is torch.Tensor.dim or func is torch.Tensor.size:
            self.asked += 1
        return func(*args, **(kwargs or {}))


def vmapped_sizes(x, y, mode):
    with mode:
        return torch.vmap(lambda a, b: a * 2 + b, in_dims=(-1, 0))(x, y)


def test_vmap_under_a_mode_shows_it_vmaps_own_size_questions():
    x, y = torch.randn(3, 2), torch.randn(2, 3)
    eager_mode, jit_mode = CountSizes(), CountSizes()
    want = vmapped_sizes(x, y, eager_mode)
    compiled, backend = _compiled(vmapped_sizes)
    assert torch.equal(compiled(x, y, jit_mode), want)
    assert jit_mode.asked == eager_mode.asked == 7
    assert backend.graph_count == 1


class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


def function_under_mode(x, log):
    with Log(log):
        return Double.apply(x) + 1


def test_an_autograd_function_under_a_mode_shows_the_mode_its_forward():
    eager_log, _ = _same_log_as_eager(function_under_mode, torch.randn(3))
    assert ("log", torch.Tensor.mul) in eager_log


def reads_the_stack(x):
    with FallThrough():
        depth = torch._C._len_torch_function_stack()
        return x + depth


def test_reading_torchs_mode_stack_under_a_traced_mode_sees_the_mode():
    x = torch.randn(3)
    compiled, _ = _compiled(reads_the_stack)
    assert torch.equal(compiled(x), reads_the_stack(x))
    assert torch.equal(compiled(x), x + 1)


def writes_and_iterates(x, log):
    y = x.clone()
    with Log(log):
        y[0] = 5.0
        rows = [r * 2 for r in y]
    return rows, y


def test_setitem_and_iteration_under_a_mode_match_eager():
    x = torch.randn(3, 2)
    eager_log, jit_log = [], []
    want = writes_and_iterates(x, eager_log)
    compiled, _ = _compiled(writes_and_iterates)
    got = compiled(x, jit_log)
    assert all(torch.equal(a, b) for a, b in zip(got[0], want[0])) and torch.equal(got[1], want[1])
    assert jit_log == eager_log and ("log", torch.Tensor.__setitem__) in eager_log
