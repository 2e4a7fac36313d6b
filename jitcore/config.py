"""jitcore's one configuration object and the parsing of its environment variables.

All configuration goes through here (nothing else reads os.environ). `config` is the live instance; `jit.config.log`
and friends are set by users, `JITCORE_*` variables seed it at import. Every field checks what it is given (an
unknown name is refused too); backend names are checked by the registry, which jitcore.api hands in
(`check_backends_with`). A bad `JITCORE_*` value under `JITCORE=1` prints one line and stops the process (exit 2).
"""
from __future__ import annotations

import dataclasses
import os
import sys

from jitcore.errors import InvalidArgumentError, JitError

__all__ = ["Config", "config", "LOG_TOPICS", "LOOP_BREAKS", "parse_log", "check_backends_with", "refuse_environment"]

#: What `JITCORE_LOOP_BREAKS` / `config.loop_breaks` may be
LOOP_BREAKS = ("native", "resume")

#: What `JITCORE_LOG` / `config.log` may select; "all" selects every topic.
LOG_TOPICS = ("recompiles", "breaks", "guards", "graphs", "fallbacks", "distributed")


def parse_log(value) -> frozenset:
    """Turn 'recompiles,breaks' / an iterable of topics into a frozenset; a bad topic is a clear error."""
    if value is None or value == "":
        return frozenset()
    items = value.split(",") if isinstance(value, str) else list(value)
    topics = set()
    for item in items:
        if not isinstance(item, str):
            raise InvalidArgumentError(f"log topics must be strings, got {type(item).__name__} {item!r}")
        item = item.strip().lower()
        if not item:
            continue
        if item == "all":
            topics.update(LOG_TOPICS)
        elif item in LOG_TOPICS:
            topics.add(item)
        else:
            raise InvalidArgumentError(
                f"unknown JITCORE_LOG topic {item!r}; valid topics are: {', '.join(LOG_TOPICS)}, all")
    return frozenset(topics)


def _env_flag(name: str, environ) -> bool:
    raw = environ.get(name, "")
    if raw.strip().lower() in ("", "0", "false", "no", "off"):
        return False
    if raw.strip().lower() in ("1", "true", "yes", "on"):
        return True
    raise InvalidArgumentError(f"{name} must be 0 or 1 (or true/false), got {raw!r}")


@dataclasses.dataclass
class Config:
    """Process-wide settings. Per-call options (backend, fullgraph, cache_limit) live on each compile() instead."""

    #: backend used by `enabled()` and auto-enable when none is named
    backend: str = "inductor"
    #: topics the console prints (see LOG_TOPICS)
    log: frozenset = frozenset()
    #: raise internal errors and backend failures instead of falling back to native execution
    strict: bool = False
    #: check each interpreted step's stack effect against its handler's declared signature, and each signature
    #: once against dis.stack_effect (JITCORE_DEBUG=1; tests/conftest.py turns it on for every test run)
    debug_checks: bool = False
    #: default recompile limit per function
    cache_limit: int = 8
    #: JITCORE=1: compile user functions that take tensors or modules, process-wide (jitcore/autoenable.py)
    autoenable: bool = False
    #: backend of auto-enable: JITCORE_BACKEND when set, else "eager", which starts in milliseconds where
    #: inductor spends seconds per graph (a JITCORE=1 run is first of all a way to see what jitcore captures)
    autoenable_backend: str = "eager"
    #: a graph break inside a loop (JITCORE_LOOP_BREAKS): "native" runs the frame holding the loop natively with
    #: the functions it calls compiled, as torch.compile does (a torch.nn container of more than two user layers
    #: resumes); "resume" resumes every such loop in graphs. Read when a frame is captured (Note [Breaks inside
    #: loops], capture/loop_breaks.py)
    loop_breaks: str = "native"

    def __setattr__(self, name, value):
        if name not in _FIELDS:
            raise InvalidArgumentError(f"jit.config has no setting {name!r}; the settings are: "
                                       f"{', '.join(sorted(_FIELDS))}")
        if name == "log":
            value = parse_log(value)
        elif name == "cache_limit" and (type(value) is not int or value < 1):
            raise InvalidArgumentError(f"config.cache_limit must be a positive int, got {value!r}")
        elif name in _FLAGS and type(value) is not bool:
            raise InvalidArgumentError(f"config.{name} must be True or False, got {value!r}")
        elif name in _BACKENDS:
            _check_backend(name, value)
        elif name == "loop_breaks" and value not in LOOP_BREAKS:
            raise InvalidArgumentError(f"config.loop_breaks must be one of {', '.join(map(repr, LOOP_BREAKS))}, "
                                       f"got {value!r}")
        super().__setattr__(name, value)

    @classmethod
    def from_environ(cls, environ=None) -> "Config":
        environ = os.environ if environ is None else environ
        cfg = cls()
        if environ.get("JITCORE_BACKEND"):
            cfg.backend = environ["JITCORE_BACKEND"]
            cfg.autoenable_backend = environ["JITCORE_BACKEND"]
        cfg.log = environ.get("JITCORE_LOG", "")
        cfg.strict = _env_flag("JITCORE_STRICT", environ)
        cfg.debug_checks = _env_flag("JITCORE_DEBUG", environ)
        cfg.autoenable = _env_flag("JITCORE", environ)
        if environ.get("JITCORE_LOOP_BREAKS"):
            cfg.loop_breaks = environ["JITCORE_LOOP_BREAKS"].strip().lower()
        return cfg


