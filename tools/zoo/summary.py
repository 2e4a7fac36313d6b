"""The zoo's results as figures and tables: each record's outcome, the counts, the geomean ratios of jitcore to
torch.compile, the models where jitcore has more graphs, and the break causes grouped (for triage).
Entry points: `outcome(record, compiler)`, `Summary.of(records)`, `markdown(records)`, `findings(records)`.
"""
from __future__ import annotations

import collections
import dataclasses
import math
import re

__all__ = ["outcome", "Summary", "markdown", "findings", "more_graphs", "fewer_ops", "geomean"]

#: outcomes, in the order tables list them
OUTCOMES = ("ok", "wrong", "error", "timeout", "crashed", "nondeterministic", "skipped", "not run")


_UNCOUNTED = ("skipped", "not run")


def outcome(record: dict, compiler: str = "jitcore") -> str:
    """ok, wrong, error (an exception reached the caller), timeout or crashed (in this compiler's phase),
    nondeterministic (eager differs from itself, so a difference proves nothing) or skipped (no eager run)."""
    if record.get("skipped"):
        return "skipped"
    if compiler not in record.get("compilers", (compiler,)):
        return "not run"
    result = record.get(compiler)
    if record.get("phase") == compiler or (result or {}).get("phase"):
        return "timeout" if record.get("timed_out") else "crashed"
    if result is None:
        return "timeout" if record.get("timed_out") else "crashed"  # died before reaching this compiler
    if result.get("error"):
        return "error"
    if not result.get("correct"):
        return "wrong" if record.get("eager", {}).get("deterministic", True) else "nondeterministic"
    return "ok"


def geomean(values) -> float:
    values = [v for v in values if v and v > 0 and math.isfinite(v)]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def first_break(record: dict) -> str:
    breaks = record.get("jitcore", {}).get("breaks") or []
    if not breaks:
        return ""
    brk = breaks[0]
    return f"{brk['where']}: {brk['reason']}"


def more_graphs(records) -> list:
    """Records where both compilers ran right and jitcore made more graphs than torch.compile, or none where
    torch.compile made some (the whole forward ran in Python: fewer graphs, but worse)."""
    return [r for r in records if outcome(r) == "ok" and outcome(r, "torch") == "ok"
            and _worse(r["jitcore"].get("graphs", 0), r["torch"].get("graphs", 0))]


def fewer_ops(records, fraction: float = 0.9) -> list:
    """Records where both ran right and jitcore's graphs hold fewer than `fraction` of torch.compile's ops (the
    rest runs in Python: a break early in the forward can leave one small graph)."""
    return [r for r in records if outcome(r) == "ok" and outcome(r, "torch") == "ok"
            and "ops" in r["jitcore"] and r["jitcore"]["ops"] < fraction * r["torch"].get("ops", 0)]


def _worse(jit_graphs: int, torch_graphs: int) -> bool:
    return jit_graphs > torch_graphs or jit_graphs == 0 < torch_graphs


@dataclasses.dataclass
class Summary:
    counts: dict
    torch_counts: dict
    with_fallbacks: int
    compared: int
    first_ratio: float
    steady_ratio: float
    first_cpu_ratio: float
    fewer: int
    same: int
    more: int
    none: int

    @classmethod
    def of(cls, records) -> "Summary":
        counts = collections.Counter(outcome(r) for r in records)
        torch_counts = collections.Counter(outcome(r, "torch") for r in records)
        both = [r for r in records if outcome(r) == "ok" and outcome(r, "torch") == "ok"]
        first = [r["jitcore"]["first_s"] / r["torch"]["first_s"] for r in both]
        steady = [r["jitcore"]["steady_s"] / r["torch"]["steady_s"] for r in both
                  if r["jitcore"].get("steady_s") and r["torch"].get("steady_s")]
        first_cpu = [r["jitcore"]["first_cpu_s"] / r["torch"]["first_cpu_s"] for r in both
                     if r["jitcore"].get("first_cpu_s") and r["torch"].get("first_cpu_s")]
        graphs = [(r["jitcore"].get("graphs", 0), r["torch"].get("graphs", 0)) for r in both]
        fallbacks = sum(1 for r in records if (r.get("jitcore") or {}).get("fallbacks"))
        return cls({k: counts.get(k, 0) for k in OUTCOMES}, {k: torch_counts.get(k, 0) for k in OUTCOMES},
                   fallbacks, len(both), geomean(first), geomean(steady), geomean(first_cpu),
                   sum(0 < j < t for j, t in graphs), sum(j == t for j, t in graphs), sum(j > t for j, t in graphs),
                   sum(j == 0 < t for j, t in graphs))

    def lines(self) -> list:
        run = sum(v for k, v in self.counts.items() if k not in _UNCOUNTED)
        return [
            f"models: {run} run, {self.counts['skipped']} skipped (the model or eager fails without a compiler)",
            "jitcore:       " + ", ".join(f"{v} {k}" for k, v in self.counts.items() if k not in _UNCOUNTED),
            f"               {self.with_fallbacks} with fallbacks after internal errors",
            "torch.compile: " + ", ".join(f"{v} {k}" for k, v in self.torch_counts.items() if k not in _UNCOUNTED),
            f"both right on {self.compared}: jitcore graphs fewer {self.fewer} / same {self.same} / more {self.more} / "
            f"none where torch.compile has some {self.none}; "
            f"geomean jitcore/torch.compile first call {self.first_ratio:.2f}x, steady {self.steady_ratio:.2f}x"
            + (f"; first call in process CPU time {self.first_cpu_ratio:.2f}x"
               if self.first_cpu_ratio == self.first_cpu_ratio else ""),
        ]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _seconds(result: dict, key: str, scale: float = 1.0, digits: int = 2) -> str:
    value = (result or {}).get(key)
    return "" if value is None else f"{value * scale:.{digits}f}"


