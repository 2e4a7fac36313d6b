"""Symbolic sizes reach graphs as SymInt inputs, the way torch.compile's graphs receive them: one placeholder per
symbol of a dynamic input dim, before the first tensor that has it, filled per call from `x.size(d)`.

The placeholder lists are compared with torch.compile's own graphs for the same programs; results and gradients
are compared with eager over size sweeps through both doors and with the eager, aot_eager and inductor backends.
"""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import jitcore as jit
from tests.support import CountingBackend, check_registered_against_eager, compare_call


def _signature(gm) -> list:
    """The graph's tensor inputs with each size a constant or the rank of its symbol (in order of appearance);
    asserts on the way that every symbol of a tensor input is carried by a SymInt input placed before it.
    How many SymInt inputs there are may differ: torch.compile gives two dims equal on the first call one symbol
    (duck shaping), jitcore only once tracing relates them."""
    carried, ranks, out = set(), {}, []
    for node in gm.graph.nodes:
        if node.op != "placeholder":
            continue
        value = node.meta.get("example_value", node.meta.get("val"))
        if isinstance(value, torch.SymInt):
            carried.add(value.node.expr)
            continue
        sizes = []
        for size in value.shape:
            if isinstance(size, torch.SymInt) and not size.node.expr.is_number:
                assert size.node.expr in carried, f"{node.name}: {size} has no SymInt input before it"
                sizes.append(ranks.setdefault(size.node.expr, len(ranks)))
            else:
                sizes.append(int(size))
        out.append(tuple(sizes))
    return out


def _torch_compile_graphs(fn, calls, dynamic):
    torch._dynamo.reset()
    counting = CountingBackend()
    compiled = torch.compile(fn, backend=counting, dynamic=dynamic)
    for args in calls:
        compiled(*args)
    torch._dynamo.reset()
    return counting.graphs


def _jit_graphs(fn, calls, dynamic):
    counting = CountingBackend()
    compiled = jit.compile(fn, backend=counting, dynamic=dynamic)
    for args in calls:
        compare_call(fn, compiled, args)
    return counting.graphs


def _mlp(x, w):
    return torch.relu(x @ w).reshape(x.shape[0], 2, -1) + x.shape[1]


def _two_inputs(x, y):
    return (x * 2).sum(0) + y.sum(), y.shape[0] + 1


def _size_only(x, y):
    return torch.ones(x.shape[0], 3) * y.sum()


def _attention(q, k):
    t = q.shape[1]
    mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
    return torch.softmax((q @ k.transpose(-2, -1)).masked_fill(mask, float("-inf")), dim=-1)


PROGRAMS = {
    "mlp dynamic=True": (_mlp, [(torch.randn(b, 8), torch.randn(8, 4)) for b in (3, 5)], True),
    "two inputs dynamic=True": (_two_inputs, [(torch.randn(b, 3), torch.randn(b + 2, 4)) for b in (3, 5)], True),
    "a size read from an unused tensor": (_size_only, [(torch.randn(b, 2), torch.randn(3)) for b in (3, 5)], True),
    "attention automatic": (_attention, [(torch.randn(2, t, 4), torch.randn(2, t, 4)) for t in (5, 6, 9)], None),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_the_placeholders_are_those_of_torch_compile(name):
    fn, calls, dynamic = PROGRAMS[name]
    theirs = _torch_compile_graphs(fn, calls, dynamic)
    ours = _jit_graphs(fn, calls, dynamic)
    assert len(ours) <= len(theirs)
    assert _signature(ours[-1]) == _signature(theirs[-1])  # the graph that serves every later size


def test_symint_inputs_reach_a_user_backend_with_symint_examples():
    counting = CountingBackend()
    compiled = jit.compile(_mlp, backend=counting, dynamic=True)
    compare_call(_mlp, compiled, (torch.randn(3, 8), torch.randn(8, 4)))
    (examples,) = counting.example_inputs
    placeholders = [node for node in counting.graphs[0].graph.nodes if node.op == "placeholder"]
    assert [type(e) for e in examples[:3]] == [torch.SymInt, torch.SymInt, torch._subclasses.FakeTensor]
    assert [node.type for node in placeholders[:2]] == [torch.SymInt, torch.SymInt]
    assert [str(e.node.expr) for e in examples[:2]] == [str(s.node.expr) for s in examples[2].shape]
    code = counting.graphs[0].code
    assert "sym_size" not in code  # the sizes the program reads are the inputs themselves
    assert f"reshape({placeholders[0].name}, 2, -1)" in code


def test_a_user_backend_called_with_plain_ints_per_call_gives_eager_results_through_both_doors():
    seen = []

    def backend(gm, example_inputs):
        def run(*args):
            seen.append(tuple(type(a) for a in args))
            return gm(*args)
        return run

    calls = [(torch.randn(b, 8), torch.randn(8, 4)) for b in (2, 3, 5, 8)]
    check_registered_against_eager(_mlp, *calls, backend=backend)
    compiled = jit.compile(_mlp, backend=backend)
    for args in calls:
        compare_call(_mlp, compiled, args)
    assert any(kinds[0] is int for kinds in seen)  # a dynamic entry receives the batch size as an int


def _returns_a_size_and_breaks(x):
    n = x.shape[0]
    y = torch.cat([x, x]) * n
    print("break")
    return y.sum(0) + n, n, y.shape[0]


def test_a_size_carried_by_a_symint_input_is_returned_and_crosses_a_break(capsys):
    counting = CountingBackend()
    compiled = jit.compile(_returns_a_size_and_breaks, backend=counting)
    for batch in (2, 3, 4, 7):
        got, want = compiled(torch.ones(batch, 3)), _returns_a_size_and_breaks(torch.ones(batch, 3))
        torch.testing.assert_close(got[0], want[0])
        assert got[1:] == want[1:] and type(got[1]) is int
    assert capsys.readouterr().out == "break\n" * 8
    assert counting.graph_count <= 4  # static then dynamic: the prefix and the resume function each


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_training_with_sizes_in_the_graph_has_eager_gradients(backend):
    def step(model, x, y):
        n = x.shape[0]
        out = model(x).view(n, -1)
        loss = F.mse_loss(out, y) * n / (n + 1)
        loss.backward()
        return loss

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    reference = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    reference.load_state_dict(model.state_dict())
    counting = CountingBackend(backend)
    compiled = jit.compile(step, backend=counting)
    for batch in (2, 3, 5, 9, 4):
        x, y = torch.randn(batch, 6), torch.randn(batch, 2)
        model.zero_grad()
        reference.zero_grad()
        torch.testing.assert_close(compiled(model, x, y), step(reference, x, y), rtol=1e-4, atol=1e-5)
        for p, q in zip(model.parameters(), reference.parameters()):
            torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-5)
    dynamic = [gm for gm in counting.graphs
               if any(isinstance(node.meta.get("example_value"), torch.SymInt)
                      for node in gm.graph.nodes if node.op == "placeholder")]
    assert dynamic  # the forward graph after the batch changed takes the batch size as a SymInt input


def _specialised_after_use(x):
    n = x.shape[0]
    y = x.view(n, -1) * 2
    for i in range(n):  # the count specialises n after the view used its SymInt input
        y = y + i
    return y, n


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_a_symint_input_specialised_after_a_node_used_it_stays_correct(backend):
    compiled = jit.compile(_specialised_after_use, backend=backend, dynamic=True)
    for batch in (3, 4, 3):
        x = torch.randn(batch, 2, 2)
        got, want = compiled(x), _specialised_after_use(x)
        torch.testing.assert_close(got[0], want[0])
        assert got[1] == want[1]
