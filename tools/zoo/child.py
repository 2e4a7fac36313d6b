"""One zoo model in its own process: `python -m tools.zoo.child NAME --device cpu --backend eager --out PATH`.

Builds the model, measures it (tools.zoo.measure) and keeps PATH up to date with the record as it grows, so the
parent learns what happened even when this process is killed by its timeout or dies in native code.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import torch  # noqa: E402

from tools.zoo.build import BuildError, build  # noqa: E402
from tools.zoo.catalogue import parse  # noqa: E402
from tools.zoo.measure import CACHES, COMPILERS, STEADY_CALLS, compile_caches, measure, warm_up  # noqa: E402


def _saver(path: str):
    def save(record: dict) -> None:
        temporary = path + ".tmp"
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(record, handle, default=str)
        os.replace(temporary, path)
    return save


def run_entry(name: str, device: str, backend: str, save, compilers=COMPILERS,
              steady_calls: int = STEADY_CALLS, caches: str = "fresh") -> dict:
    """Build and measure one model; `save(record)` is called whenever the record grows."""
    entry = parse(name)
    record = {"name": entry.name, "library": entry.library, "kind": entry.kind, "compilers": list(compilers),
              "phase": "build"}

    def saving() -> None:
        save(record)
    saving()
    started = time.perf_counter()
    try:
        built = build(entry, torch.device(device))
    except BuildError as exc:
        record["skipped"] = str(exc)[:500]
        saving()
        return record
    record["params"] = sum(p.numel() for p in built.model.parameters())
    record["build_s"] = round(time.perf_counter() - started, 2)
    with compile_caches(caches):
        warm_up(torch.device(device), backend, compilers)
    try:
        measure(built, record, saving, torch.device(device), backend, compilers, steady_calls, caches)
    except Exception as exc:  # eager itself failed on the inputs: nothing to compare against
        if record.get("phase") != "eager":
            raise
        record["skipped"] = f"eager fails: {type(exc).__name__}: {str(exc)[:400]}"
        saving()
    return record


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("name")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--backend", default="eager")
    parser.add_argument("--out", required=True)
    parser.add_argument("--threads", type=int, default=0, help="torch intra-op threads (0: torch's default)")
    parser.add_argument("--compilers", default="jitcore,torch", help="which compilers to measure, in order")
    parser.add_argument("--steady-calls", type=int, default=STEADY_CALLS, help="timed calls after the first")
    parser.add_argument("--caches", choices=CACHES, default="fresh",
                        help="inductor/Triton caches per measured compile (tools/zoo/measure.CACHES)")
    options = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    if options.threads:
        torch.set_num_threads(options.threads)
    run_entry(options.name, options.device, options.backend, _saver(options.out),
              tuple(options.compilers.split(",")), options.steady_calls, options.caches)
    return 0


if __name__ == "__main__":
    sys.exit(main())
