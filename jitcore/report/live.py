"""How the console lays out each live event: a titled rule, then label/value rows that wrap under their value.

One function per kind of event; each takes the facts the runtime passed to `say` (see report.console) and returns
a rich renderable. Events said without facts get the generic block. Reads well from 80 columns up: labels stay
in one narrow column and long values wrap beneath themselves. Entry point: `render_event(event, selected)`.
"""
from __future__ import annotations

from rich.console import Group

from jitcore.capture.shapes import guard_tree_of
from jitcore.report.describe import (break_location, frame_of, graph_code, hint_for, in_loop_outcome, readable, reason_of,
                                     short_path)
from jitcore.report.layout import CodeBlock, Rows, guard_tree, header, source_row

__all__ = ["render_event"]

_TITLES = {"breaks": ("graph break", "yellow"), "recompiles": ("recompile", "magenta"),
           "fallbacks": ("fallback", "red"), "graphs": ("graph", "green"), "guards": ("guards", "blue"),
           "distributed": ("split for DDP", "green")}


def render_event(event, selected=frozenset()):
    """The renderable for one event, or None when nothing of it is selected (a graph event with guards only)."""
    facts = event.facts
    code = facts.get("code")
    try:
        if event.topic == "breaks" and "brk" in facts:
            return _break(code, facts["brk"], facts.get("resumed", False), facts.get("unresumable"))
        if event.topic == "recompiles" and "gave_up" in facts:
            return _gave_up(code, facts["gave_up"], facts["limit"])
        if event.topic == "recompiles" and "limit" in facts and "entries" not in facts:
            return _limit(code, facts.get("reasons", []), facts["limit"], facts.get("changing", []))
        if event.topic == "recompiles" and "reasons" in facts:
            return _recompile(code, facts["reasons"], facts.get("entries"), facts.get("cache_limit"))
        if event.topic == "fallbacks" and ("error" in facts or "returned" in facts):
            return _fallback(code, facts)
        if event.topic == "graphs" and "gm" in facts:
            return _graph(code, facts, selected)
    except Exception:  # a fact of an unexpected shape: the generic block still says it
        pass
    title, style = _TITLES.get(event.topic, (event.topic, "yellow"))
    return Group(header(title, "", style), Rows([("", readable(event.message))], indent=2))


def _break(code, brk, resumed: bool, unresumable=None):
    frame = frame_of(code) if code is not None else None
    filename, lineno, line, function = break_location(code, brk)
    items = [("at", f"{short_path(filename)}:{lineno} in {function}()")]
    if line and line.strip():
        items.append(("", source_row(lineno, line.strip())))
    items.append(("why", reason_of(brk.info, brk.detail)))
    items.append(("hint", hint_for(brk, line or "", function)))
    owner = frame.label if frame is not None else f"{function}()"
    if resumed:
        items.append(("then", f"{owner} runs as a graph up to here, then continues in Python"))
    elif brk.in_loop:
        items.append(("then", in_loop_outcome(owner, f"{short_path(filename)}:{lineno}")))
    elif unresumable is not None:
        items.append(("then", f"{owner} runs in Python (no graph) for calls like this one: it cannot continue "
                              f"in Python at this point ({reason_of(unresumable.info, unresumable.detail)})"))
    else:
        items.append(("then", f"{owner} runs in Python (no graph) for calls like this one"))
    return Group(header("graph break", f"in {function}()"), Rows(items))


def _recompile(code, reasons, entries, cache_limit):
    frame = frame_of(code)
    items = [("at", frame.where + (f"   (entry {entries}" + (f" of at most {cache_limit})" if cache_limit else ")")
                                   if entries else ""))]
    changed = [readable(reason) for reason in reasons] or ["no entry matched these arguments"]
    items += [("why" if i == 0 else "", reason) for i, reason in enumerate(changed)]
    return Group(header("recompile", frame.label, "magenta"), Rows(items))


