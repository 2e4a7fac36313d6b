"""jitcore's one configuration object and the parsing of its environment variables.

All configuration goes through here (nothing else reads os.environ). `config` is the live instance; `jit.config.log`
and friends are set by users, `JITCORE_*` variables seed it at import.
"""
from __future__ import annotations

import dataclasses
import os

from jitcore.errors import InvalidArgumentError

__all__ = ["Config", "config", "LOG_TOPICS", "parse_log"]

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

    def __setattr__(self, name, value):
        if name == "log":
            value = parse_log(value)
        elif name == "cache_limit" and (type(value) is not int or value < 1):
            raise InvalidArgumentError(f"config.cache_limit must be a positive int, got {value!r}")
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
        return cfg


config = Config.from_environ()
