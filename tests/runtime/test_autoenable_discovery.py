"""Auto-enable compiles only the user's code (Note [Only the user's code] in runtime/autoenable.py), and a caller
being captured inlines a callee through the prologue auto-enable gave it."""
import collections

import pytest
import torch
import torch.nn as nn
from torch._subclasses.fake_tensor import FakeTensorMode

from jitcore.api import make_options
from jitcore.runtime.autoenable import AutoEnabler
from tests.support import CountingBackend


@pytest.fixture
def auto():
    counting = CountingBackend()
    enabler = AutoEnabler()
    enabler.start(make_options(counting))
    enabler.counting = counting  # what the tests read
    try:
        yield enabler
    finally:
        enabler.stop()


_Pair = collections.namedtuple("_Pair", "left right")


def _add(x, y):
    return x + y


def test_code_a_library_made_from_a_string_is_not_the_users(auto):
    new_code = _Pair.__new__.__code__
    assert new_code.co_filename == "<string>"
    namespace = {"torch": torch}
    exec("def made(x):\n    return x * 2\n", namespace)
    made = namespace["made"]
    made_code = made.__code__
    x = torch.ones(2)
    for _ in range(2):
        _Pair(x, x)
        made(x)
    assert _Pair.__new__.__code__ is new_code
    assert made.__code__ is made_code
    assert auto.installs == 0


def test_a_function_torch_keeps_uncompiled_is_not_compiled_nor_what_it_calls(auto):
    calls = []

    def helper(x):
        calls.append(1)
        return x - 1

    def logged(x):
        return helper(x) * 2

    original = (logged.__code__, helper.__code__)
    wrapped = torch._dynamo.disable(logged)
    x = torch.ones(3)
    for _ in range(3):
        torch.testing.assert_close(wrapped(x), (x - 1) * 2)
    assert (logged.__code__, helper.__code__) == original
    assert auto.installs == 0 and len(calls) == 3


def test_a_call_made_while_torch_runs_a_dispatch_mode_is_left_alone(auto):
    def double(x):
        return x * 2

    original = double.__code__
    with FakeTensorMode() as mode:
        fake = mode.from_tensor(torch.ones(2))
        double(fake)
    assert double.__code__ is original
    x = torch.ones(2)
    double(x)  # the user's own call decides
    assert double.__code__ is not original
    torch.testing.assert_close(double(x), x * 2)


# Each test defines its own module classes: a code object auto-enable decided on is DISABLEd for its tool id for
# the rest of the process (sys.monitoring keeps that per location), so no two tests may share one.

def test_nested_modules_are_one_graph_per_shape_kind_without_breaks(auto):
    class Inner(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            return torch.relu(self.lin(x))

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = Inner()
            self.b = Inner()

        def forward(self, x):
            return self.b(self.a(x)) + 1

    torch.manual_seed(0)
    model = Outer()
    auto.stop()
    eager = [model(torch.full((n, 4), 0.5)).sum() for n in (2, 3, 4)]
    auto.start(auto.options)

    def step(x):
        return model(x).sum()

    forwards = (Outer.forward.__code__, Inner.forward.__code__)
    compiled = [step(torch.full((n, 4), 0.5)) for n in (2, 3, 4) for _ in range(2)][::2]
    torch.testing.assert_close(compiled, eager)
    # the first call captured step with both forwards inlined: they got no compiled copies of their own
    assert (Outer.forward.__code__, Inner.forward.__code__) == forwards
    assert auto.installs == 1
    assert auto.counting.graph_count == 2  # static, then dynamic once the size changed


def _sum_graphs(counting):
    return [gm for gm in counting.graphs
            if any(node.target in (torch.sum, "sum") for node in gm.graph.nodes)]


def test_a_caller_inlines_a_callee_that_has_its_own_prologue(auto):
    class Inner(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            return torch.relu(self.lin(x))

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = Inner()
            self.b = Inner()

        def forward(self, x):
            return self.b(self.a(x)) + 1

    torch.manual_seed(0)
    model = Outer()
    x = torch.ones(2, 4)
    model.a(x)  # Inner.forward gets a prologue first
    inner_code = Inner.forward.__code__
    assert auto.installs == 1

    def step(x):
        return model(x).sum()

    for _ in range(3):
        torch.testing.assert_close(step(x), torch.relu(model.b.lin(torch.relu(model.a.lin(x)))).add(1).sum())
    assert Inner.forward.__code__ is inner_code
    step_graphs = _sum_graphs(auto.counting)
    assert len(step_graphs) == 1
    linears = [n for n in step_graphs[0].graph.nodes if "linear" in str(n.target)]
    assert len(linears) == 2  # both inner forwards inlined into step's one graph, through the prologue


def test_a_callee_compiled_after_its_caller_does_not_recompile_the_caller(auto):
    class Inner(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            return torch.relu(self.lin(x))

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = Inner()

        def forward(self, x):
            return self.a(x) + 1

    torch.manual_seed(0)
    model = Outer()
    x = torch.ones(2, 4)

    def step(x):
        return model(x).sum()

    step(x)
    step(x)
    assert len(_sum_graphs(auto.counting)) == 1
    original = Inner.forward.__code__
    model.a(x)  # now Inner.forward gets a prologue of its own
    model.a(x)
    assert Inner.forward.__code__ is not original
    step(x)
    step(x)
    assert len(_sum_graphs(auto.counting)) == 1  # step's guards still hold: the callee runs the same body


def test_a_step_called_in_a_loop_inside_a_function_that_breaks_is_still_compiled(auto):
    def step(model, x):
        return model(x).relu().sum()

    def train(model, batches):
        total = 0.0
        for x in batches:
            total += step(model, x).item()  # .item() breaks train's graph: step runs in Python from there on
        return total

    torch.manual_seed(0)
    model = nn.Linear(4, 4)
    batches = [torch.ones(2, 4) * i for i in range(4)]
    auto.stop()
    expected = train(model, batches)
    auto.start(auto.options)
    original = step.__code__
    assert train(model, batches) == expected  # train's first call runs natively, and the whole loop in it
    assert step.__code__ is not original  # decided inside that first call, not left for a call that never comes
