"""What `jit.explain()` does: run one call through a fresh compiled copy and collect what jitcore did with it.

The copy compiles with a recording backend (eager underneath), so the report covers the whole function: the graph
before a break, the resume functions after it, callees a break runs natively, every guard and every recompile.
This module drives the runtime and the console's recording; report.explain turns what it gathered into the report.
Entry points: `explain_call(fn, args, kwargs)` -> `ExplainReport`, `explain_wrapper_call(module, args, kwargs)` (DDP's
forward and FSDP's hooks run natively, the forward underneath is explained), `is_explain_cache(cache)`.
"""
from __future__ import annotations

import inspect
import time
import types

from jitcore import backends
from jitcore.config import config
from jitcore.errors import InvalidArgumentError
from jitcore.report.console import recording
from jitcore.report.explain import ExplainReport, build_report
from jitcore.runtime import distributed
from jitcore.runtime.autoenable import original_code
from jitcore.runtime.cache import Options
from jitcore.runtime.install import ALL_CACHES, compiled_function
from jitcore.runtime.prologue import FALLTHROUGH

__all__ = ["explain_call", "explain_wrapper_call", "is_explain_cache"]


class _RecordingBackend:
    """Compiles with the eager backend and remembers every graph in the order it was handed over."""

    def __init__(self):
        self.inner = backends.lookup("eager")
        self.graphs: list = []
        self.__name__ = "eager"

    def __call__(self, gm, example_inputs):
        self.graphs.append(gm)
        return self.inner(gm, example_inputs)


def is_explain_cache(cache) -> bool:
    """True for the caches of explain()'s own copies, which the process summary leaves out."""
    return isinstance(cache.options.backend, _RecordingBackend)


def _original(fn):
    """The user's function behind a compiled copy or a function whose code jitcore swapped."""
    if hasattr(fn, "_jitcore_cache") and hasattr(fn, "__wrapped__"):
        return fn.__wrapped__
    if any(const is FALLTHROUGH for const in fn.__code__.co_consts):
        code = original_code(fn)
        if code is not None:
            copy = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
            copy.__kwdefaults__, copy.__qualname__ = fn.__kwdefaults__, fn.__qualname__
            return copy
    return fn


def _user_cache(given, fn):
    """The cache the user's own calls of `fn` went through: a jit.compile copy's, or a registered function's
    (jit.register: the cache of its original code); None when it has not run compiled."""
    cache = getattr(given, "_jitcore_cache", None)
    if cache is not None:
        return cache
    # a compiled copy's cache answers calls of that copy only (its dispatcher's `original`): not fn's own calls
    found = [cache for cache in list(ALL_CACHES) if cache.code is fn.__code__ and cache.dispatcher.original is None
             and not is_explain_cache(cache)]
    return max(found, key=lambda cache: len(cache.entries), default=None)


def explain_call(fn, args: tuple, kwargs: dict) -> ExplainReport:
    """Run fn(*args, **kwargs) once through a fresh compiled copy (eager backend) and report what happened.

    The copy compiles as the user's own calls would now: with their `dynamic` setting and the dims (and numbers)
    their recompiles made dynamic, so the graph shown is the one a call like this gets, and says why each dim is
    dynamic."""
    given, fn = fn, _original(fn)
    try:
        inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as exc:
        raise InvalidArgumentError(f"explain(): these arguments do not fit {fn.__qualname__}: {exc}") from None
    recorder = _RecordingBackend()
    user = _user_cache(given, fn)
    options = Options(recorder, "eager", cache_limit=config.cache_limit,
                      dynamic=user.options.dynamic if user is not None else None)
    copy = compiled_function(fn, options)
    if user is not None:
        copy._jitcore_cache.policy.adopt(user.policy)
    return _run_recorded(fn, copy, recorder, options, args, kwargs)


def explain_wrapper_call(module, args: tuple, kwargs: dict) -> ExplainReport:
    """Run a DistributedDataParallel or FSDP-managed module once as compile() runs it: DDP's forward and FSDP's
    hooks natively, the forward underneath through a fresh compiled copy (under DDP split at its buckets)."""
    inner = distributed.inner_module(module) if distributed.is_ddp(module) else module
    forward = _original(type(inner).forward)
    try:
        inspect.signature(forward).bind(inner, *args, **kwargs)
    except TypeError as exc:
        raise InvalidArgumentError(f"explain(): these arguments do not fit {forward.__qualname__}: {exc}") from None
    recorder = _RecordingBackend()
    options = Options(recorder, "eager", cache_limit=config.cache_limit)
    copy = compiled_function(forward, options)
    if distributed.is_ddp(module):
        compiled = distributed.compile_ddp(module, lambda fn: copy)
    else:
        compiled = distributed.with_forward(module, copy)
    return _run_recorded(forward, compiled, recorder, options, args, kwargs)


def _run_recorded(fn, compiled, recorder, options, args, kwargs) -> ExplainReport:
    error = None
    with recording() as events:
        started = time.perf_counter()
        try:
            compiled(*args, **kwargs)
        except Exception as exc:  # the report says so; what ran before it is still explained
            error = exc
        run_seconds = time.perf_counter() - started
    caches = [cache for cache in list(ALL_CACHES) if cache.options is options]
    return build_report(fn, recorder.graphs, caches, events, error, run_seconds)
