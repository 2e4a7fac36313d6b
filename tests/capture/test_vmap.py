"""torch.vmap / torch.func.vmap inside traced code: the vmapped function is traced into a graph of its own and the
call is one node of the frame's graph (Note [vmap as a nested graph], capture/values/vmap.py). Results and gradients
equal eager's under the eager and aot_eager backends; a function that cannot be one pure graph (it prints, mutates)
breaks at the call and runs natively, as eager."""

import pytest
import torch
import torch.func

import jitcore as jit
from tests.support import CountingBackend, check_against_eager, check_registered_against_eager, outcome, randn

BACKENDS = ["eager", "aot_eager"]


def pointwise(x):
    return torch.vmap(lambda row: row.sin() * 2 + row.sum())(x)


def elementwise(x):
    # over an empty batch too, as the recursion of torch's generic associative scan reaches one
    return torch.vmap(lambda row, other: row.sin() * other, in_dims=(0, None))(x, x.new_ones(3))


def dims_tuple_and_none(x, w):
    return torch.vmap(lambda a, b: a @ b + b.mean(), in_dims=(1, None))(x, w)


def out_dim_one(x):
    return torch.func.vmap(lambda row: row.cos() + row.max(), in_dims=0, out_dims=1)(x)


def two_outputs_out_dims(x, y):
    s, d = torch.vmap(lambda a, b: (a + b, a - b), in_dims=(0, 1), out_dims=(0, 1))(x, y)
    return s * 2, d


def nested(x, y):
    # vmap of vmap, as transformers' _vmap_expansion_sdpa builds its masks
    inner = torch.vmap(lambda a, b: a * b + a.exp(), in_dims=(0, None))
    return torch.vmap(inner, in_dims=(None, 0))(x, y)


def closure_over_outer_tensor(x, w):
    h = w.tanh()
    return torch.vmap(lambda row: (row * h).sum() + h[0])(x) + 1


def with_kwargs(x, bias):
    def body(row, *, shift):
        return row * 3 + shift
    return torch.vmap(body)(x, shift=bias)


def _grads(fn, inputs, compiled):
    inputs = [t.detach().clone().requires_grad_() for t in inputs]
    out = compiled(*inputs)
    total = sum(o.sum() for o in out) if isinstance(out, tuple) else out.sum()
    total.backward()
    return out, [t.grad for t in inputs]


CASES = [
    (pointwise, [randn(4, 3, seed=1)]),
    (elementwise, [randn(0, 3, seed=1)]),
    (dims_tuple_and_none, [randn(3, 5, 2, seed=1), randn(2, seed=2)]),
    (out_dim_one, [randn(4, 3, seed=1)]),
    (two_outputs_out_dims, [randn(4, 3, seed=1), randn(3, 4, seed=2)]),
    (nested, [randn(3, seed=1), randn(5, seed=2)]),
    (closure_over_outer_tensor, [randn(4, 3, seed=1), randn(3, seed=2)]),
    (with_kwargs, [randn(4, 3, seed=1), randn(3, seed=2)]),
]
IDS = [f"{fn.__name__}-{inputs[0].shape[0]}" for fn, inputs in CASES]


@pytest.mark.parametrize("fn,inputs", CASES, ids=IDS)
def test_vmap_is_one_graph_equal_to_eager(fn, inputs):
    counting = check_against_eager(fn, tuple(inputs), tuple(t + 1 for t in inputs))
    assert any(getattr(node.target, "__name__", "") == "run_vmapped" for gm in counting.graphs
               for node in gm.graph.nodes)
    assert not jit.explain(fn, *inputs).breaks


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,inputs", CASES, ids=IDS)
def test_gradients_through_vmap_equal_eager(backend, fn, inputs):
    counting = CountingBackend(backend)
    expected_out, expected_grads = _grads(fn, inputs, fn)
    out, grads = _grads(fn, inputs, jit.compile(fn, backend=counting))
    torch.testing.assert_close(out, expected_out)
    for got, want in zip(grads, expected_grads):
        torch.testing.assert_close(got, want)
    assert counting.graph_count == 1
    assert any(getattr(node.target, "__name__", "") == "run_vmapped" for node in counting.graphs[0].graph.nodes)


def test_vmap_through_register_and_enabled():
    counting = check_registered_against_eager(nested, (randn(3, seed=1), randn(5, seed=2)))
    assert counting.graph_count == 1
    assert not jit.explain(nested, randn(3, seed=1), randn(5, seed=2)).breaks


def _causal_and_padding(padding):
    def mask(b, h, q, kv):
        return (kv <= q) & (kv < padding.sum() + b * 0 + h * 0)
    return mask


def masks(padding, q_len: int):
    # transformers' masking_utils: one vmap per dim over index tensors, comparisons inside
    mask_fn = _causal_and_padding(padding)
    for dims in [(None, None, None, 0), (None, None, 0, None), (None, 0, None, None), (0, None, None, None)]:
        mask_fn = torch.vmap(mask_fn, in_dims=dims, out_dims=0)
    return mask_fn(torch.arange(2), torch.arange(1), torch.arange(q_len), torch.arange(q_len))


