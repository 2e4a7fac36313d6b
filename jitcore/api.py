"""The public entry points: compile, register, enabled, explain, reset, disable, allow_in_graph.

Everything here validates its input and turns it into runtime objects; nothing here interprets bytecode.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import sys
import types

import torch

from jitcore import backends
from jitcore.capture.interpreter import clear_code_caches
from jitcore.codegen import resume
from jitcore.config import check_backends_with, config
from jitcore.errors import InvalidArgumentError, UnknownBackendError
from jitcore.explaining import explain_call, explain_wrapper_call
from jitcore.report import console as _console  # subscribes the console to jitcore.events
from jitcore.runtime.cache import Options, STATS
from jitcore.runtime.install import compiled_function, INTERCEPTOR, ALL_CACHES
from jitcore.marks import mark_disabled, allow_in_graph as _mark_allowed, is_compiling
from jitcore.runtime import distributed, resume_fns
from jitcore.runtime.registry import REGISTRY

__all__ = ["compile", "register", "unregister", "enabled", "explain", "reset", "disable", "allow_in_graph",
           "is_compiling"]

_MISSING = object()


def make_options(backend=None, fullgraph=False, dynamic=None, cache_limit=None, mode=None, options=None) -> Options:
    """Checked runtime Options from the arguments of compile()/enabled() (auto-enable builds its own with it)."""
    if type(fullgraph) is not bool:
        raise InvalidArgumentError(f"fullgraph must be True or False, got {fullgraph!r}")
    if dynamic not in (None, True, False):
        raise InvalidArgumentError(f"dynamic must be None, True or False, got {dynamic!r}")
    if cache_limit is None:
        cache_limit = config.cache_limit
    if type(cache_limit) is not int or cache_limit < 1:
        raise InvalidArgumentError(f"cache_limit must be a positive int, got {cache_limit!r}")
    backend_options = {}
    if mode is not None:
        backend_options["mode"] = mode
    if options is not None:
        if not isinstance(options, dict):
            raise InvalidArgumentError(f"options must be a dict of backend options, got {type(options).__name__}")
        backend_options["options"] = options
    if backend is None:
        backend = config.backend
    try:
        compiled = backends.lookup(backend, **backend_options)
    except backends.UnknownBackendError as exc:
        raise UnknownBackendError(str(exc)) from None
    except backends.BackendError as exc:
        raise InvalidArgumentError(f"backend {backend!r}: {exc}") from None
    name = backend if isinstance(backend, str) else getattr(backend, "__name__", type(backend).__name__)
    return Options(compiled, name, fullgraph, dynamic, cache_limit)


def _check_backend_name(name: str) -> None:
    """jit.config.backend = name (and JITCORE_BACKEND): a name the registry knows, else the registry's message."""
    if name not in backends.list():
        try:
            backends.lookup(name)
        except backends.UnknownBackendError as exc:
            raise UnknownBackendError(str(exc)) from None


check_backends_with(_check_backend_name)


def _python_function(obj, what: str):
    """The Python function (and bound self) behind a callable; clear errors for what cannot be compiled."""
    if isinstance(obj, types.MethodType):
        fn, bound = obj.__func__, obj.__self__
    elif isinstance(obj, types.FunctionType):
        fn, bound = obj, _MISSING
    elif callable(obj) and isinstance(getattr(type(obj), "__call__", None), types.FunctionType):
        fn, bound = type(obj).__call__, obj
    elif callable(obj):
        raise InvalidArgumentError(f"{what} needs a Python function, method or nn.Module; "
                                   f"{obj!r} ({type(obj).__name__}) has no Python code to compile")
    else:
        raise InvalidArgumentError(f"{what} needs a callable (a function, method or nn.Module), "
                                   f"got {type(obj).__name__} {obj!r}")
    if not isinstance(fn, types.FunctionType):
        raise InvalidArgumentError(f"{what}: {obj!r} has no Python code to compile")
    flags = fn.__code__.co_flags
    if flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
        kind = "generator" if flags & inspect.CO_GENERATOR else "coroutine/async generator"
        raise InvalidArgumentError(f"{what}: {fn.__qualname__} is a {kind} function; jitcore compiles plain "
                                   f"functions only (generators and coroutines run natively)")
    return fn, bound


class _CompiledModuleMixin:
    """Marker base of the classes `compile(module)` makes; the class attribute `_orig_mod` is the module compiled
    and `_jitcore_compile_args` the keyword arguments of that compile() call.

    Note [Saving a compiled module]: the class is made per compile() call, so pickle cannot find it by name. A
    compiled module pickles (and torch.save's, and deep-copies) as "the original module, compiled again with the
    same arguments": loading gives a compiled module of the loaded original, with no compiled code carried over
    (its first call captures again). Its state_dict is the original's, with the original's keys.
    """

    def __reduce_ex__(self, protocol):
        return _load_compiled_module, (type(self)._orig_mod, dict(type(self)._jitcore_compile_args))


