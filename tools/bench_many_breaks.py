"""Long functions with many graph breaks: first-call time against the same function without breaks.

Run: `.venv/bin/python tools/bench_many_breaks.py [--lines 400] [--every 10] [--torch]`. Builds a function of
`--lines` tensor statements with a `print` (to a buffer) replacing every `--every`-th one (400 and 10: 40 breaks),
and the same function without the prints, then times each one's first call (capture, codegen, backend) and second
call under jitcore (eager backend), and under torch.compile with `--torch`. `--lines 100,200,400` sweeps (10, 20
and 40 breaks); `--try` puts the statements inside one `try:` block. First calls are timed by the wall clock and by the process's CPU time (steadier on a shared box).
Issue 18's target: the first call with breaks within 3x the first call without. A warm-up compile runs first, so
neither pays the process's imports.
"""
from __future__ import annotations

import argparse
import io
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

import jitcore as jit  # noqa: E402

SINK = io.StringIO()


def make(lines: int, every: int, name: str, in_try: bool = False):
    """A function of `lines` statements on `x`, a print to SINK every `every`-th one (none for 0); `in_try`: the
    statements inside one `try:` block (each break then also makes a step function)."""
    indent = "        " if in_try else "    "
    body = []
    for i in range(lines):
        if every and i % every == every - 1:
            body.append(f"{indent}print({i}, file=SINK)")
        else:
            body.append(f"{indent}x = torch.relu(x * 1.0001 + {i % 7}.0) - 0.5")
    if in_try:
        body = ["    try:", *body, "    except ZeroDivisionError:", "        x = x + 1"]
    source = f"def {name}(x):\n" + "\n".join(body) + "\n    return x\n"
    namespace = {"torch": torch, "SINK": SINK}
    exec(compile(source, f"<{name}>", "exec"), namespace)
    return namespace[name]


def first_and_second(compiled, x) -> tuple:
    """(first call wall s, first call CPU s, second call wall s)."""
    started, cpu = time.perf_counter(), time.process_time()
    compiled(x)
    first, first_cpu = time.perf_counter() - started, time.process_time() - cpu
    started = time.perf_counter()
    compiled(x)
    return first, first_cpu, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", default="400", help="statements; a comma-separated list sweeps (100,200,400)")
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--torch", action="store_true", help="also time torch.compile (eager backend)")
    parser.add_argument("--try", dest="in_try", action="store_true", help="the statements inside one try block")
    options = parser.parse_args()
    try:
        sizes = [int(n) for n in options.lines.split(",")]
    except ValueError:
        parser.error(f"--lines takes numbers separated by commas, not {options.lines!r}")
    x = torch.randn(8)
    jit.compile(make(3, 0, "warm"), backend="eager")(x)
    compilers = [("jitcore", lambda f: jit.compile(f, backend="eager"))]
    if options.torch:
        torch.compile(make(3, 0, "warm_tc"), backend="eager")(x)
        compilers.append(("torch.compile", lambda f: torch.compile(f, backend="eager")))
    print("first call: wall s (CPU s); second call: ms")
    print(f"{'compiler':<14} {'lines':>5} {'breaks':>6} {'no breaks':>14} {'breaks':>14} {'ratio':>5} "
          f"{'cpu ratio':>9} {'2nd no br':>9} {'2nd br':>9}")
    for lines in sizes:
        breaks = lines // options.every if options.every else 0
        for label, compile_fn in compilers:
            plain = first_and_second(compile_fn(make(lines, 0, "no_breaks", options.in_try)), x)
            broken = first_and_second(compile_fn(make(lines, options.every, "with_breaks", options.in_try)), x)
            print(f"{label:<14} {lines:>5} {breaks:>6} {plain[0]:>6.2f} ({plain[1]:>5.2f}) "
                  f"{broken[0]:>6.2f} ({broken[1]:>5.2f}) {broken[0] / plain[0]:>5.1f} {broken[1] / plain[1]:>9.1f} "
                  f"{plain[2] * 1e3:>9.2f} {broken[2] * 1e3:>9.2f}", flush=True)
    print("target (issue 18): jitcore's ratio at most 3")


if __name__ == "__main__":
    main()
