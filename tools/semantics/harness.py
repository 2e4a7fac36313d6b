"""Shared harness for the behaviour probes (ISSUE13 "Python breadth").

A probe is a small function taking tensors (and sometimes Python containers).  For each probe we run:
  1. eager Python,
  2. jitcore: jit.compile(fn, backend=<counting backend>), then jit.explain(fn, ...) on fresh arguments for
     break reasons / fallbacks,
  3. torch.compile(fn, backend=<counting backend>) after torch._dynamo.reset() (graph count only; cached in
     tc_cache.json keyed by torch version and probe source so later runs are fast).
and compare results, exceptions and side effects (the arguments after the call plus an optional `state`
snapshot, e.g. a module global).

Status: ok     same result, jitcore graphs <= torch.compile graphs, no jitcore fallback
        break  same result, more graphs (or breaks) than torch.compile, or the frame ran natively (0 graphs)
               while torch.compile captured it
        wrong  different result / side effect / exception type
        error  jitcore internal error (JitError, fallback after an internal error) or an exception eager did
               not raise

Usage in a group file:
    from harness import probe, T, main
    G = "mygroup"
    @probe(G)                      # args default: (T(),)
    def name(x): ...
    @probe(G, args=lambda: (T(), [1, 2]), state=(reset_fn, snapshot_fn))
    ...
    if __name__ == "__main__": main(G)
"""
from __future__ import annotations

import contextlib
import copy
import hashlib
import inspect
import io
import json
import os
import signal
import sys
import traceback
import warnings

import torch

warnings.filterwarnings("ignore")

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import jitcore as jit  # noqa: E402

PROBES: dict[str, list] = {}
TC_CACHE_PATH = os.path.join(HERE, "tc_cache.json")
_TC_CACHE = None


def T(*shape, seed=0, dtype=torch.float32):
    """A deterministic tensor (default shape (2, 3))."""
    shape = shape or (2, 3)
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype)


class Probe:
    def __init__(self, group, fn, args, state, name, tc_config=None, post=None, calls=1):
        self.group, self.fn, self.args, self.state = group, fn, args, state
        self.name = name or fn.__name__
        self.tc_config = tc_config or {}
        #: post(result) is what is compared (a returned closure is called outside); calls: calls per run
        self.post = post
        self.calls = calls

    def key(self):
        try:
            src = inspect.getsource(self.fn)
        except Exception:
            src = self.name
        src += repr(sorted(self.tc_config.items()))
        if self.calls != 1:
            src += f"|calls={self.calls}"
        return f"{torch.__version__}|{self.group}|{self.name}|" + hashlib.sha1(src.encode()).hexdigest()[:12]


def probe(group, args=None, state=None, name=None, tc_config=None, post=None, calls=1):
    """Register a probe. args: callable returning a fresh argument tuple; state: (reset, snapshot);
    tc_config: torch._dynamo.config settings for the torch.compile reference run (those PyTorch's own tests set,
    e.g. enable_trace_unittest=True); unknown settings are ignored. post: applied to each call's result before
    comparing (call a returned closure outside the compiled code); calls: how many times one run calls the
    function (fresh arguments each time, state reset once): the results are compared as a list, and graphs
    count every call's captures (a recompile on every call shows)."""

    def deco(fn):
        PROBES.setdefault(group, []).append(Probe(group, fn, args or (lambda: (T(),)), state, name, tc_config,
                                                  post, calls))
        return fn

    return deco


