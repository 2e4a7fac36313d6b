"""Run zoo models, each in its own child process (tools.zoo.child) with a timeout, and collect their records.

A child that times out or dies still leaves the record it had saved (with the phase it was in); the runner adds
`timed_out`, the exit status and the end of its stderr. Records go to the JSON file after every model, so a long
run that is stopped keeps what it measured. Entry point: `run(entries, ...)` -> list of records.
"""
from __future__ import annotations

import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time

__all__ = ["run", "load", "save"]

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _in_process(name: str, device: str, backend: str, compilers, steady_calls: int, caches: str) -> dict:
    """One model in this process (no timeout, no isolation: for tests of the tool itself)."""
    from tools.zoo import child  # lazy: imports torch and jitcore, which a parent of children never needs
    latest: dict = {"name": name}

    def keep(record: dict) -> None:
        latest.update(record)
    started = time.perf_counter()
    try:
        record = child.run_entry(name, device, backend, keep, compilers, steady_calls, caches)
    except Exception as exc:  # what escaped the child's own handling: the record says where it stopped
        record = dict(latest, returncode=1, stderr_tail=f"{type(exc).__name__}: {exc}")
    record["wall_s"] = round(time.perf_counter() - started, 2)
    return record


def _one(name: str, device: str, backend: str, timeout: float, threads: int, compilers, steady_calls: int,
         caches: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="zoo-") as folder:
        out = os.path.join(folder, "record.json")
        command = [sys.executable, "-m", "tools.zoo.child", name, "--device", device, "--backend", backend,
                   "--out", out, "--threads", str(threads), "--compilers", ",".join(compilers),
                   "--steady-calls", str(steady_calls), "--caches", caches]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([_ROOT, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
        env.pop("JITCORE", None)  # the child compiles explicitly; auto-enable would compile everything twice
        started = time.perf_counter()
        timed_out, returncode, stderr = False, None, ""
        try:
            done = subprocess.run(command, cwd=_ROOT, env=env, timeout=timeout, capture_output=True, text=True)
            returncode, stderr = done.returncode, done.stderr
        except subprocess.TimeoutExpired as exc:
            timed_out = True
            stderr = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        try:
            with open(out, encoding="utf-8") as handle:
                record = json.load(handle)
        except (OSError, ValueError):
            record = {"name": name, "phase": "start"}
    record["wall_s"] = round(time.perf_counter() - started, 2)
    if timed_out:
        record["timed_out"] = True
    if returncode:
        record["returncode"] = returncode
    if timed_out or returncode or record.get("phase"):
        record["stderr_tail"] = stderr[-1500:]
    return record


def load(path: str) -> list:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)["records"]


def save(path: str, records: list, meta: dict) -> None:
    temporary = path + ".tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump({"meta": meta, "records": records}, handle, indent=1, default=str)
    os.replace(temporary, path)


def run(entries, *, device: str = "cpu", backend: str = "eager", timeout: float = 300, jobs: int = 1,
        threads: int = 0, json_path: str | None = None, meta: dict | None = None, progress=print,
        compilers=("jitcore", "torch"), in_process: bool = False, steady_calls: int = 5,
        caches: str = "fresh") -> list:
    """Run every entry (jobs at a time; in this process one after another when `in_process`) and return the
    records in the entries' order. `caches`: inductor's caches per measured compile (measure.CACHES)."""
    records: dict = {}
    names = [entry.name for entry in entries]
    if in_process:
        jobs = 1
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {(pool.submit(_in_process, name, device, backend, compilers, steady_calls, caches) if in_process
                    else pool.submit(_one, name, device, backend, timeout, threads, compilers, steady_calls,
                                     caches)): name
                   for name in names}
        for future in concurrent.futures.as_completed(futures):
            record = future.result()
            records[futures[future]] = record
            if progress:
                progress(record)
            if json_path:
                save(json_path, [records[n] for n in names if n in records], meta or {})
    return [records[name] for name in names]
