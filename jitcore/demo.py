"""The demo behind `make demo`: an MLP and a shape-driven function compiled, explained and timed."""
from __future__ import annotations

import timeit

import torch

import jitcore as jit

__all__ = ["run_demo"]


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 8))
        self.norm = torch.nn.LayerNorm(8)

    def forward(self, x):
        return self.norm(self.layers(x)).softmax(dim=-1)


def scaled_residual(x, scale=0.5):
    # shape arithmetic and Python constants are resolved while tracing; only tensor work reaches the graph
    half = x.shape[-1] // 2
    left, right = x[..., :half], x[..., half:]
    return torch.cat([left * scale, torch.tanh(right)], dim=-1) + x


def _time(fn, *args) -> float:
    fn(*args)
    runs = 200
    return min(timeit.repeat(lambda: fn(*args), number=runs, repeat=5)) / runs * 1e6


def run_demo(backend: str = "eager") -> int:
    from rich.console import Console  # lazy: rich is loaded only when the demo runs
    from rich.table import Table
    console = Console()
    torch.manual_seed(0)
    model = MLP().eval()
    x = torch.randn(4, 16)

    console.rule("[bold]jitcore demo")
    report = jit.explain(model, x)
    console.print(f"[bold]explain(model, x)[/]: {report.graph_count} graph, {report.graph_break_count} breaks, "
                  f"{sum(report.ops_per_graph)} ops, {len(report.guards)} guards")
    console.print(report.graphs[0].code.strip())

    compiled_model = jit.compile(model, backend=backend)
    compiled_fn = jit.compile(scaled_residual, backend=backend)
    torch.testing.assert_close(compiled_model(x), model(x))
    torch.testing.assert_close(compiled_fn(x), scaled_residual(x))
    console.print("[green]compiled results equal eager results[/]")

    table = Table(title=f"per-call time, backend={backend!r} (µs)")
    for column in ("workload", "eager", "jitcore", "jitcore / eager"):
        table.add_column(column, justify="right" if column != "workload" else "left")
    with torch.no_grad():
        for name, eager, compiled in (("MLP 4x16", model, compiled_model),
                                      ("scaled_residual", scaled_residual, compiled_fn)):
            te, tj = _time(eager, x), _time(compiled, x)
            table.add_row(name, f"{te:.1f}", f"{tj:.1f}", f"{tj / te:.2f}")
    console.print(table)
    y = torch.randn(7, 16)
    torch.testing.assert_close(compiled_fn(y), scaled_residual(y))
    console.print("a new shape (7, 16) recompiles: [bold]x.shape[0] changed 4 -> 7[/]; results still equal eager")
    return 0
