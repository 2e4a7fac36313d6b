"""Graph breaks inside loops (Note [Breaks inside loops], capture/loop_breaks.py): the frame holding the loop runs
natively and the functions it calls are compiled as frames of their own, as under torch.compile; torch.nn's
containers keep resuming. Results, printed output and graph counts are compared with eager and with torch.compile
(eager backend) in the same process, through jit.compile and through register + enabled()."""

from __future__ import annotations

import torch
from torch import nn

import jitcore as jit
from tests.breaks.helpers import compare_printing
from tests.support import CountingBackend

CALLS = 3


def _torch_graphs(fn, *args) -> int:
    """Graphs torch.compile (eager backend) makes over CALLS calls of fn(*args)."""
    torch._dynamo.reset()
    counting = CountingBackend()
    compiled = torch.compile(fn, backend=counting)
    for _ in range(CALLS):
        compiled(*args)
    torch._dynamo.reset()
    return counting.graph_count


def _jit_graphs(fn, args, capsys, door: str) -> int:
    """Graphs jitcore makes over CALLS calls, each compared with eager (result, printed output)."""
    counting = CountingBackend()
    if door == "compile":
        compiled = jit.compile(fn, backend=counting)
        for _ in range(CALLS):
            compare_printing(fn, compiled, args, capsys)
        return counting.graph_count
    jit.register(fn)
    with jit.enabled(backend=counting):
        for _ in range(CALLS):
            compare_printing(fn, fn, args, capsys)
    return counting.graph_count


def _pre(x):
    return x.cos() * 3


def _print_in_loop(x):
    x = x.sin()
    for i in range(3):
        x = _pre(x) + 1
        print("it", i)
        x = x * 2
    return x.relu()


def _branch_in_while(x, limit):
    n = 0
    while n < limit:
        x = _pre(x)
        if x.sum() > 0:
            x = x - 1
        n += 1
    return x


def _method_calls_in_loop(x):
    box = _Box(2.0)
    out = []
    for k in range(3):
        out.append(box.scaled(x, k=k))
        print(k)
    return torch.stack(out)


class _Box:
    def __init__(self, scale):
        self.scale = scale

    def scaled(self, x, k=0):
        return x * self.scale + k


def test_break_in_loop_runs_the_frame_natively_and_compiles_its_callees(capsys):
    x = torch.randn(4)
    limit = _torch_graphs(_print_in_loop, x)
    for door in ("compile", "register"):
        graphs = _jit_graphs(_print_in_loop, (x,), capsys, door)
        assert 1 <= graphs <= limit, f"{door}: {graphs} graphs, torch.compile {limit}"


def test_tensor_branch_in_while_loop_makes_no_more_graphs_than_torch_compile(capsys):
    x = torch.randn(4)
    limit = _torch_graphs(_branch_in_while, x, 3)
    for door in ("compile", "register"):
        graphs = _jit_graphs(_branch_in_while, (x, 3), capsys, door)
        assert 1 <= graphs <= limit, f"{door}: {graphs} graphs, torch.compile {limit}"


def test_method_called_in_a_native_loop_runs_compiled(capsys):
    x = torch.randn(3)
    limit = _torch_graphs(_method_calls_in_loop, x)
    graphs = _jit_graphs(_method_calls_in_loop, (x,), capsys, "compile")
    assert 1 <= graphs <= limit


class _Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        print("block")
        return h.relu()