def test_masking_utils_style_mask_is_one_graph():
    padding = torch.tensor([1, 1, 1, 0, 0])
    check_against_eager(masks, (padding, 5), (torch.tensor([1, 1, 0, 0, 0]), 5))
    assert not jit.explain(masks, padding, 5).breaks


def _combine(left, right):
    a_left, b_left = left
    a_right, b_right = right
    return a_left * a_right, a_right * b_left + b_right


def _scan(elems):
    # the recursion of torch's generic associative scan: pairs combined by a vmapped function, then the odd ones
    if elems[0].shape[0] < 2:
        return elems
    combine = torch.vmap(_combine, in_dims=((0, 0), (0, 0)), out_dims=0)
    reduced = combine(tuple(e[0:-1:2] for e in elems), tuple(e[1::2] for e in elems))
    odd = _scan(reduced)
    even = combine(tuple(e[:-1] for e in odd), tuple(e[2::2] for e in elems)) if elems[0].shape[0] > 2 else None
    first = [e[0:1] for e in elems]
    if even is None:
        return [torch.cat([f, o]) for f, o in zip(first, odd)]
    out = []
    for f, o, ev, e in zip(first, odd, even, elems):
        inter = torch.stack([ev, o[: ev.shape[0]]], dim=1).flatten(0, 1)
        tail = [o[ev.shape[0]:]] if e.shape[0] % 2 == 0 else []
        out.append(torch.cat([f, inter, *tail]))
    return out


def associative_scan_like(a, b):
    return _scan([a, b])


def test_an_associative_scan_like_recursion_is_one_graph():
    a, b = randn(8, 3, seed=1).sigmoid(), randn(8, 3, seed=2)
    check_against_eager(associative_scan_like, (a, b), (a * 0.5, b + 1))
    assert not jit.explain(associative_scan_like, a, b).breaks


def test_torchs_generic_associative_scan_is_one_graph():
    from torch._higher_order_ops.associative_scan import associative_scan

    def fn(a, b):
        return associative_scan(_combine, (a, b), dim=1, combine_mode="generic")

    a, b = randn(2, 7, 3, seed=1).sigmoid(), randn(2, 7, 3, seed=2)
    check_against_eager(fn, (a, b))
    assert not jit.explain(fn, a, b).breaks


def test_a_vmapped_function_that_prints_runs_as_eager(capsys):
    def fn(x):
        def body(row):
            print("row", row.shape)
            return row * 2
        return torch.vmap(body)(x) + 1

    x = randn(4, 3, seed=1)
    expected = fn(x)
    eager_out = capsys.readouterr().out
    counting = CountingBackend()
    got = jit.compile(fn, backend=counting)(x)
    torch.testing.assert_close(got, expected)
    assert capsys.readouterr().out == eager_out
    assert [b.kind for b in jit.explain(fn, x).breaks] == ["vmap"]


def test_an_in_place_write_to_a_batched_argument_runs_as_eager():
    def fn(x):
        def body(row):
            row.mul_(2)
            return row + 1
        return torch.vmap(body)(x)

    x, y = randn(4, 3, seed=1), randn(4, 3, seed=1)
    expected = fn(y)
    torch.testing.assert_close(jit.compile(fn, backend=CountingBackend())(x), expected)
    torch.testing.assert_close(x, y)
    assert [b.kind for b in jit.explain(fn, randn(4, 3)).breaks] == ["vmap"]


def test_a_vmapped_function_returned_from_the_frame_is_rebuilt():
    def fn(w):
        return torch.vmap(lambda row: row * 2), w + 1

    w = randn(3, seed=1)
    g, out = jit.compile(fn, backend=CountingBackend())(w)
    torch.testing.assert_close(out, w + 1)
    x = randn(4, 3, seed=2)
    torch.testing.assert_close(g(x), x * 2)


class _RowNorm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.linspace(0.5, 1.5, 3))
        # made once, before any capture: its call is traced up to torch's vmap_impl
        self.per_row = torch.vmap(self._row)

    def _row(self, row):
        return row / row.norm() * self.scale

    def forward(self, x):
        return self.per_row(x).relu()


