"""Auto-enable's discovery: one *global* PY_START callback that gives the user's tensor functions the dispatch prologue.

jitcore.autoenable (JITCORE=1, `python -m jitcore run`) arms it with the compile options to use. The callback
runs on a sys.monitoring tool id of its own (not the one enabled() blocks use), armed once, and the first call of
each code object decides: the user's code (Note [Only the user's code]) whose arguments hold a tensor or an
nn.Module gets the dispatch prologue, captured from this call's arguments as in enabled(): this call runs natively,
later calls run compiled. Everything else gets DISABLE (on this tool id only) and costs nothing after.
Entry points: `AUTO` (the process-wide `AutoEnabler`: `start(options)`, `stop()`, `caches()`), `original_code(fn)`.

Note [Only the user's code]: a function is the user's when
- its code comes from a source file outside the standard library, site-packages, torch and jitcore, or was
  compiled in the `__main__` module itself (`python -c`, stdin, an exec() with the script's globals); code made
  by libraries at run time (`<string>`: namedtuple and dataclass methods, torch's `return_type` and
  `ArgsKwargsPair` constructors) never is;
- it is a plain function or method (not a generator, coroutine or class body; no dunder but `__call__`);
- neither jit.disable nor torch (`torch._dynamo.disable`, `torch._disable_dynamo`) marks it not-to-compile, and
  it is not called inside a region torch keeps uncompiled (below a `torch._dynamo.disable` wrapper);
- the call is not one jitcore or torch makes on its own behalf: nothing is decided while this thread captures or
  compiles, or while torch dispatches to a Python mode (FakeTensor, a TorchDispatchMode), or when jitcore's own
  code is the caller.
Inside captured code the same line is drawn by capture: torch's own machinery (`torch_rules.is_torch_runtime`)
is never traced or given a compiled copy, and a user function that already runs a prologue is inlined through it.
"""
from __future__ import annotations

import atexit
import inspect
import os
import site
import sys
import sysconfig
import threading
import weakref

import torch

from jitcore import events
from jitcore.capture.prologues import wraps
from jitcore.codegen.native_calls import made_here
from jitcore.codegen.resume import resume_origin
from jitcore.config import config
from jitcore.marks import TORCH_DISABLE_WRAPPERS, is_disabled
from jitcore.runtime.cache import compiling_here
from jitcore.runtime.install import new_cache
from jitcore.runtime.monitor import frame_function
from jitcore.runtime.prologue import FALLTHROUGH, build_prologue_code

__all__ = ["original_code", "AUTO", "AutoEnabler"]

_MON = sys.monitoring
_PY_START = _MON.events.PY_START
#: tool ids auto-enable may take; OPTIMIZER_ID stays free for the Monitor of enabled() blocks
_TOOL_IDS = (4, 3)
_NOT_PLAIN = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE
#: dunder methods are called by Python's machinery (construction, repr, attribute hooks), never hot tensor code
_DUNDERS_KEPT = frozenset({"__call__"})
#: filenames of code compiled from a string; the user's only when compiled in __main__ (`python -c`, stdin)
_MAIN_FILENAMES = frozenset({"<string>", "<stdin>"})


def _main_globals():
    main = sys.modules.get("__main__")
    return getattr(main, "__dict__", None)


def _inside_torch_disable(frame) -> bool:
    """A frame below a torch disable wrapper: `torch._dynamo.disable` keeps everything it calls uncompiled."""
    frame = frame.f_back
    while frame is not None:
        code = frame.f_code
        if (code.co_filename, code.co_qualname) in TORCH_DISABLE_WRAPPERS:
            return True
        frame = frame.f_back
    return False


def _library_roots() -> tuple:
    """Directories whose code is never user code: the standard library, site-packages, torch and jitcore."""
    roots = set()
    for scheme_vars in ({}, {"base": sys.base_prefix, "platbase": sys.base_exec_prefix}):
        paths = sysconfig.get_paths(vars=scheme_vars) if scheme_vars else sysconfig.get_paths()
        roots.update(paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths)
    roots.update(getattr(site, "getsitepackages", lambda: [])())
    user_site = getattr(site, "getusersitepackages", lambda: None)()
    if isinstance(user_site, str):
        roots.add(user_site)
    roots.update(_package_roots("torch"))
    return tuple(sorted({os.path.join(os.path.realpath(root), "") for root in roots if root}))


