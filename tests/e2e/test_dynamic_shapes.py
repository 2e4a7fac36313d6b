"""Dynamic shapes end to end: one graph for many sizes (automatic dynamic, dynamic=True/False, mark_dynamic,
mark_static), relations between sizes guarded and reported in the user's names, results equal to eager.

Graph counts are compared with torch.compile's on the same sweeps (issue 14's table): MLP batch 2..9 -> 2,
causal attention -> 3, Sequential -> 2, dynamic=True pointwise -> 1.
"""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

import jitcore as jit
from jitcore import events
from tests.support import CountingBackend, assert_same, compare_call, recompile_messages

BACKENDS = [None, "aot_eager"]


def _counting(inner):
    return CountingBackend(inner)


def _mlp(x, w1, b1, w2):
    return torch.relu(x @ w1 + b1) @ w2


@pytest.mark.parametrize("inner", BACKENDS)
def test_mlp_batch_sweep_takes_two_graphs_and_equals_eager(inner):
    counting = _counting(inner)
    compiled = jit.compile(_mlp, backend=counting)
    w1, b1, w2 = torch.randn(8, 16), torch.randn(16), torch.randn(16, 4)
    for batch in range(2, 10):
        compare_call(_mlp, compiled, (torch.randn(batch, 8), w1, b1, w2))
    assert counting.graph_count == 2


def _attention(q, k, v):
    t = q.shape[1]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
    scores = scores.masked_fill(mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def test_causal_attention_over_batch_and_length_takes_at_most_three_graphs():
    counting = CountingBackend()
    compiled = jit.compile(_attention, backend=counting)
    for batch, length in [(1, 16), (1, 17), (2, 31), (2, 64), (3, 100), (4, 128), (1, 5)]:
        q, k, v = (torch.randn(batch, length, 8) for _ in range(3))
        compare_call(_attention, compiled, (q, k, v))
    assert counting.graph_count <= 3


def test_sequential_linear_layernorm_gelu_takes_two_graphs():
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.LayerNorm(16), torch.nn.GELU(),
                                torch.nn.Linear(16, 4))
    counting = CountingBackend()
    compiled = jit.compile(model, backend=counting)
    for batch in (2, 3, 5, 8, 13, 21):
        x = torch.randn(batch, 8)
        torch.testing.assert_close(compiled(x), model(x))
    assert counting.graph_count == 2


def test_dynamic_true_compiles_one_graph_for_every_batch():
    def f(x):
        return torch.sin(x) * 2 + 1

    counting = CountingBackend()
    compiled = jit.compile(f, backend=counting, dynamic=True)
    for batch in (3, 5, 7, 9):
        compare_call(f, compiled, (torch.randn(batch, 4),))
    assert counting.graph_count == 1


def test_dynamic_true_keeps_parameters_static():
    model = torch.nn.Linear(4, 3)
    counting = CountingBackend()
    compiled = jit.compile(model, backend=counting, dynamic=True)
    for batch in (3, 5, 7):
        x = torch.randn(batch, 4)
        torch.testing.assert_close(compiled(x), model(x))
    assert counting.graph_count == 1
    fakes = {node.name: node.meta["val"] for node in counting.graphs[0].graph.nodes if node.op == "placeholder"}
    params = [v for name, v in fakes.items() if "weight" in name or "bias" in name]
    assert len(params) == 2 and all(all(type(s) is int for s in v.shape) for v in params)
    inputs = [v for name, v in fakes.items() if "weight" not in name and "bias" not in name]
    assert len(inputs) == 2 and isinstance(inputs[1].shape[0], torch.SymInt)
    assert inputs[0].node.expr == inputs[1].shape[0].node.expr  # its batch size comes first, as a SymInt input