# ---------------------------------------------------------------- comparison
def same(a, b):
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        np = None
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return False
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.is_floating_point() or a.is_complex():
            return torch.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)
        return torch.equal(a, b)
    if np is not None and (isinstance(a, np.ndarray) or isinstance(b, np.ndarray)):
        if type(a) is not type(b):
            return False
        return a.shape == b.shape and a.dtype == b.dtype and np.allclose(a, b, equal_nan=True)
    if type(a) is not type(b):
        # defaultdict vs dict etc. must match; ints/bools too
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        if len(a) != len(b):
            return False
        ka, kb = list(a.keys()), list(b.keys())
        if not all(same(x, y) if isinstance(x, torch.Tensor) else x == y for x, y in zip(ka, kb)):
            # keys that are tensors are compared by position
            return False
        return all(same(a[x], b[y]) for x, y in zip(ka, kb))
    if isinstance(a, (set, frozenset)):
        return a == b
    if isinstance(a, float):
        return a == b or (a != a and b != b) or abs(a - b) <= 1e-6 * max(1.0, abs(a))
    if isinstance(a, torch.nn.Module):
        sa, sb = a.state_dict(), b.state_dict()
        return same(dict(sa), dict(sb))
    if hasattr(a, "__dict__") and not isinstance(a, type) and type(a).__eq__ is object.__eq__:
        return same(dict(vars(a)), dict(vars(b)))
    if type(a).__eq__ is object.__eq__:
        # objects compared by identity (operator.itemgetter, a deep-copied argument): by their repr
        return a is b or repr(a) == repr(b)
    try:
        return bool(a == b)
    except Exception:
        return repr(a) == repr(b)


def _snapshot_args(args):
    out = []
    for a in args:
        if isinstance(a, torch.Tensor):
            out.append(a.detach().clone())
        else:
            try:
                out.append(copy.deepcopy(a))
            except Exception:
                out.append(a)
    return out


class _Timeout(Exception):
    pass


@contextlib.contextmanager
def time_limit(seconds):
    def handler(signum, frame):
        raise _Timeout(f"probe took more than {seconds}s")

    old = signal.signal(signal.SIGALRM, handler)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _run(callable_, p):
    """Run callable_ on fresh args; returns (result, exception, args-after, state-after)."""
    if p.state:
        p.state[0]()
    results = []
    res = exc = None
    for _ in range(p.calls):
        args = p.args()
        try:
            torch.manual_seed(0)
            res = callable_(*args)
            if p.post is not None:
                res = p.post(res)
        except _Timeout:
            raise
        except BaseException as e:  # noqa: BLE001
            exc = e
            break
        results.append(res)
    if p.calls > 1:
        res = results
    st = p.state[1]() if p.state else None
    return res, exc, _snapshot_args(args), st


def _counting():
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    return graphs, backend


def _load_cache():
    global _TC_CACHE
    if _TC_CACHE is None:
        try:
            with open(TC_CACHE_PATH) as f:
                _TC_CACHE = json.load(f)
        except Exception:
            _TC_CACHE = {}
    return _TC_CACHE


def _save_cache():
    if _TC_CACHE is None:
        return
    try:
        tmp = TC_CACHE_PATH + f".{os.getpid()}"
        with open(tmp, "w") as f:
            json.dump(_TC_CACHE, f, indent=0, sort_keys=True)
        os.replace(tmp, TC_CACHE_PATH)
    except Exception:
        pass


def tc_graphs(p):
    """(graphs, graph breaks) of torch.compile on this probe; cached per torch version and probe source."""
    cache = _load_cache()
    k = p.key()
    hit = cache.get(k)
    if isinstance(hit, list) and os.environ.get("PROBES_NO_TC_CACHE") is None:
        return tuple(hit)
    import torch._dynamo
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    import torch._dynamo.config as dcfg

    graphs, backend = _counting()
    patch = {k: v for k, v in p.tc_config.items() if hasattr(dcfg, k)}
    try:
        with time_limit(120), contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
                dcfg.patch(**patch):
            _run(torch.compile(p.fn, backend=backend), p)
        n = len(graphs)
        b = sum(counters["graph_break"].values())
    except Exception:
        n, b = -1, -1
    torch._dynamo.reset()
    cache[k] = [n, b]
    return n, b


def _short(s, n=110):
    s = " ".join(str(s).split())
    return s if len(s) <= n else s[: n - 3] + "..."