def _package_roots(*extra: str) -> tuple:
    """The directories of jitcore's own packages (an editable install keeps them outside site-packages)."""
    roots = []
    for name in ("jitcore", *extra):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__file__", None):
            roots.append(os.path.join(os.path.dirname(os.path.realpath(module.__file__)), ""))
    return tuple(roots)


class AutoEnabler:
    """The process-wide discovery tool. `installed` maps each function given a prologue to its original code."""

    def __init__(self):
        self.tool_id: int | None = None
        self.options = None
        self.installed: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
        #: code -> (cache, prologue code): one cache per code object, shared by its closures
        self._prologues: dict = {}
        self._roots: tuple = ()
        #: filename prefixes of jitcore's own code, whose calls into user code are not the user's first calls
        self._own: tuple = ("<jitcore",)
        self._lock = threading.RLock()
        self._tensor_types: tuple = ()
        #: filename -> whether it is user code (the check resolves links, so it is remembered)
        self._files: dict = {}
        #: first calls looked at, and prologues installed (the CLI summary and tests read them)
        self.seen = 0
        self.installs = 0

    @property
    def active(self) -> bool:
        return self.tool_id is not None

    def start(self, options) -> None:
        """Arm the global PY_START callback, compiling with `options` (runtime Options; once: later calls change
        nothing)."""
        with self._lock:
            if self.active:
                return
            self.options = options
            self._tensor_types = (torch.Tensor, torch.nn.Module)
            self._roots = _library_roots()
            self._own = ("<jitcore", *_package_roots())
            for candidate in _TOOL_IDS:
                if _MON.get_tool(candidate) is None:
                    _MON.use_tool_id(candidate, "jitcore-autoenable")
                    self.tool_id = candidate
                    break
            else:
                events.emit("fallbacks", "JITCORE=1: no free sys.monitoring tool id, so nothing is compiled "
                            "automatically", always=True)
                return
            _MON.register_callback(self.tool_id, _PY_START, self._callback)
            _MON.set_events(self.tool_id, _PY_START)  # global, once for the whole process (DESIGN §8)
            # disarm before interpreter shutdown: code first run while modules are torn down must not reach us
            atexit.register(self._disarm_at_exit)

    def _disarm_at_exit(self) -> None:
        with self._lock:
            if self.active:
                _MON.set_events(self.tool_id, 0)
                _MON.register_callback(self.tool_id, _PY_START, None)

    def stop(self) -> None:
        """Disarm and give every function its original code back (tests; the CLI never needs it)."""
        with self._lock:
            if not self.active:
                return
            _MON.set_events(self.tool_id, 0)
            _MON.register_callback(self.tool_id, _PY_START, None)
            _MON.free_tool_id(self.tool_id)
            self.tool_id = None
            for fn, code in list(self.installed.items()):
                fn.__code__ = code
            self.installed.clear()
            self._prologues.clear()

    # -- the callback -----------------------------------------------------------------------------------------
    def _callback(self, code, offset):
        if not self._may_be_user_code(code):
            return _MON.DISABLE
        frame = sys._getframe(1)
        if code.co_filename.startswith("<") and frame.f_globals is not _main_globals():
            return _MON.DISABLE  # made at run time by a library (a namedtuple's __new__, a dataclass's __init__)
        if self._on_behalf_of_jitcore_or_torch(frame):
            return None  # decide when the user calls it
        self.seen += 1
        try:
            if not self._holds_tensors(frame, code):
                return _MON.DISABLE
            if _inside_torch_disable(frame) or self._below_a_first_call(frame):
                return None  # decide on a later call
            self._install(code, frame)
        except Exception as exc:
            if config.strict:
                raise  # JITCORE_STRICT=1: jitcore's own errors reach the program
            # never let discovery abort the user's call
            events.emit("fallbacks", f"JITCORE=1: internal error while compiling {code.co_qualname}: "
                        f"{type(exc).__name__}: {exc}; it runs natively", key=("autoenable", code), always=True)
            return _MON.DISABLE
        # closures re-created per call share this code: keep looking at new instances
        return None if code.co_freevars else _MON.DISABLE

    def _on_behalf_of_jitcore_or_torch(self, frame) -> bool:
        """The call is jitcore's (capture or a backend at work on this thread; a compiled copy falling back to the
        original, capture reading a property) or torch's own dispatch to Python (FakeTensor, dispatch modes)."""
        if compiling_here():
            return True
        caller = frame.f_back
        if caller is not None and caller.f_code.co_filename.startswith(self._own):
            return True
        return torch._C._len_torch_dispatch_stack() > 0 \
            or torch._C._dispatch_tls_is_dispatch_key_excluded(torch._C.DispatchKey.Python)

    def _below_a_first_call(self, frame) -> bool:
        """Called (at any depth) from the native first call of a function given a prologue at that call, whose
        capture made one whole graph: every call it makes was inlined into that graph, so compiling this one on its
        own now would only be thrown away. Where that capture broke (a loop over a DataLoader, a print), the calls
        after the break run in Python later too, and are decided now. (A native run through the prologue, past the
        cache limit say, runs the prologue code, not the original.)"""
        prologues = self._prologues
        frame = frame.f_back
        while frame is not None:
            found = prologues.get(frame.f_code)
            if found is not None:
                entries = found[0].entries
                return bool(entries) and all(not entry.native and entry.break_reason is None for entry in entries)
            frame = frame.f_back
        return False

    def _may_be_user_code(self, code) -> bool:
        filename = code.co_filename
        if filename.startswith("<") and filename not in _MAIN_FILENAMES:
            return False  # frozen modules, fx and jitcore generated code
        if code.co_flags & _NOT_PLAIN or code.co_name == "<module>":
            return False
        name = code.co_name
        if name.startswith("__") and name.endswith("__") and name not in _DUNDERS_KEPT:
            return False
        if any(const is FALLTHROUGH for const in code.co_consts):
            return False  # a prologue jitcore built (compiled copies, resume functions)
        if resume_origin(code)[1] is not None or made_here(code):
            # a resume or step code running natively (its stub already dispatched), or a frame run natively
            # because of a break inside a loop (its entry already dispatched)
            return False
        known = self._files.get(filename)
        if known is None:
            path = os.path.realpath(filename) if not filename.startswith("<") else filename
            known = self._files[filename] = not path.startswith(self._roots)
        return known

    def _holds_tensors(self, frame, code) -> bool:
        """True when an argument is a tensor or module, or a list/tuple/dict holding one near its front."""
        kinds = self._tensor_types
        count = code.co_argcount + code.co_kwonlyargcount
        count += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
        f_locals = frame.f_locals
        for name in code.co_varnames[:count]:
            value = f_locals.get(name)
            if isinstance(value, kinds):
                return True
            if type(value) in (list, tuple):
                items = value[:8]
            elif type(value) is dict:
                items = list(value.values())[:8]
            else:
                continue
            if any(isinstance(item, kinds) for item in items):
                return True
        return False

    def _install(self, code, frame) -> None:
        fn = frame_function(frame)
        if fn is None or fn.__code__ is not code or is_disabled(fn):
            return
        with self._lock:
            found = self._prologues.get(code)
            if found is None:
                cache = new_cache(code, fn.__globals__, self.options)
                found = self._prologues[code] = (cache, build_prologue_code(code, cache.dispatch))
            cache, prologue = found
            f_locals = frame.f_locals
            args = tuple(f_locals[name] for name in cache.params if name in f_locals)
            if len(args) == len(cache.params):
                cache.prepare(args, fn.__closure__)
            self.installed[fn] = code
            wraps(prologue, code)  # a caller being captured inlines fn's own body, not the prologue
            fn.__code__ = prologue
            self.installs += 1

    def caches(self) -> list:
        return [cache for cache, _ in self._prologues.values()]


AUTO = AutoEnabler()


def original_code(fn):
    """The code `fn` had before auto-enable gave it a prologue, or None when auto-enable never touched it."""
    return AUTO.installed.get(fn)
