"""torch's probes of its own process state fold into constants while tracing (no graph break), as torch.compile
folds them: usage logging, the dispatch-mode and torch-function stacks, TorchScript's tracing state, autocast
anywhere, the profiler; answers that can change between calls are guarded (a dispatch mode pushed recompiles).
nn.MultiheadAttention keeps to its composite path inside a graph (`_is_make_fx_tracing()` is True there), never
the fused fast path no backend can trace.
"""

import pytest
import torch
import torch.utils._python_dispatch as python_dispatch

import jitcore as jit
from tests.support import CountingBackend, check_against_eager, check_registered_against_eager, randn


def logs_usage(x):
    torch._C._log_api_usage_once("jitcore.test.probe")
    return x * 2


def dispatch_stack(x):
    return x + torch._C._len_torch_dispatch_stack()


def function_stack(x):
    return x + torch._C._len_torch_function_stack()


def tracing_state(x):
    return x + (torch._C._get_tracing_state() is None)


def any_autocast(x):
    return x - torch._C._is_any_autocast_enabled()


def profiler(x):
    return x + torch.autograd._profiler_enabled()


def mode_stack_helper(x):
    if python_dispatch._get_current_dispatch_mode_stack():
        return x - 1
    return x + 1


def cuda_available(x):
    return x + torch.cuda.is_available()


def torchvision_style_logging(x):
    # torchvision's helper: reads the function's __class__ and module, then logs once
    obj = torchvision_style_logging
    name = obj.__class__.__name__
    if isinstance(obj, type(logs_usage)):
        name = obj.__name__
    torch._C._log_api_usage_once(f"{obj.__module__}.{name}")
    return x + 1


@pytest.mark.parametrize("fn", [logs_usage, dispatch_stack, function_stack, tracing_state, any_autocast, profiler,
                                mode_stack_helper, cuda_available, torchvision_style_logging],
                         ids=lambda f: f.__name__)
def test_probe_folds_into_one_graph(fn):
    check_against_eager(fn, (randn(3, seed=1),), (randn(3, seed=2),), expected_graphs=1)
    assert check_registered_against_eager(fn, (randn(3, seed=1),)).graph_count == 1
    assert not jit.explain(fn, randn(3)).breaks


class _Passthrough(python_dispatch.TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def test_dispatch_mode_pushed_between_calls_recompiles():
    counting = CountingBackend()
    compiled = jit.compile(dispatch_stack, backend=counting)
    x = randn(3)
    assert torch.equal(compiled(x), dispatch_stack(x))
    with _Passthrough():
        expected = dispatch_stack(x)
        got = compiled(x)
    assert torch.equal(got, expected) and torch.equal(expected, x + 1)
    assert torch.equal(compiled(x), x)


def test_dispatch_mode_stack_read_under_a_mode_is_not_folded_empty():
    compiled = jit.compile(mode_stack_helper, backend="eager")
    x = randn(3)
    with _Passthrough():
        expected = mode_stack_helper(x)
        got = compiled(x)
    assert torch.equal(got, expected) and torch.equal(expected, x - 1)


def test_multihead_attention_in_eval_stays_on_the_composite_path():
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(16, 4, batch_first=True).eval()

    def attend(x):
        return mha(x, x, x, need_weights=False)[0]

    counting = CountingBackend()
    compiled = jit.compile(attend, backend=counting)
    x = randn(2, 5, 16)
    with torch.no_grad():
        expected = attend(x)
        got = compiled(x)
    torch.testing.assert_close(got, expected)
    assert counting.graph_count == 1
    targets = {str(node.target) for gm in counting.graphs for node in gm.graph.nodes}
    assert not any("native_multi_head_attention" in t for t in targets), targets


def test_torchvision_stochastic_depth_logs_without_a_break():
    torchvision = pytest.importorskip("torchvision")
    layer = torchvision.ops.StochasticDepth(0.2, "row").eval()

    def block(x):
        return layer(x * 2) + 1

    check_against_eager(block, (randn(2, 3, seed=1),), expected_graphs=1)
    assert not jit.explain(block, randn(2, 3)).breaks
