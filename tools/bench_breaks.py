"""Functions with one graph break: graph count and per-call time, jitcore against torch.compile (eager backend).

Run: `.venv/bin/python tools/bench_breaks.py [--quick]`. Prints, per function, the number of graphs each compiler
made and µs per call, with the ratio jitcore / torch.compile. Output of the breaking print goes to a buffer.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import timeit
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

import jitcore as jit  # noqa: E402

SINK = io.StringIO()


def print_between(x):
    y = torch.relu(x * 2)
    print("step", file=SINK)
    return y.sum(dim=-1) + 1


def item_between(x):
    scale = x.abs().max().item()
    return x / (scale + 1)


def tensor_branch(x):
    y = x * 3
    if y.sum() > 0:
        return y.relu()
    return y.sigmoid()


def print_in_loop(x):
    for i in range(4):
        x = torch.tanh(x) + i
        print(i, file=SINK)
    return x


def break_in_helper(x):
    return _noisy(x * 2) + 1


def _noisy(t):
    t = t.cos()
    print("helper", file=SINK)
    return t * t


WORKLOADS = [print_between, item_between, tensor_branch, print_in_loop, break_in_helper]


class _Counter:
    def __init__(self):
        self.graphs = 0

    def __call__(self, gm, example_inputs):
        self.graphs += 1
        return gm.forward


def _per_call(fn, x, number, repeat):
    fn(x)
    return min(timeit.repeat(lambda: fn(x), number=number, repeat=repeat)) / number * 1e6


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    number, repeat = (200, 3) if args.quick else (1000, 7)
    warnings.filterwarnings("ignore")
    x = torch.randn(8, 16)
    print(f"{'function':18s} {'eager':>8s} {'jitcore':>8s} {'torch.c':>8s} {'ratio':>6s} {'graphs j/tc':>12s}")
    with contextlib.redirect_stdout(io.StringIO()):
        rows = []
        for fn in WORKLOADS:
            cj, ct = _Counter(), _Counter()
            jfn = jit.compile(fn, backend=cj)
            tfn = torch.compile(fn, backend=ct)
            te, tj, tt = (_per_call(f, x, number, repeat) for f in (fn, jfn, tfn))
            rows.append((fn.__name__, te, tj, tt, cj.graphs, ct.graphs))
    for name, te, tj, tt, gj, gt in rows:
        print(f"{name:18s} {te:8.1f} {tj:8.1f} {tt:8.1f} {tj / tt:6.2f} {gj:>5d}/{gt:<6d}")
    print("µs per call (eager backend); ratio = jitcore / torch.compile")
    return 0


if __name__ == "__main__":
    sys.exit(main())