def test_dynamic_false_compiles_one_graph_per_size():
    def f(x):
        return x * 2

    counting = CountingBackend()
    compiled = jit.compile(f, backend=counting, dynamic=False)
    for batch in (2, 3, 4, 5):
        compare_call(f, compiled, (torch.randn(batch),))
    assert counting.graph_count == 4


def test_training_step_over_batches_has_eager_gradients():
    def step(model, x, y):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        return loss

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    reference = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    reference.load_state_dict(model.state_dict())
    counting = CountingBackend("aot_eager")
    compiled = jit.compile(step, backend=counting)
    counts = []
    for batch in (2, 3, 5, 9, 4):
        x, y = torch.randn(batch, 6), torch.randn(batch, 1)
        model.zero_grad()
        reference.zero_grad()
        torch.testing.assert_close(compiled(model, x, y), step(reference, x, y))
        for p, q in zip(model.parameters(), reference.parameters()):
            torch.testing.assert_close(p.grad, q.grad)
        counts.append(counting.graph_count)
    # backward() breaks the graph (and traces torch's own ones_like once): after the second batch no new graph
    assert counts[1] == counts[-1]


def _branches_on_size(x):
    n = x.shape[0]
    if n > 4:
        return x.view(n * 2, -1) + n
    return x.reshape(-1) * len(x)


def test_a_branch_on_a_size_gives_one_graph_per_side_and_is_guarded_in_user_names(monkeypatch):
    found, listen = recompile_messages(monkeypatch)
    counting = CountingBackend()
    compiled = jit.compile(_branches_on_size, backend=counting)
    try:
        for batch in (2, 3, 5, 6, 7, 3, 4, 8):
            compare_call(_branches_on_size, compiled, (torch.randn(batch, 8),))
    finally:
        events.unsubscribe(listen)
    assert counting.graph_count == 3
    assert any("x.shape[0] changed 2 -> 3: now dynamic" in m for m in found)
    assert any("x.shape[0] <= 4 no longer holds (x.shape[0] = 5)" in m for m in found)