def _load_compiled_module(module: torch.nn.Module, compile_args: dict):
    """What unpickling a compiled module calls (Note [Saving a compiled module])."""
    return compile(module, **compile_args)


def _compile_module(module: torch.nn.Module, options: Options, compile_args: dict):
    """A module sharing the original's state (its __dict__), whose class's forward has the dispatch prologue.

    Sharing __dict__ keeps parameters, buffers, submodules, hooks, state_dict keys and train()/eval() identical to
    the original's, like torch's OptimizedModule, while the original's own forward stays untouched.
    """
    cls = type(module)
    forward = getattr(cls, "forward", None)
    if "forward" in module.__dict__:
        raise InvalidArgumentError("compile(module): this module has a forward set on the instance; compile "
                                   "module.forward instead")
    fn, _ = _python_function(forward, "compile(module)")
    compiled = compiled_function(fn, options)
    # the same name as the original class: reprs, hooks and code that prints type(m).__name__ see no difference
    subclass = type(cls.__name__, (_CompiledModuleMixin, cls), {
        "forward": compiled, "_orig_mod": module, "_jitcore_compile_args": compile_args,
        "__module__": cls.__module__,
        "__qualname__": cls.__qualname__})
    return distributed.shared_state_module(module, subclass)


def _compile_ddp(ddp, options: Options):
    """A DistributedDataParallel sharing ddp's state: DDP's own forward runs natively (its reducer, buffers,
    no_sync()), the module it wraps runs a compiled forward, split at DDP's gradient buckets (runtime/ddp_split.py)."""
    if "forward" in ddp.__dict__:
        raise InvalidArgumentError("compile(module): this DistributedDataParallel has a forward set on the "
                                   "instance; compile the module it wraps instead")
    inner = distributed.inner_module(ddp)
    _python_function(type(inner).forward, "compile(DistributedDataParallel)")
    return distributed.compile_ddp(ddp, lambda fn: compiled_function(fn, options),
                                   extra_bases=(_CompiledModuleMixin,), extra={"_orig_mod": ddp})


def compile(fn_or_module=None, *, backend="inductor", fullgraph=False, dynamic=None, cache_limit=None,
            mode=None, options=None):
    """Compile a function or nn.Module: its first call captures a graph, later calls run it when guards hold.

    Args:
        fn_or_module: a Python function, a bound method, a callable object, a `functools.partial` of one of these
            (its arguments are applied to every call), or a torch.nn.Module.
        backend: a backend name (see `backends.list()`) or a callable `backend(gm, example_inputs)`.
        fullgraph: raise `GraphBreakError` instead of running natively where capture has to stop.
        dynamic: the shape policy. None (default): static until a size changes, then that dim is symbolic;
            True: every dim of every input tensor symbolic from the first call; False: all shapes static.
        cache_limit: most compiled variants kept per function; past it new variants run natively.
        mode, options: inductor's mode ("default", "reduce-overhead", "max-autotune") and config overrides.

    Returns:
        A new function (fn is not modified) or a module sharing the original's parameters and state.

    Example:
        >>> opt = jit.compile(model, backend="eager")
        >>> out = opt(x)
    """
    opts = make_options(backend, fullgraph, dynamic, cache_limit, mode, options)
    compile_args = {"backend": backend, "fullgraph": fullgraph, "dynamic": dynamic, "cache_limit": cache_limit,
                    "mode": mode, "options": options}
    if fn_or_module is None:
        return lambda target: _compile_target(target, opts, compile_args)
    return _compile_target(fn_or_module, opts, compile_args)


def _unwrap_dynamo(target):
    """What torch.compile compiled, for a torch.compile'd function or module: the outer compiler wins
    (Note [Nesting with torch.compile] in runtime/install.py). Functions torch._dynamo.disable wrapped stay as they
    are. Dynamo is not imported here: its marks are read statically."""
    eval_frame = sys.modules.get("torch._dynamo.eval_frame")
    optimized = getattr(eval_frame, "OptimizedModule", None)
    while True:
        if optimized is not None and isinstance(target, optimized):
            target = target._orig_mod
            continue
        inner = inspect.getattr_static(target, "_torchdynamo_orig_callable", None)
        if inner is None or inspect.getattr_static(target, "_torchdynamo_disable", False) \
                or inspect.getattr_static(target, "_torchdynamo_wrapper_id", None) != id(target):
            return target
        target = inner


def _compile_target(target, opts, compile_args):
    target = _unwrap_dynamo(target)
    if type(target) is functools.partial:
        # the function underneath is compiled; the partial's arguments are applied to every call, as in Python
        compiled = functools.partial(_compile_target(target.func, opts, compile_args), *target.args,
                                     **target.keywords)
        compiled.__dict__.update(target.__dict__)
        return compiled
    if distributed.is_ddp(target):
        return _compile_ddp(target, opts)
    if isinstance(target, torch.nn.Module):
        return _compile_module(target, opts, compile_args)
    fn, bound = _python_function(target, "compile()")
    compiled = compiled_function(fn, opts)
    if bound is not _MISSING:
        return types.MethodType(compiled, bound)
    return compiled


