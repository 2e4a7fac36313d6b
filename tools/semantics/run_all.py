"""Run every probe group and print a summary table by group.

cd <jitcore checkout> && PYTHONPATH=$PWD .venv/bin/python tools/semantics/run_all.py [group ...]
Options (env): PROBES_VERBOSE=1 prints every probe line; PROBES_JSON=path writes all rows as JSON.
"""
import collections
import importlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import harness  # noqa: E402

MODULES = ["partial", "unittest_asserts", "numpy_interop", "dunders", "seq_compare", "builtins_ctor",
           "collections_probes", "itertools_probes", "modules_inside", "globals_probes", "strings", "functions",
           "classes", "slicing", "math_operator", "exceptions", "gen_ctx", "dicts_sets", "lists",
           "generators_probes", "with_exceptions", "formatting", "getters_probes", "class_writes", "closures_out",
           "arg_containers", "order_state_frames"]


def main(argv):
    wanted = set(argv)
    for m in MODULES:
        importlib.import_module(m)
    rows = []
    for group in harness.PROBES:
        if wanted and group not in wanted:
            continue
        for r in harness.iter_group(group):
            rows.append(r)
            if os.environ.get("PROBES_VERBOSE"):
                print(harness.fmt(r), flush=True)
    by = collections.OrderedDict()
    for r in rows:
        by.setdefault(r["group"], []).append(r)
    print()
    print(f"{'group':<14} {'probes':>6} {'ok':>4} {'break':>5} {'wrong':>5} {'error':>5}")
    tot = collections.Counter()
    for g, rs in by.items():
        c = collections.Counter(r["status"] for r in rs)
        tot.update(c)
        tot["probes"] += len(rs)
        print(f"{g:<14} {len(rs):>6} {c['ok']:>4} {c['break']:>5} {c['wrong']:>5} {c['error']:>5}")
    print(f"{'TOTAL':<14} {tot['probes']:>6} {tot['ok']:>4} {tot['break']:>5} {tot['wrong']:>5} {tot['error']:>5}")
    print()
    for g, rs in by.items():
        for r in rs:
            if r["status"] != "ok":
                print(harness.fmt(r))
    if os.environ.get("PROBES_JSON"):
        with open(os.environ["PROBES_JSON"], "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