def test_sizes_flow_through_arithmetic_factories_and_views():
    def f(x):
        n, d = x.shape
        total = x.numel()
        r = torch.arange(n) * 2 + torch.zeros(n) + torch.ones(x.size(0))
        y = x.reshape(total // d, d).expand(n, d) + r.unsqueeze(1)
        return y.view(-1)[: total] * (len(x) - 1), n + 1

    counting = CountingBackend()
    compiled = jit.compile(f, backend=counting)
    for batch in (2, 3, 6, 11):
        compare_call(f, compiled, (torch.randn(batch, 5),))
    assert counting.graph_count == 2


def test_a_size_used_as_a_range_count_is_specialised_and_stays_correct():
    def f(x):
        out = x
        for _ in range(x.shape[0]):
            out = out * 2
        return out

    counting = CountingBackend()
    compiled = jit.compile(f, backend=counting)
    for batch in (2, 3, 4, 3, 2):
        compare_call(f, compiled, (torch.randn(batch),))
    assert counting.graph_count == 3


def test_a_dynamic_entry_is_not_reused_when_a_size_becomes_one_under_broadcasting():
    def f(x, y):
        return x + y

    counting = CountingBackend()
    compiled = jit.compile(f, backend=counting, dynamic=True)
    compare_call(f, compiled, (torch.randn(3, 4), torch.randn(3, 4)))
    compare_call(f, compiled, (torch.randn(5, 4), torch.randn(5, 4)))
    compare_call(f, compiled, (torch.randn(5, 4), torch.randn(1, 4)))  # broadcasting: another graph
    compare_call(f, compiled, (torch.randn(6, 4), torch.randn(6, 4)))
    assert counting.graph_count == 2


def test_two_inputs_that_stop_matching_fail_the_relation(monkeypatch):
    def f(x, y):
        return (x * y).sum(0)

    found, listen = recompile_messages(monkeypatch)
    counting = CountingBackend()
    compiled = jit.compile(f, backend=counting, dynamic=True)
    try:
        compare_call(f, compiled, (torch.randn(3, 4), torch.randn(3, 4)))
        compare_call(f, compiled, (torch.randn(6, 4), torch.randn(6, 4)))
        compare_call(f, compiled, (torch.randn(6, 4), torch.randn(5, 4)))  # eager raises: so does jitcore
    finally:
        events.unsubscribe(listen)
    assert counting.graph_count == 1
    assert any("y.shape[0] == x.shape[0] no longer holds (y.shape[0] = 5, x.shape[0] = 6)" in m for m in found)


def test_mark_dynamic_makes_the_first_graph_dynamic():
    def f(x):
        return x.sum(1) * x.shape[0]

    counting = CountingBackend()
    compiled = jit.compile(f, backend=counting)
    for batch in (3, 4, 9):
        x = torch.randn(batch, 2)
        jit.mark_dynamic(x, 0)
        torch.testing.assert_close(compiled(x), f(x))
    assert counting.graph_count == 1


def test_torch_dynamo_marks_work_too():
    def f(x):
        return x.cos()

    counting = CountingBackend()
    compiled = jit.compile(f, backend=counting)
    for batch in (3, 4, 9):
        x = torch.randn(batch, 2)
        torch._dynamo.maybe_mark_dynamic(x, 0)
        torch.testing.assert_close(compiled(x), f(x))
    assert counting.graph_count == 1


def test_mark_dynamic_with_a_max_recompiles_above_it():
    def f(x):
        return x + 1

    counting = CountingBackend()
    compiled = jit.compile(f, backend=counting)
    for batch in (3, 8, 20):
        x = torch.randn(batch)
        jit.mark_dynamic(x, 0, min=2, max=10)
        torch.testing.assert_close(compiled(x), f(x))
    assert counting.graph_count == 2


def test_mark_static_wins_over_dynamic_true():
    def f(x):
        return x * 3

    counting = CountingBackend()
    compiled = jit.compile(f, backend=counting, dynamic=True)
    for batch in (3, 4, 5):
        x = torch.randn(batch, 2)
        jit.mark_static(x, 0)
        torch.testing.assert_close(compiled(x), f(x))
    assert counting.graph_count == 3


def test_dynamic_false_honours_marks_as_torch_compile():
    # torch.compile(dynamic=False) keeps a marked dim symbolic (the mark is about that tensor); unmarked dims and
    # other inputs stay static. (compare_call would clone the inputs, and a clone carries no mark.)
    def f(x, y):
        return x * 3, y + 1

    counting = CountingBackend()
    compiled = jit.compile(f, backend=counting, dynamic=False)
    for batch in (3, 4, 5):
        x, y = torch.randn(batch), torch.randn(batch)
        jit.mark_dynamic(x, 0)
        assert_same(compiled(x, y), f(x, y))
    assert counting.graph_count == 3  # y's size varies: a graph each, x's entry is symbolic
    for batch in (6, 7):
        x, y = torch.randn(batch), torch.randn(batch)
        jit.maybe_mark_dynamic(x, 0)
        jit.maybe_mark_dynamic(y, 0)
        assert_same(compiled(x, y), f(x, y))
    assert counting.graph_count == 4


def test_data_dependent_sizes_stay_correct():
    def f(x):
        nz = torch.nonzero(x > 0)
        picked = x[x > 0]
        return nz.shape[0] + 1, picked * 2

    compiled = jit.compile(f, backend="eager")
    for batch in (4, 6, 9):
        compare_call(f, compiled, (torch.randn(batch),))


def test_register_and_enabled_use_the_same_policy():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    counting = CountingBackend()
    inputs = [torch.randn(batch, 4) for batch in (2, 3, 5, 7)]
    expected = [model(x) for x in inputs]
    jit.register(model)
    try:
        with jit.enabled(backend=counting):
            got = [model(x) for x in inputs]
    finally:
        jit.unregister(model)
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e)
    assert counting.graph_count == 2


