"""Model zoo: timm (one model per family), torchvision and Hugging Face models under eager, jitcore and torch.compile.

Each model runs in its own process with a timeout (tools/zoo/child.py), built with random weights (no downloads),
in eval mode under no_grad. For each: eager's time; for jitcore and torch.compile with the same backend (eager on a
CPU, inductor on a GPU): correct (allclose to eager), graphs handed to the backend, breaks (jitcore's with reason
and user file:line, from jit.explain), first call and steady time. Prints one line per model as it finishes, then
the summary: outcome counts, the geomean jitcore/torch.compile ratios of first-call and steady time over the models
both got right, and the models where jitcore has more graphs than torch.compile with its first break.

Run:
  .venv/bin/python tools/bench_zoo.py --small                     # 10 small models, a few minutes on 2 cores
  .venv/bin/python tools/bench_zoo.py --library timm --limit 40 --json zoo.json
  .venv/bin/python tools/bench_zoo.py --only 'hf/t5,tv/vit_*' --timeout 600
  .venv/bin/python tools/bench_zoo.py --device cuda --json zoo-gpu.json   # inductor
  .venv/bin/python tools/bench_zoo.py --report zoo.json [more.json ...] --markdown   # tables from saved runs
  .venv/bin/python tools/bench_zoo.py --list                      # the catalogue
docs/zoo.md has the latest tables and the commands that made them.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tools.zoo import catalogue, runner, summary  # noqa: E402

__all__ = ["main"]


def _line(record: dict) -> str:
    j, t = record.get("jitcore") or {}, record.get("torch") or {}
    graphs = f"graphs {j.get('graphs', '-')}/{t.get('graphs', '-')}" if j or t else ""
    first = (f"first {j['first_s']:.2f}s/{t['first_s']:.2f}s" if j.get("first_s") and t.get("first_s") else "")
    problem = summary._problem(record, "jitcore") if summary.outcome(record) != "ok" else summary.first_break(record)
    return (f"{record['name']:<40} {summary.outcome(record):<8} tc:{summary.outcome(record, 'torch'):<8} "
            f"{graphs:<12} {first:<20} {record.get('wall_s', 0):5.0f}s  {problem[:110]}")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", action="store_true", help="the 10 small models of make test")
    parser.add_argument("--only", help="comma-separated names or globs (timm/NAME, tv/NAME, hf/TYPE[:HEAD])")
    parser.add_argument("--library", help=f"comma-separated subset of {','.join(catalogue.LIBRARIES)}")
    parser.add_argument("--limit", type=int, help="run at most this many models")
    parser.add_argument("--skip", type=int, default=0, help="drop this many models first (run in chunks)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per model (default 300)")
    parser.add_argument("--json", metavar="PATH", help="write every record here (updated after each model)")
    parser.add_argument("--device", default="cpu", help="cpu (eager backend) or cuda (inductor backend)")
    parser.add_argument("--backend", help="both compilers' backend (default: eager on cpu, inductor on cuda)")
    parser.add_argument("--jobs", type=int, default=1, help="models run at once (default 1)")
    parser.add_argument("--threads", type=int, default=0, help="torch threads per child (default: torch's)")
    parser.add_argument("--compilers", default="jitcore,torch.compile",
                        help="compilers to measure (default jitcore,torch.compile)")
    parser.add_argument("--steady-calls", type=int, default=5,
                        help="timed calls after the first, median reported (default 5; 0: no steady timing)")
    parser.add_argument("--caches", choices=("fresh", "shared"), default="fresh",
                        help="inductor/Triton caches: fresh (default: every measured compile gets its own empty "
                             "cache directory, so neither compiler or a concurrent job hits the other's entries) "
                             "or shared (torch's defaults)")
    parser.add_argument("--in-process", action="store_true",
                        help="run the models in this process, without timeouts (faster start; tests use it)")
    parser.add_argument("--markdown", action="store_true", help="print the per-model table as markdown")
    parser.add_argument("--findings", action="store_true", help="print the triage: problems grouped by cause")
    parser.add_argument("--report", nargs="+", metavar="JSON",
                        help="no run: tables from saved --json files (a model in several: the last file's record)")
    parser.add_argument("--list", action="store_true", help="print the selected models and exit")
    return parser


def _commit() -> str:
    """The jitcore commit the run measures (with a + when the tree has changes), for the record."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                              timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""
    return head + ("+" if dirty else "")


def _libraries(text: str | None) -> tuple:
    if not text:
        return catalogue.LIBRARIES
    chosen = tuple(part.strip() for part in text.split(","))
    unknown = [lib for lib in chosen if lib not in catalogue.LIBRARIES]
    if unknown:
        raise SystemExit(f"--library: unknown {', '.join(unknown)}; choose from {', '.join(catalogue.LIBRARIES)}")
    return chosen


_COMPILER_KEYS = {"jitcore": "jitcore", "torch.compile": "torch", "torch": "torch"}


def _compilers(text: str) -> tuple:
    chosen = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [c for c in chosen if c not in _COMPILER_KEYS]
    if unknown or not chosen:
        raise SystemExit(f"--compilers: choose from jitcore, torch.compile; got {text!r}")
    return tuple(dict.fromkeys(_COMPILER_KEYS[c] for c in chosen))


def main(argv=None) -> int:
    options = _parser().parse_args(argv)
    if options.device not in ("cpu", "cuda") and not options.device.startswith("cuda:"):
        raise SystemExit(f"--device must be cpu or cuda[:N], got {options.device!r}")
    backend = options.backend or ("eager" if options.device == "cpu" else "inductor")
    if options.report:
        merged = {r["name"]: r for path in options.report for r in runner.load(path)}  # a later file's record wins
        records = list(merged.values())
    else:
        only = [part.strip() for part in options.only.split(",")] if options.only else None
        try:
            entries = catalogue.select(small=options.small, only=only, libraries=_libraries(options.library),
                                       limit=options.limit, skip=options.skip)
        except ValueError as exc:
            raise SystemExit(str(exc)) from None
        if options.list:
            print("\n".join(entry.name for entry in entries))
            return 0
        meta = {"command": " ".join(["tools/bench_zoo.py", *(argv if argv is not None else sys.argv[1:])]),
                "device": options.device, "backend": backend, "timeout_s": options.timeout,
                "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="minutes"),
                "python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count()}
        try:
            import torch  # lazy: the version for the record; the children do the work
            meta["torch"] = torch.__version__
        except ImportError:
            pass
        meta["commit"] = _commit()
        meta["caches"] = options.caches
        print(f"{len(entries)} models, {options.device}, backend {backend}, timeout {options.timeout:.0f}s",
              flush=True)
        records = runner.run(entries, device=options.device, backend=backend, timeout=options.timeout,
                             jobs=options.jobs, threads=options.threads, json_path=options.json, meta=meta,
                             progress=lambda r: print(_line(r), flush=True), compilers=_compilers(options.compilers),
                             in_process=options.in_process, steady_calls=options.steady_calls,
                             caches=options.caches)
    print()
    print("\n".join(summary.Summary.of(records).lines()))
    extra = summary.more_graphs(records)
    if extra:
        print("\nmore graphs than torch.compile, or none where it has some (jitcore/torch.compile):")
        for r in extra:
            print(f"  {r['name']:<38} {r['jitcore']['graphs']}/{r['torch']['graphs']}  {summary.first_break(r)[:150]}")
    if options.markdown:
        print("\n" + summary.markdown(records))
    if options.findings:
        print("\n" + summary.findings(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
