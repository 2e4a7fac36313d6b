"""`python -m jitcore demo`: a small tour of what jitcore captures, and its speed against eager."""
from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jitcore", description="jitcore: a pure-Python JIT for PyTorch")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="compile a small model and a function, show the graphs and the speed")
    demo.add_argument("--backend", default="eager", help="backend to compile with (default: eager)")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from jitcore.demo import run_demo
        return run_demo(args.backend)
    return 2


if __name__ == "__main__":
    sys.exit(main())