class _Blocks(nn.Module):
    def __init__(self, n=3):
        super().__init__()
        self.blocks = nn.ModuleList([_Block() for _ in range(n)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x) + 1
        return x


def test_blocks_called_from_a_native_loop_share_one_entry(capsys):
    model = _Blocks()
    x = torch.randn(2, 4)
    limit = _torch_graphs(model, x)
    with torch.no_grad():
        graphs = _jit_graphs(model.forward, (x,), capsys, "compile")
    # the block's forward: a graph before the print, one after, for all three blocks
    assert graphs == 2 <= limit


class _Deep(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        print("deep")
        return h * 2


class _Scale(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.k = k

    def forward(self, x):
        return self.lin(x) * self.k


class _Shift(nn.Module):
    def forward(self, x):
        return x + 0.5


class _Squash(nn.Module):
    def forward(self, x):
        return torch.tanh(x) * 2


def _sequential_graphs(model, capsys) -> tuple[int, int]:
    x = torch.randn(2, 4)

    def f(x):
        return model(x) + 1

    limit = _torch_graphs(f, x)
    with torch.no_grad():
        return _jit_graphs(f, (x,), capsys, "compile"), limit


def test_break_inside_a_sequential_of_user_layers_keeps_resuming_and_beats_torch_compile(capsys):
    model = nn.Sequential(_Scale(2.0), _Shift(), _Squash(), _Deep(), _Scale(3.0), _Shift(), _Squash())
    graphs, limit = _sequential_graphs(model, capsys)
    assert graphs < limit, f"{graphs} graphs, torch.compile {limit}"


def test_break_inside_a_sequential_of_torch_layers_runs_it_natively(capsys):
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4), _Deep(), nn.Linear(4, 4), nn.ReLU())
    graphs, limit = _sequential_graphs(model, capsys)
    assert graphs <= limit, f"{graphs} graphs, torch.compile {limit}"


def test_hooked_module_in_a_native_loop_runs_its_hooks(capsys):
    model = _Blocks(2)
    seen = []
    model.blocks[1].register_forward_hook(lambda module, args, out: seen.append(out.shape))
    x = torch.randn(2, 4)
    with torch.no_grad():
        expected = model(x)
        compiled = jit.compile(model.forward, backend=CountingBackend())
        for _ in range(2):
            torch.testing.assert_close(compiled(x), expected)
    assert len(seen) == 3


def test_closure_made_in_a_native_loop_frame_compiles_nothing_new_per_call(capsys):
    def f(x):
        def step(t):
            return t * 2
        for i in range(2):
            x = step(x)
            print(i)
        return x

    counting = CountingBackend()
    compiled = jit.compile(f, backend=counting)
    x = torch.randn(3)
    for _ in range(CALLS):
        compare_printing(f, compiled, (x,), capsys)
    assert counting.graph_count == 0


def test_explain_says_the_frame_runs_natively_because_of_the_loop(capsys):
    report = jit.explain(_print_in_loop, torch.randn(3))
    (brk,) = report.breaks
    assert brk.in_loop and not brk.resumed
    assert brk.source_line == 'print("it", i)'
    assert "graph break inside a loop at" in brk.outcome
    assert "runs natively, the functions it calls are compiled" in brk.outcome
    assert len(report.graphs) == 1  # _pre's own frame


def test_loop_breaks_resume_setting_resumes_the_loop_in_graphs(monkeypatch, capsys):
    monkeypatch.setattr(jit.config, "loop_breaks", "resume")
    counting = CountingBackend()
    compiled = jit.compile(_print_in_loop, backend=counting)
    x = torch.randn(4)
    for _ in range(CALLS):
        compare_printing(_print_in_loop, compiled, (x,), capsys)
    # the graph before the loop and the loop's body between prints: f's own ops are in graphs
    assert any("sin" in str(gm.code) for gm in counting.graphs)
    assert any("relu" in str(gm.code) for gm in counting.graphs)


def _break_before_the_loop(x):
    x = x + 1
    print("before")
    for i in range(3):
        x = _pre(x) - i
        print(i)
    return x


def test_resume_function_whose_loop_breaks_runs_natively_with_callees_compiled(capsys):
    x = torch.randn(4)
    limit = _torch_graphs(_break_before_the_loop, x)
    counting = CountingBackend()
    compiled = jit.compile(_break_before_the_loop, backend=counting)
    for _ in range(CALLS):
        compare_printing(_break_before_the_loop, compiled, (x,), capsys)
    # the graph before the first print, and _pre's own
    assert counting.graph_count == 2 <= limit
    assert any("cos" in str(gm.code) for gm in counting.graphs)


def test_closure_frame_with_a_break_in_its_loop_reads_and_writes_its_cells(capsys):
    scale = torch.tensor(2.0)
    calls = []

    def f(x):
        nonlocal calls
        for i in range(2):
            x = _pre(x) * scale
            calls = calls + [i]
            print(i)
        return x

    counting = CountingBackend()
    compiled = jit.compile(f, backend=counting)
    x = torch.randn(3)
    compare_printing(f, compiled, (x,), capsys)
    assert calls == [0, 1, 0, 1]
    assert counting.graph_count == 1


def test_a_callee_whose_copy_cannot_be_made_runs_as_it_is(monkeypatch, capsys):
    from jitcore.runtime import loop_native

    def broken(fn, options, shared=()):
        raise RuntimeError("no copy")

    monkeypatch.setattr(loop_native, "compiled_callee", broken)
    counting = CountingBackend()
    compiled = jit.compile(_print_in_loop, backend=counting)
    x = torch.randn(4)
    for _ in range(2):
        compare_printing(_print_in_loop, compiled, (x,), capsys)
    assert counting.graph_count == 0