def register(fn_or_module):
    """Mark a function (its code: every closure made from it too) or a module instance for `enabled()` blocks.

    Nothing changes until a block is entered; the object is returned, so this works as a decorator.
    """
    if type(fn_or_module) is functools.partial:
        # calls through the partial run the function underneath: that function is what gets intercepted
        register(fn_or_module.func)
        return fn_or_module
    if distributed.is_ddp(fn_or_module):
        # DDP's own forward runs natively; the module it wraps is what enabled() blocks compile
        register(distributed.inner_module(fn_or_module))
        return fn_or_module
    if isinstance(fn_or_module, torch.nn.Module):
        forward, _ = _python_function(type(fn_or_module).forward, "register(module)")
        REGISTRY.add_module(fn_or_module, forward)
        INTERCEPTOR.watch_new(forward.__code__)
        return fn_or_module
    fn, _ = _python_function(fn_or_module, "register()")
    REGISTRY.add_function(fn)
    INTERCEPTOR.watch_new(fn.__code__)
    return fn_or_module


def unregister(fn_or_module) -> None:
    if type(fn_or_module) is functools.partial:
        unregister(fn_or_module.func)
        return
    if distributed.is_ddp(fn_or_module):
        unregister(distributed.inner_module(fn_or_module))
        return
    target = fn_or_module if isinstance(fn_or_module, torch.nn.Module) else getattr(fn_or_module, "__func__",
                                                                                   fn_or_module)
    REGISTRY.remove(target)


@contextlib.contextmanager
def enabled(backend=None, *, fullgraph=False, dynamic=None, cache_limit=None, mode=None, options=None):
    """Inside the block, registered functions and modules are captured on their first call and run compiled after.

    Blocks are per thread, like grad mode: calls made on the thread that opened the block run compiled; another
    thread calling the same functions meanwhile runs them natively unless it opens a block of its own. Blocks nest
    (the innermost options apply to functions first seen inside it); once no thread has a block open (left normally
    or by an exception), every function has its original code back.
    """
    opts = make_options(backend, fullgraph, dynamic, cache_limit, mode, options)
    INTERCEPTOR.enter(opts)
    try:
        yield
    finally:
        INTERCEPTOR.exit()


def disable(fn=None):
    """Never trace into fn: a call to it inside compiled code runs natively, and fn itself is never compiled."""
    if fn is None:
        return disable
    if not callable(fn):
        raise InvalidArgumentError(f"disable() needs a callable, got {type(fn).__name__} {fn!r}")
    mark_disabled(fn)
    return fn


def allow_in_graph(fn):
    """Keep calls to fn as one graph node (fn must do tensor work only: it runs on fake tensors while tracing)."""
    if not callable(fn):
        raise InvalidArgumentError(f"allow_in_graph() needs a callable, got {type(fn).__name__} {fn!r}")
    _mark_allowed(fn)
    return fn


def explain(fn, *args, **kwargs):
    """Run fn(*args, **kwargs) once through a fresh compiled copy and report everything jitcore did with it.

    Like torch._dynamo.explain, this *runs* the function once (so its prints and side effects happen), with a
    recording eager backend: the report covers the whole function, including the graphs after each break.

    Args:
        fn: a function, method or nn.Module (its forward), as for compile().
        *args, **kwargs: the call's arguments.

    Returns:
        An ExplainReport: `graph_count`, `graph_break_count`, `break_reasons`, `graphs` (each with its op count
        and readable FX code), `ops_per_graph`, `breaks` (reason, file:line, source, hint), `guards`,
        `compile_time` by phase. It prints as rich text, shows as HTML in a notebook, and `save_html(path)`
        writes one self-contained page.

    Example:
        >>> report = jit.explain(f, torch.randn(4, 8))
        >>> report.graph_break_count, report.breaks[0].hint
    """
    if type(fn) is functools.partial:
        fn, args, kwargs = fn.func, (*fn.args, *args), {**fn.keywords, **kwargs}
    if distributed.is_ddp(fn) or distributed.is_fsdp_managed(fn):
        # their own forward bookkeeping and hooks run natively, as compile() runs them
        return explain_wrapper_call(fn, args, kwargs)
    if isinstance(fn, torch.nn.Module):
        target, bound = _python_function(type(fn).forward, "explain(module)")
        bound = fn
    else:
        target, bound = _python_function(fn, "explain()")
    if bound is not _MISSING:
        args = (bound, *args)
    return explain_call(target, args, kwargs)


def reset() -> None:
    """Drop every cache entry and restore every function swapped by an open enabled() block."""
    for cache in list(ALL_CACHES):
        cache.clear()
    INTERCEPTOR.restore_all()
    resume_fns.clear()
    resume.clear()
    STATS.clear()
    clear_code_caches()
    _console.reset_seen()