def run_probe(p):
    out = {"group": p.group, "name": p.name}
    try:
        with time_limit(60), contextlib.redirect_stdout(io.StringIO()):
            e_res, e_exc, e_args, e_st = _run(p.fn, p)
    except _Timeout as t:
        out.update(status="skip", jg=-1, tg=-1, reason=f"eager timeout {t}")
        return out
    reason = ""
    status = None
    jg = -1
    try:
        jit.reset()
    except Exception:
        pass
    graphs, backend = _counting()
    err_buf = io.StringIO()
    try:
        with time_limit(60), contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err_buf):
            compiled = jit.compile(p.fn, backend=backend)
            j_res, j_exc, j_args, j_st = _run(compiled, p)
        jg = len(graphs)
    except _Timeout as t:
        out.update(status="error", jg=-1, tg=tc_graphs(p)[0], reason=f"jitcore timeout: {t}")
        return out
    except Exception as e:  # jit.compile itself refused
        j_res, j_exc, j_args, j_st = None, e, e_args, e_st
        jg = len(graphs)
    # explain on fresh args, for break reasons and fallbacks
    breaks, fallbacks, reasons = 0, [], []
    try:
        with time_limit(60), contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            if p.state:
                p.state[0]()
            rep = jit.explain(p.fn, *p.args())
        breaks = getattr(rep, "graph_break_count", 0) or 0
        reasons = list(getattr(rep, "break_reasons", []) or [])
        fallbacks = list(getattr(rep, "fallbacks", []) or [])
    except Exception as e:  # noqa: BLE001
        reasons = [f"explain failed: {type(e).__name__}: {e}"]
    tg, tb = tc_graphs(p)
    jit_err = isinstance(j_exc, jit.JitError) or "InternalError" in type(j_exc).__name__
    if j_exc is not None and e_exc is None:
        status = "error"
        reason = f"jitcore raised {type(j_exc).__name__}: {j_exc}"
    elif jit_err:
        status = "error"
        reason = f"jitcore raised {type(j_exc).__name__}: {j_exc}"
    elif e_exc is not None and j_exc is None:
        status = "wrong"
        reason = f"eager raised {type(e_exc).__name__}: {e_exc}; jitcore returned"
    elif e_exc is not None and type(e_exc) is not type(j_exc):
        status = "wrong"
        reason = f"exception differs: eager {type(e_exc).__name__}, jitcore {type(j_exc).__name__}: {j_exc}"
    elif e_exc is None and not same(e_res, j_res):
        status = "wrong"
        reason = f"result differs: eager {_short(repr(e_res), 60)} jitcore {_short(repr(j_res), 60)}"
    elif not same(e_args, j_args):
        status = "wrong"
        reason = f"argument side effect differs: eager {_short(repr(e_args), 60)} jitcore {_short(repr(j_args), 60)}"
    elif p.state and not same(e_st, j_st):
        status = "wrong"
        reason = f"state differs: eager {_short(repr(e_st), 60)} jitcore {_short(repr(j_st), 60)}"
    elif fallbacks:
        status = "error"
        reason = "fallback: " + str(fallbacks[0])
    else:
        native = jg == 0 and tg > 0
        tc_breaks = tb if tb >= 0 else max(tg - 1, 0)
        if tg <= 0:  # torch.compile captured nothing (or failed): nothing to measure against
            status = "ok"
            reason = ""
        elif jg > tg or native or breaks > tc_breaks:
            status = "break"
            reason = reasons[0] if reasons else ("ran natively (0 graphs)" if native else "")
        else:
            status = "ok"
            reason = ""
    if not reason and status != "ok" and reasons:
        reason = reasons[0]
    if status in ("wrong", "error") and reasons and "explain failed" not in reasons[0]:
        reason = reason + " | first break: " + reasons[0]
    out.update(status=status, jg=jg, tg=tg, jb=breaks, tb=tb, reason=_short(reason, 300))
    return out


def iter_group(group):
    for p in PROBES.get(group, []):
        try:
            r = run_probe(p)
        except Exception as e:  # harness bug: never stop the run
            r = {"group": group, "name": p.name, "status": "error", "jg": -1, "tg": -1,
                 "reason": "harness: " + _short(traceback.format_exception_only(e)[-1])}
        yield r
    _save_cache()


def run_group(group):
    return list(iter_group(group))


def fmt(r):
    return (f"{r['group']:<14} {r['name']:<34} {r['status']:<6} jit={r['jg']}g/{r.get('jb', '?')}b "
            f"tc={r['tg']}g/{r.get('tb', '?')}b  {r['reason']}")


def main(group):
    for r in iter_group(group):
        print(fmt(r), flush=True)
