"""Dynamic shapes: graphs and compile time over size sweeps, jitcore against torch.compile in one process.

    PYTHONPATH=. python tools/bench_dynamic.py [--backend eager]

Rows (issue 14's sweeps): a 2-layer MLP over batch 2..9, hand-written causal attention over (batch, length),
`nn.Sequential` of Linear/LayerNorm/GELU over batch 2, 3, 5, 8, 13, 21, a pointwise function with `dynamic=True`
over batch 3, 5, 7, 9, and a training step (forward, loss, backward) over batch sizes. Columns: graphs each
compiler made over the sweep, and the sweep's total wall time (every call, so every compile), for each.
Every call is checked against eager.
"""
from __future__ import annotations

import argparse
import math
import time

import torch
import torch.nn.functional as F

import jitcore as jit


class _Counter:
    """A backend wrapper that counts graphs and hands each to the named backend."""

    def __init__(self, name: str):
        self.name = name
        self.graphs = 0

    def __call__(self, gm, example_inputs):
        self.graphs += 1
        if self.name == "eager":
            return gm.forward
        from jitcore import backends  # lazy: only the non-eager backends need the registry
        return backends.lookup(self.name)(gm, example_inputs)


def _mlp_case():
    w1, b1, w2 = torch.randn(32, 64), torch.randn(64), torch.randn(64, 8)

    def mlp(x):
        return torch.relu(x @ w1 + b1) @ w2

    return mlp, [(torch.randn(b, 32),) for b in range(2, 10)], None


def _attention_case():
    def attention(q, k, v):
        t = q.shape[1]
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        return torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1) @ v

    shapes = [(1, 16), (1, 17), (2, 31), (2, 64), (3, 100), (4, 128), (1, 5)]
    return attention, [tuple(torch.randn(b, t, 16) for _ in range(3)) for b, t in shapes], None


def _sequential_case():
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.LayerNorm(64), torch.nn.GELU(),
                                torch.nn.Linear(64, 8))
    return model, [(torch.randn(b, 32),) for b in (2, 3, 5, 8, 13, 21)], None


def _pointwise_case():
    def pointwise(x):
        return torch.sin(x) * 2 + torch.cos(x)

    return pointwise, [(torch.randn(b, 64),) for b in (3, 5, 7, 9)], True


def _training_case():
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))

    def step(x, y):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        return loss

    return step, [(torch.randn(b, 16), torch.randn(b, 1)) for b in (2, 3, 5, 8, 13)], None


CASES = {"mlp batch 2..9": _mlp_case, "causal attention": _attention_case, "Sequential": _sequential_case,
         "pointwise dynamic=True": _pointwise_case, "training step": _training_case}


def _sweep(compiled, fn, calls) -> float:
    started = time.perf_counter()
    for args in calls:
        got, want = compiled(*args), fn(*args)
        torch.testing.assert_close(got, want)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="eager")
    options = parser.parse_args()
    rows = []
    for name, make in CASES.items():
        fn, calls, dynamic = make()
        torch._dynamo.reset()
        counter = _Counter(options.backend)
        torch_time = _sweep(torch.compile(fn, backend=counter, dynamic=dynamic), fn, calls)
        torch_graphs = counter.graphs
        counter = _Counter(options.backend)
        jit_time = _sweep(jit.compile(fn, backend=counter, dynamic=dynamic), fn, calls)
        rows.append((name, len(calls), counter.graphs, torch_graphs, jit_time, torch_time))
    print(f"| program | calls | jitcore graphs | torch.compile graphs | jitcore sweep s | torch.compile sweep s |")
    print("|---|---|---|---|---|---|")
    for name, n, jg, tg, jt, tt in rows:
        print(f"| {name} | {n} | {jg} | {tg} | {jt:.2f} | {tt:.2f} |")


if __name__ == "__main__":
    main()