def _breaks_in_the_middle(x):
    n = x.shape[0]
    y = x * n
    print("between the graphs")
    return y.sum(0) + n, n, y.shape[0] + 1


def test_a_resume_function_receives_symbolic_sizes_and_inherits_the_dynamic_dims(capsys):
    counting = CountingBackend()
    compiled = jit.compile(_breaks_in_the_middle, backend=counting)
    for batch in (2, 3, 4, 5, 6):
        x = torch.randn(batch, 3)
        jit.mark_dynamic(x, 0)
        got, want = compiled(x), _breaks_in_the_middle(x)
        torch.testing.assert_close(got[0], want[0])
        assert got[1:] == want[1:]
    assert counting.graph_count == 2  # the prefix and the resume function, both dynamic from their first call
    assert capsys.readouterr().out == "between the graphs\n" * 10


def test_a_resume_function_under_automatic_dynamic_stays_correct(capsys):
    counting = CountingBackend()
    compiled = jit.compile(_breaks_in_the_middle, backend=counting)
    for batch in (2, 3, 4, 5, 6, 2):
        compare_call(_breaks_in_the_middle, compiled, (torch.randn(batch, 3),))
    assert counting.graph_count == 4  # each of the two graphs: static, then dynamic


def test_a_marked_dim_that_tracing_makes_constant_is_reported_and_stays_correct(monkeypatch):
    def f(x):
        out = x
        for _ in range(x.shape[0]):
            out = out + 1
        return out

    found, listen = recompile_messages(monkeypatch)
    compiled = jit.compile(f, backend="eager")
    try:
        for batch in (3, 4):
            x = torch.randn(batch)
            jit.mark_dynamic(x, 0)
            torch.testing.assert_close(compiled(x), f(x))
    finally:
        events.unsubscribe(listen)
    assert any("marked with mark_dynamic became a constant" in m and "x.shape[0]" in m for m in found)


def test_a_branch_on_a_data_dependent_size_breaks_the_graph_and_stays_correct():
    def f(x):
        nz = x.nonzero()
        if nz.shape[0] > 2:
            return x + 1
        return x - 1

    compiled = jit.compile(f, backend="eager")
    for values in ([1.0, 0.0, 2.0], [1.0, 2.0, 3.0, 0.0, 4.0], [0.0, 0.0], [5.0, 6.0, 7.0]):
        compare_call(f, compiled, (torch.tensor(values),))


def test_comparing_whole_shapes_guards_the_relation_without_specialising():
    def f(x, y):
        same = x.shape == y.shape
        out = torch.zeros(x.shape) + x.view(*x.shape)
        return (out + y if same else out.sum(0) + y.sum(0)), same, x.shape != y.shape

    counting = CountingBackend()
    compiled = jit.compile(f, backend=counting, dynamic=True)
    for a, b in [(3, 3), (4, 4), (5, 2), (6, 6), (2, 7)]:
        compare_call(f, compiled, (torch.randn(a, 2), torch.randn(b, 2)))
    assert counting.graph_count == 2  # one graph per outcome of the comparison


def test_inductor_compiles_one_shape_generic_graph_forward_and_backward():
    def f(x, w):
        n = x.shape[0]
        return (torch.relu(x @ w) * n).view(n * 2, -1)

    w = torch.randn(4, 6, requires_grad=True)
    reference = w.detach().clone().requires_grad_(True)
    counting = CountingBackend("inductor")
    compiled = jit.compile(f, backend=counting, dynamic=True)
    for batch in (3, 5, 8):
        x = torch.randn(batch, 4)
        got, want = compiled(x, w), f(x, reference)
        torch.testing.assert_close(got, want)
        got.sum().backward()
        want.sum().backward()
        torch.testing.assert_close(w.grad, reference.grad)
    assert counting.graph_count == 1
