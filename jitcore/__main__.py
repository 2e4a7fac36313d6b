"""`python -m jitcore {run,explain,demo}`: run a script with the JIT on, explain one function, or take the tour.

run      auto-enable (as JITCORE=1) around a script, then a summary table of what was compiled
explain  import a script as a module (its `if __name__ == "__main__"` block does not run), explain one function
demo     compile a small model and a function, show the graphs and the speed
"""
from __future__ import annotations

import argparse
import importlib.util
import inspect
import os
import runpy
import sys
import traceback

import torch

import jitcore as jit
from jitcore import autoenable
from jitcore.config import config
from jitcore.demo import run_demo
from jitcore.errors import InvalidArgumentError, JitError

_RUN_HELP = """\
Run a Python script with jitcore compiling your functions, without changing
the script (like JITCORE=1): every function of yours that is called with a
tensor or an nn.Module argument is captured on its first call and runs
compiled afterwards. At exit a table lists the functions compiled, their
graphs, breaks (with file:line), recompiles and the time spent compiling.

examples:
  python -m jitcore run train.py --epochs 1
  python -m jitcore run --log breaks,recompiles train.py
  python -m jitcore run --backend inductor train.py
"""

_EXPLAIN_HELP = """\
Import SCRIPT as a module (its `if __name__ == "__main__":` block does not
run), find FUNCTION in it, run it once through a fresh compiled copy and print
the report: graphs with their code, graph breaks with the line and a hint,
guards, compile time. FUNCTION may be dotted (Model.forward) or name a module
instance the script defines.

--args is evaluated as the argument list of a call, with `torch` imported and
the script's own names visible:
  python -m jitcore explain model.py:step --args "torch.randn(4, 8), 3"
  python -m jitcore explain model.py:step --args "torch.randn(4, 8), scale=0.5"
  python -m jitcore explain model.py:model --args "torch.randn(2, 16)" \\
      --html report.html
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m jitcore", description="jitcore: a pure-Python JIT for PyTorch")
    sub = parser.add_subparsers(dest="command", required=True, metavar="{run,explain,demo}")

    run = sub.add_parser("run", help="run a script with the JIT on, then print a summary",
                         description=_RUN_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("--backend", default=None,
                     help="backend for the functions compiled (default: $JITCORE_BACKEND, else eager)")
    run.add_argument("--log", default=None, metavar="TOPICS",
                     help="what to print while running: recompiles,breaks,guards,graphs,fallbacks,distributed or all "
                          "(default: $JITCORE_LOG, else only warnings)")
    run.add_argument("--no-summary", action="store_true", help="do not print the summary table at exit")
    run.add_argument("script", help="the Python script to run")
    run.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the script")

    explain = sub.add_parser("explain", help="explain one function of a script: graphs, breaks, guards",
                             description=_EXPLAIN_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    explain.add_argument("target", metavar="SCRIPT:FUNCTION", help="e.g. model.py:step or model.py:Net.forward")
    explain.add_argument("--args", default=None, metavar="EXPR",
                         help='the call\'s arguments, e.g. "torch.randn(4, 8), 3" (torch is imported)')
    explain.add_argument("--html", default=None, metavar="PATH", help="also write the report as one HTML page")

    demo = sub.add_parser("demo", help="compile a small model and a function, show the graphs and the speed")
    demo.add_argument("--backend", default="eager", help="backend to compile with (default: eager)")
    return parser


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "run":
            return _run(args)
        if args.command == "explain":
            return _explain(args)
        if args.command == "demo":
            return run_demo(args.backend)
    except JitError as exc:
        print(f"python -m jitcore {args.command}: error: {exc}", file=sys.stderr)
        return 2
    return 2


def _run(args) -> int:
    if args.log is not None:
        config.log = args.log
    script = os.path.abspath(args.script)
    if not os.path.isfile(script):
        raise InvalidArgumentError(f"no such script: {args.script}")
    autoenable.start(args.backend)
    sys.argv = [args.script, *args.args]
    sys.path.insert(0, os.path.dirname(script))
    code = 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exc.code is not None and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)
    except BaseException:  # the script's own error, reported as python would, after the summary
        traceback.print_exc()
        code = 1
    finally:
        if not args.no_summary:
            autoenable.print_summary()
    return code


def _explain(args) -> int:
    script, colon, name = args.target.rpartition(":")
    if not colon or not script or not name:
        raise InvalidArgumentError(f"explain needs SCRIPT:FUNCTION (e.g. model.py:step), got {args.target!r}")
    module = _import_script(script)
    target = module
    for part in name.split("."):
        if not hasattr(target, part):
            raise InvalidArgumentError(f"{script} has no {name!r} (no attribute {part!r} on {target!r})")
        target = getattr(target, part)
    call_args, call_kwargs = _arguments(args.args, module, target, name)
    report = jit.explain(target, *call_args, **call_kwargs)
    from rich.console import Console  # lazy: rich is loaded only to print a report
    console = Console(highlight=False)
    console.print(report, width=min(console.width, 120))
    if args.html:
        report.save_html(args.html)
        console.print(f"HTML report written to {args.html}")
    return 0


def _import_script(script: str):
    """Import the script as a module named after its file (so `__name__ != "__main__"`)."""
    path = os.path.abspath(script)
    if not os.path.isfile(path):
        raise InvalidArgumentError(f"no such script: {script}")
    name = os.path.splitext(os.path.basename(path))[0]
    sys.path.insert(0, os.path.dirname(path))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _arguments(expression, module, target, name):
    """(args, kwargs) from --args, evaluated as a call's argument list with torch and the script's names."""
    if expression is None:
        try:
            signature = inspect.signature(target)
        except (TypeError, ValueError):
            return (), {}
        needed = [p.name for p in signature.parameters.values()
                  if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if needed:
            raise InvalidArgumentError(
                f"{name} needs arguments ({', '.join(needed)}); pass them with --args, e.g. "
                f"--args \"torch.randn(4, 8), 3\" (evaluated with torch imported and the script's names visible)")
        return (), {}
    namespace = dict(vars(module))
    namespace["torch"] = torch
    namespace["__jitcore_collect"] = lambda *a, **k: (a, k)
    try:
        return eval(f"__jitcore_collect({expression})", namespace)  # the user's own expression, by design
    except Exception as exc:
        raise InvalidArgumentError(f"--args {expression!r} could not be evaluated: {type(exc).__name__}: {exc}") \
            from None


if __name__ == "__main__":
    sys.exit(main())