def _limit(code, reasons, limit, changing):
    frame = frame_of(code)
    items = [("at", frame.where),
             ("what", f"{frame.label} has {limit} compiled variants (cache_limit={limit}); new variants run "
                      f"natively from now on")]
    items += [("why" if i == 0 else "", readable(reason)) for i, reason in enumerate(reasons[:3])]
    items.append(("hint", limit_hint(changing, frame.function)))
    return Group(header("cache limit", frame.label, "red"), Rows(items))


def limit_hint(changing, function: str) -> str:
    """The cache-limit hint for what keeps changing (policy's `"<kind> <name>"` list): a tensor's shape wants
    dynamic shapes, another object each call wants one compiled instance, only a Python scalar wants a tensor."""
    kinds = {}
    for item in changing:
        kind, _, name = item.partition(" ")
        kinds.setdefault(kind, []).append(readable(name))
    raise_it = "raise the limit (jit.compile(..., cache_limit=N)) if only a few variants are needed"
    if "shape" in kinds:
        name = kinds["shape"][0]
        return (f"the shape of {name} keeps changing: mark the changing dim dynamic (jit.mark_dynamic({name}, dim)) "
                f"or compile with dynamic=True; or {raise_it}")
    if "object" in kinds:
        name = kinds["object"][0]
        return (f"{name} is a different object in each call (one variant per object, e.g. per module instance): "
                f"compile the object itself once (jit.compile(module)) and reuse it, or {raise_it}")
    if "number" in kinds:
        name = kinds["number"][0]
        return (f"the Python value {name} keeps changing: pass it as a tensor, or keep it out of {function}(); "
                f"or {raise_it}")
    return f"{raise_it}; otherwise keep the value that changes out of {function}()"


def _gave_up(code, counts, limit):
    frame = frame_of(code)
    misses, calls = counts
    items = [("at", frame.where),
             ("what", f"{misses} of the last {calls} calls of {frame.label} matched none of its {limit} compiled "
                      "variants; it runs natively from now on, without trying them"),
             ("hint", "raise the limit (jit.compile(..., cache_limit=N)) or keep the changing value out of "
                      f"{frame.function}(); jit.reset() starts over")]
    return Group(header("cache limit", frame.label, "red"), Rows(items))


def _fallback(code, facts):
    frame = frame_of(code) if code is not None else None
    error = facts.get("error")
    stage = facts.get("stage", "")
    label = frame.label if frame is not None else "this function"
    items = [("at", frame.where)] if frame is not None else []
    if "returned" in facts:
        items.append(("error", f"backend {facts['backend']!r} returned {facts['returned']}, not a callable: a "
                               f"backend must return the function to run in the graph's place"))
        items.append(("then", f"{label} runs natively for these inputs; fix the backend, or check the graph "
                              f"with backend='eager'"))
    elif facts.get("backend"):
        items.append(("error", f"backend {facts['backend']!r} failed: {type(error).__name__}: {error}"))
        items.append(("then", f"{label} runs natively for these inputs; run with backend='eager' to check the "
                              f"graph itself"))
    else:
        items.append(("error", readable(f"internal error during {stage}: {type(error).__name__}: {error}")))
        items.append(("then", f"{label} runs natively from now on for calls like this one (the same torch mode "
                              f"and tensor inputs; results are unaffected); please report this as a jitcore bug"))
    return Group(header("fallback", label, "red"), Rows(items))


def _graph(code, facts, selected):
    frame = frame_of(code)
    parts = []
    gm = facts["gm"]
    if "graphs" in selected:
        ops = facts.get("op_count", 0)
        parts.append(header("graph", f"{frame.label} · {ops} op{'s' if ops != 1 else ''}", "green"))
        parts.append(Rows([("at", frame.where)]))
        parts.append(CodeBlock(graph_code(gm, frame.filename, frame)))
    collected = facts.get("guards")
    if "guards" in selected and collected is not None:
        parts.append(header("guards", frame.label, "blue"))
        parts.append(guard_tree(guard_tree_of(collected), "", readable))
    return Group(*parts) if parts else None