def _problem(record: dict, compiler: str) -> str:
    """One line on what went wrong under this compiler, or jitcore's first break."""
    state = outcome(record, compiler)
    result = record.get(compiler) or {}
    if state == "error":
        error = result["error"]
        return f"{error['type']}: {error['message'][:160]} (at {error['raised_at']}, user {error['user_frame']})"
    if state in ("wrong", "nondeterministic"):
        return f"max difference {result.get('max_diff')} x tolerance"
    if state in ("timeout", "crashed"):
        return f"{state} in {record.get('phase', '?')}" + (f" (last said: {_last_said(record)})" if _last_said(record)
                                                           else "")
    if state == "skipped":
        return record["skipped"][:160]
    return first_break(record)[:200] if compiler == "jitcore" else ""


def _last_said(record: dict) -> str:
    """The last jitcore message (cache limit, break, fallback) or error line the child printed, on one line."""
    text = " ".join(record.get("stderr_tail", "").split()).replace("─", "").replace("│", "")
    start = text.rfind("jitcore · ")
    if start >= 0:
        return " ".join(text[start + len("jitcore · "):].split())[:260]
    lines = [line for line in record.get("stderr_tail", "").splitlines() if line.strip()]
    return lines[-1].strip()[:200] if lines else ""


def markdown(records) -> str:
    """Summary lines, the models with more graphs than torch.compile, then one row per model."""
    summary = Summary.of(records)
    out = ["```", *summary.lines(), "```", ""]
    extra = more_graphs(records)
    if extra:
        out += ["**More graphs than torch.compile, or none where it has some** (jitcore / torch.compile graphs, "
                "jitcore's first break):", ""]
        out += [f"- `{r['name']}` {r['jitcore']['graphs']} / {r['torch']['graphs']}: {_cell(first_break(r))}"
                for r in sorted(extra, key=lambda r: r["jitcore"]["graphs"] - r["torch"]["graphs"], reverse=True)]
        out.append("")
    few = fewer_ops(records)
    if few:
        out += ["**Fewer ops in graphs than torch.compile** (below 90%; jitcore / torch.compile ops, first break):",
                ""]
        out += [f"- `{r['name']}` {r['jitcore']['ops']} / {r['torch']['ops']}: {_cell(first_break(r))}" for r in few]
        out.append("")
    out += ["| model | jitcore | torch.compile | graphs j/tc | ops j/tc | breaks j/tc | first call j/tc (s) | ratio | "
            "steady j/tc/eager (ms) | jitcore's first break or problem |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        j, t = r.get("jitcore") or {}, r.get("torch") or {}
        ratio = (f"{j['first_s'] / t['first_s']:.2f}" if j.get("first_s") and t.get("first_s") else "")
        breaks = f"{len(j['breaks'])}/{t.get('breaks', '')}" if "breaks" in j else ""
        graphs = f"{j.get('graphs', '')}/{t.get('graphs', '')}" if j or t else ""
        ops = f"{j['ops']}/{t.get('ops', '')}" if "ops" in j else ""
        out.append(" | ".join([
            f"| `{r['name']}`", outcome(r), outcome(r, "torch"), graphs, ops, breaks,
            f"{_seconds(j, 'first_s')} / {_seconds(t, 'first_s')}" if j or t else "", ratio,
            " / ".join(_seconds(x, "steady_s", 1e3, 1) for x in (j, t, r.get("eager") or {})) if j else "",
            _cell(_problem(r, "jitcore") or _problem(r, "torch")) + " |"]))
    return "\n".join(out) + "\n"


def _cause(text: str) -> str:
    """A break or error reason with the specifics (names, numbers, quoted values) blurred, for grouping."""
    text = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "'…'", text)
    return re.sub(r"\b\d+\b", "N", text)[:220]


def findings(records) -> str:
    """Triage: every model that errors, is wrong, times out or has more graphs than torch.compile, grouped by
    cause (the first error or break), most common first."""
    groups: dict = collections.defaultdict(list)
    for r in records:
        state = outcome(r)
        if state in ("error", "wrong", "timeout", "crashed"):
            cause = f"{state}: " + _cause(_problem(r, "jitcore").split(" (at ")[0])
            groups[cause].append(f"`{r['name']}` — {_problem(r, 'jitcore')}")
    worse = more_graphs(records)
    for r in worse + [r for r in fewer_ops(records) if r not in worse]:
        breaks = r["jitcore"].get("breaks") or []
        reason = breaks[0]["reason"] if breaks else "no break reported (graphs from recompiles or callees)"
        label = ("no graph" if r["jitcore"].get("graphs", 0) == 0 else
                 "more graphs" if r in worse else "fewer ops in graphs")
        groups[f"{label}: " + _cause(reason)].append(
            f"`{r['name']}` {r['jitcore']['graphs']} vs {r['torch']['graphs']} graphs, {r['jitcore'].get('ops', '?')} "
            f"vs {r['torch'].get('ops', '?')} ops — {_cell(first_break(r))}")
    out = []
    for cause, items in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        out += [f"### {len(items)} × {_cell(cause)}", "", *[f"- {item}" for item in items], ""]
    return "\n".join(out)