def test_a_vmapped_function_made_before_the_capture_is_one_graph():
    module = _RowNorm()
    check_against_eager(module, (randn(4, 3, seed=1),), (randn(4, 3, seed=2),))
    assert not jit.explain(module, randn(4, 3, seed=1)).breaks


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_parameter_read_inside_the_vmapped_function_gets_its_gradient(backend):
    module, x = _RowNorm(), randn(4, 3, seed=1)
    module(x).sum().backward()
    expected = module.scale.grad.clone()
    module.scale.grad = None
    jit.compile(module, backend=CountingBackend(backend))(x).sum().backward()
    torch.testing.assert_close(module.scale.grad, expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_over_dynamic_sizes_is_one_graph_per_frame(backend):
    counting = CountingBackend(backend)
    compiled = jit.compile(closure_over_outer_tensor, backend=counting, dynamic=True)
    for rows, cols in [(4, 3), (7, 5), (2, 6)]:
        x, w = randn(rows, cols, seed=rows), randn(cols, seed=cols)
        torch.testing.assert_close(compiled(x, w), closure_over_outer_tensor(x, w))
    assert counting.graph_count == 1


def test_functorch_vmap_warns_as_eager_and_its_call_is_captured():
    functorch = pytest.importorskip("functorch")

    def fn(x):
        return functorch.vmap(lambda row: row * 2)(x) + 1

    x = randn(4, 3, seed=1)
    counting = CountingBackend()
    with pytest.warns(FutureWarning, match="functorch.vmap"):
        expected = fn(x)
    with pytest.warns(FutureWarning, match="functorch.vmap"):
        got = jit.compile(fn, backend=counting)(x)
    torch.testing.assert_close(got, expected)
    assert [node for gm in counting.graphs for node in gm.graph.nodes
            if getattr(node.target, "__name__", "") == "run_vmapped"]


def test_a_vmapped_function_that_writes_a_list_written_before_runs_as_eager():
    seen = []

    def fn(x):
        seen.append(0)

        def body(row):
            seen.append(1)
            return row * 2
        return torch.vmap(body)(x)

    x = randn(4, 3, seed=1)
    expected = fn(x)
    torch.testing.assert_close(jit.compile(fn, backend=CountingBackend())(x), expected)
    assert seen == [0, 1, 0, 1]
    assert [b.kind for b in jit.explain(fn, x).breaks] == ["vmap"]


def test_a_tensor_made_inside_the_vmapped_function_that_escapes_never_reaches_the_frames_graph():
    # eager raises where the escaped tensor is used; jitcore's graph never holds a node of the vmapped body
    def fn(x):
        kept = []

        def body(row):
            kept.append(row.sin())
            return row * 2
        out = torch.vmap(body)(x)
        return out + kept[0]

    x = randn(4, 3, seed=1)
    expected = outcome(fn, x)
    got = outcome(jit.compile(fn, backend=CountingBackend()), x)
    assert expected[0] == got[0] == "raised"
    assert expected[1][0] is got[1][0]


@pytest.mark.parametrize("in_dims", [[0, None], None, ((0, 0), None), ([0, 0], None)],
                         ids=["list", "none", "nested-tuple", "nested-list-for-a-tuple"])
def test_in_dims_torch_rejects_raise_as_eager_and_a_matching_nesting_is_captured(in_dims):
    def fn(pair, w):
        return torch.vmap(lambda p, v: p[0] * p[1] + v, in_dims=in_dims)(pair, w)

    args = ((randn(4, 3, seed=1), randn(4, 3, seed=2)), randn(3, seed=3))
    expected = outcome(fn, *args)
    got = outcome(jit.compile(fn, backend=CountingBackend()), *args)
    assert got[0] == expected[0]
    if expected[0] == "raised":
        assert got[1][0] is expected[1][0]
    else:
        torch.testing.assert_close(got[1], expected[1])
        assert not jit.explain(fn, *args).breaks


def test_nested_vmap_and_its_gradients_under_inductor():
    pytest.importorskip("torch._inductor")
    counting = CountingBackend("inductor")
    inputs = [randn(3, seed=1), randn(5, seed=2)]
    expected_out, expected_grads = _grads(nested, inputs, nested)
    out, grads = _grads(nested, inputs, jit.compile(nested, backend=counting))
    torch.testing.assert_close(out, expected_out)
    for got, want in zip(grads, expected_grads):
        torch.testing.assert_close(got, want)
    assert counting.graph_count == 1


def test_a_grad_mode_region_inside_the_vmapped_function_is_captured():
    def fn(x, w):
        def body(row):
            with torch.no_grad():
                scale = (row * w).sum()
            return row * scale
        return torch.vmap(body)(x)

    inputs = [randn(4, 3, seed=1), randn(3, seed=2)]
    expected_out, expected_grads = _grads(fn, inputs, fn)
    out, grads = _grads(fn, inputs, jit.compile(fn, backend=CountingBackend("aot_eager")))
    torch.testing.assert_close(out, expected_out)
    for got, want in zip(grads, expected_grads):
        torch.testing.assert_close(got, want)
    assert not jit.explain(fn, *inputs).breaks


def test_a_size_of_an_outer_tensor_read_inside_under_dynamic_shapes_equals_eager():
    # the symbol is an input of the frame's graph, lifted into the body with in_dim None
    def fn(x, h):
        n = h.shape[0]
        return torch.vmap(lambda row: row * h.shape[0])(x) + n

    compiled = jit.compile(fn, backend=CountingBackend(), dynamic=True)
    for rows, size in [(4, 3), (6, 5)]:
        x, h = randn(rows, 3, seed=rows), randn(size, seed=size)
        torch.testing.assert_close(compiled(x, h), fn(x, h))