_FIELDS = frozenset(field.name for field in dataclasses.fields(Config))
_FLAGS = frozenset({"strict", "debug_checks", "autoenable"})
_BACKENDS = frozenset({"backend", "autoenable_backend"})
#: `check(name)` raising InvalidArgumentError for a backend name nobody registered; None until jitcore.api is
#: imported (config is a leaf: it cannot ask the registry itself)
_backend_check = None


def _check_backend(field: str, value) -> None:
    if isinstance(value, str):
        if not value.strip():
            raise InvalidArgumentError(f"config.{field} must name a backend, got an empty string")
        if _backend_check is not None:
            _backend_check(value)
    elif not callable(value):
        raise InvalidArgumentError(f"config.{field} must be a backend name or a backend function, got "
                                   f"{type(value).__name__} {value!r}")


def check_backends_with(check) -> None:
    """Check backend names with `check(name)` from now on, and the ones already set (JITCORE_BACKEND) now."""
    global _backend_check
    _backend_check = check
    for field in sorted(_BACKENDS):
        value = getattr(config, field)
        try:
            _check_backend(field, value)
        except JitError as exc:
            raw = os.environ.get("JITCORE_BACKEND")
            if raw and raw == value:
                refuse_environment(type(exc)(f"JITCORE_BACKEND={raw}: {exc}"))
            raise


def refuse_environment(exc: JitError):
    """A `JITCORE_*` variable holds a bad value. Under JITCORE=1 the whole run was asked to be compiled: say so in
    one line and stop with exit status 2, as `python -m jitcore run` does for a bad option. Otherwise raise it.

    The .pth start-up hook imports jitcore while site.py processes its lines: site reports any exception with a
    traceback and goes on without jitcore, and SystemExit there is a fatal error of the interpreter, so the line is
    written and the process leaves with os._exit (nothing of the user's program has run yet)."""
    try:
        requested = _env_flag("JITCORE", os.environ)
    except InvalidArgumentError:
        requested = True
    if not requested:
        raise exc
    sys.stderr.write(f"JITCORE=1: error: {exc}\n")
    sys.stderr.flush()
    if _inside_site_startup():
        sys.stdout.flush()
        os._exit(2)
    raise SystemExit(2)


def _inside_site_startup() -> bool:
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "addpackage" and frame.f_globals.get("__name__") == "site":
            return True
        frame = frame.f_back
    return False


try:
    config = Config.from_environ()
except InvalidArgumentError as _exc:
    refuse_environment(_exc)
