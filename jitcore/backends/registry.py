"""The backend registry: names bound to backends, from this process or from other packages' entry points.

Owns `register_backend`, `lookup`, `list_names`, `tags_of` and `entry_point_errors`; imports neither jitcore nor guards, and
no torch at all, so that `import backends` stays cheap. Other packages add backends through the entry-point group
`jitcore_backends` (see Note [Entry-point backends]).
"""

from __future__ import annotations

import difflib
import functools
import inspect
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from importlib import metadata

__all__ = [
    "AOT_AUTOGRAD",
    "ENTRY_POINT_GROUP",
    "BackendError",
    "EntryPointFailure",
    "UnknownBackendError",
    "entry_point_errors",
    "list_names",
    "lookup",
    "register_backend",
    "tags_of",
]

#: The entry-point group other distributions declare their backends in (`name = "module:function"`).
ENTRY_POINT_GROUP = "jitcore_backends"

#: The tag of a backend that runs AOTAutograd: a front end may mark the graph's parameters and buffers as static
#: inputs for it (as Dynamo does), which AOTAutograd, Inductor and CUDA graphs read.
AOT_AUTOGRAD = "aot_autograd"

#: Backend names: letters, digits, '_', '-' and '.'; no spaces, so that a name reads the same in every message.
_NAME_PATTERN = re.compile(r"[A-Za-z0-9_.\-]+")

#: A backend option check: called with the options given to `lookup`, raises BackendError on a bad value.
OptionsCheck = Callable[..., None]


class BackendError(Exception):
    """A backend cannot be registered, found, configured or used; the message says which and what to do."""


class UnknownBackendError(BackendError, LookupError):
    """`lookup` was given a name that no backend is registered under; the message lists the names that are."""


@dataclass(frozen=True, slots=True)
class EntryPointFailure:
    """One entry point of the `jitcore_backends` group that was skipped, and why.

    `name` is the backend name it declared, `value` its target (`"module:function"`), `reason` a one-line account
    (a name clash, an import error, a target that is not callable).
    """

    name: str
    value: str
    reason: str


@dataclass(frozen=True, slots=True)
class _Backend:
    """One registry row. `fn` is None only for an entry point not loaded yet, and then `entry_point` is set."""

    name: str
    fn: Callable[..., Any] | None
    tags: tuple[str, ...]
    check_options: OptionsCheck | None = None
    entry_point: metadata.EntryPoint | None = None


# Note [Entry-point backends]
# Another distribution declares, in its pyproject.toml,
#     [project.entry-points.jitcore_backends]
#     mybackend = "mypackage.compiler:compile_graph"
# The group is read once, at the first call of register_backend, lookup, list_names or entry_point_errors, and only
# the names are taken then: an entry point's module is imported when its name is looked up, so that listing
# backends or looking up "inductor" never imports plugins nobody asked for. Names bound in this process (the
# built-ins, register_backend) win: an entry point whose name is taken, or is not a valid name, is skipped and
# recorded. One that fails to load is recorded, dropped from list_names, and its lookup raises BackendError.
# Failures are records (entry_point_errors), never warnings: a broken plugin must not make every run noisy.


class _Registry:
    """The table of backends. Invariant: once `_ready`, `_backends` holds every built-in, every entry point not
    skipped and every later registration; a name maps to exactly one backend."""

    def __init__(self, builtins: Mapping[str, _Backend]) -> None:
        #: built-ins, read when the registry becomes ready (they are all registered at `import backends`).
        self._builtins = builtins
        self._backends: dict[str, _Backend] = {}
        self._failures: list[EntryPointFailure] = []
        self._ready = False
        # RLock: loading an entry point imports a module, which may itself call register_backend.
        self._lock = threading.RLock()

    def _ensure_ready(self) -> None:
        """Fill the table with the built-ins and the entry points' names, once (Note [Entry-point backends])."""
        if self._ready:
            return
        with self._lock:
            if self._ready:
                return
            from importlib import metadata  # here, not at the top: it costs more to import than the rest of backends

            self._backends.update(self._builtins)
            for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP):
                self._add_entry_point(entry_point)
            self._ready = True

    def _add_entry_point(self, entry_point: metadata.EntryPoint) -> None:
        name = entry_point.name
        if not _NAME_PATTERN.fullmatch(name):
            self._failures.append(EntryPointFailure(name, entry_point.value, f"{name!r} is not a valid backend name"))
        elif name in self._backends:
            taken_by = self._backends[name].entry_point
            owner = f"entry point {taken_by.value!r}" if taken_by else "a backend registered in this process"
            self._failures.append(EntryPointFailure(name, entry_point.value, f"name {name!r} is taken by {owner}"))
        else:
            self._backends[name] = _Backend(name, None, (), entry_point=entry_point)

    def register(
        self,
        name: str,
        fn: Callable[..., Any],
        tags: tuple[str, ...],
        check_options: OptionsCheck | None,
        replace: bool,
    ) -> None:
        self._ensure_ready()
        with self._lock:
            if name in self._backends and not replace:
                raise BackendError(
                    f"backend {name!r} is already registered; pass replace=True to register_backend to rebind it"
                )
            self._backends[name] = _Backend(name, fn, tags, check_options)

    def get(self, name: str) -> _Backend:
        """The row for `name`, with its entry point loaded; UnknownBackendError if there is none."""
        self._ensure_ready()
        backend = self._backends.get(name)
        if backend is None:
            raise UnknownBackendError(_unknown_name_message(name, self.names(())))
        if backend.fn is None:
            backend = self._load(backend)
        return backend

    def _load(self, backend: _Backend) -> _Backend:
        """Import an entry point's target and bind it; on failure record it, drop the name, raise BackendError."""
        entry_point = backend.entry_point
        assert entry_point is not None, "only entry-point rows are loaded lazily"
        with self._lock:
            if self._backends.get(backend.name) is not backend:  # loaded by another thread, or replaced, meanwhile
                return self.get(backend.name)
            try:
                fn = entry_point.load()
            except Exception as exc:  # a plugin's import-time failure of any kind is reported, with its cause
                self._fail(backend, entry_point, f"loading it raised {type(exc).__name__}: {exc}", exc)
            if not callable(fn):
                self._fail(backend, entry_point, f"its target is a {type(fn).__name__}, not a callable", None)
            loaded = _Backend(backend.name, fn, backend.tags, entry_point=entry_point)
            self._backends[backend.name] = loaded
            return loaded

    def _fail(
        self, backend: _Backend, entry_point: metadata.EntryPoint, reason: str, cause: Exception | None
    ) -> NoReturn:
        self._failures.append(EntryPointFailure(backend.name, entry_point.value, reason))
        del self._backends[backend.name]
        raise BackendError(
            f"backend {backend.name!r} comes from entry point {entry_point.value!r} (group {ENTRY_POINT_GROUP!r}), "
            f"and {reason}; fix or uninstall the package that declares it"
        ) from cause

    def names(self, exclude_tags: Iterable[str]) -> list[str]:
        self._ensure_ready()
        excluded = set(exclude_tags)
        return sorted(name for name, backend in self._backends.items() if excluded.isdisjoint(backend.tags))

    def tags_of(self, backend: str | Callable[..., Any]) -> tuple[str, ...]:
        self._ensure_ready()
        if isinstance(backend, str):
            row = self._backends.get(backend)
            return row.tags if row is not None else ()
        while isinstance(backend, functools.partial):  # what lookup returns for a name given options
            backend = backend.func
        return next((row.tags for row in list(self._backends.values()) if row.fn is backend), ())

    def failures(self) -> list[EntryPointFailure]:
        self._ensure_ready()
        return list(self._failures)


#: Built-in backends, filled by `_builtin` when backends/__init__.py imports the modules that define them.
_BUILTINS: dict[str, _Backend] = {}

#: The process-wide registry behind the public functions (tests swap in a fresh `_Registry(_BUILTINS)`).
_registry = _Registry(_BUILTINS)


def _builtin(
    name: str, *, tags: tuple[str, ...] = (), check_options: OptionsCheck | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator for the backends shipped in this package: they are bound before any entry point."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        _BUILTINS[name] = _Backend(name, fn, tags, check_options)
        return fn

    return decorate


def register_backend(
    name: str,
    fn: Callable[..., Any] | None = None,
    *,
    tags: Iterable[str] = (),
    check_options: OptionsCheck | None = None,
    replace: bool = False,
) -> Any:
    """Bind `name` to the backend `fn`; without `fn`, return a decorator that does so and returns the function.

    Args:
        name: the name `lookup` will find it by: letters, digits, '_', '-' or '.'.
        fn: a callable `fn(gm, example_inputs, **options) -> compiled`, where `compiled(*inputs)` returns what
            `gm(*inputs)` returns. Its keyword parameters after the first two are the options `lookup` accepts.
        tags: labels such as "debug", which `list_names(exclude_tags=...)` can leave out, and traits a front end
            reads through `tags_of`: `AOT_AUTOGRAD` ("aot_autograd") says the backend runs AOTAutograd.
        check_options: called as `check_options(**options)` by `lookup` when options are given; it raises
            BackendError for a bad value, so that mistakes show at lookup time and not at the first compile.
        replace: rebind a name that is already bound (a built-in, an entry point or an earlier registration).
            Without it, registering a taken name raises BackendError.

    Returns:
        `fn` when it is given; otherwise a decorator.

    Example:
        >>> @register_backend("print_graph", tags=("debug",))
        ... def print_graph(gm, example_inputs):
        ...     gm.graph.print_tabular()
        ...     return gm.forward
    """
    if not isinstance(name, str) or not _NAME_PATTERN.fullmatch(name):
        raise BackendError(
            "register_backend: name must be a non-empty str of letters, digits, '_', '-' or '.', "
            f"got {name!r} ({type(name).__name__})"
        )
    tag_tuple = _validate_tags(tags)
    if check_options is not None and not callable(check_options):
        raise BackendError(
            f"register_backend: check_options must be callable or None, got {type(check_options).__name__}"
        )

    def decorate(backend_fn: Callable[..., Any]) -> Callable[..., Any]:
        if not callable(backend_fn):
            raise BackendError(
                f"register_backend: backend {name!r} must be callable as fn(gm, example_inputs), "
                f"got {type(backend_fn).__name__}"
            )
        _registry.register(name, backend_fn, tag_tuple, check_options, replace)
        return backend_fn

    return decorate if fn is None else decorate(fn)


def _validate_tags(tags: Iterable[str]) -> tuple[str, ...]:
    if isinstance(tags, str):  # a bare str would otherwise become one tag per character
        raise BackendError(f"register_backend: tags must be an iterable of str, got the str {tags!r}; use ({tags!r},)")
    tag_tuple = tuple(tags)
    bad = [tag for tag in tag_tuple if not isinstance(tag, str) or not tag]
    if bad:
        raise BackendError(f"register_backend: each tag must be a non-empty str, got {bad!r}")
    return tag_tuple


def lookup(backend: str | Callable[..., Any], **options: Any) -> Callable[..., Any]:
    """The backend callable for a registered name, with `options` bound; a callable is returned as it is.

    Args:
        backend: a registered name (see `list_names`) or a backend callable `fn(gm, example_inputs)`.
        **options: keyword options of a named backend (for "inductor": `mode`, `options`), checked now and bound
            with functools.partial. Not allowed with a callable: bind those yourself.

    Returns:
        `compile(gm, example_inputs) -> compiled`.

    Raises:
        UnknownBackendError: no backend has that name; the message suggests the closest one.
        BackendError: options the backend does not take or rejects, a failing entry point, or a `backend` that is
            neither a str nor a callable.

    Example:
        >>> compile_graph = lookup("inductor", mode="max-autotune-no-cudagraphs")
    """
    if isinstance(backend, str):
        row = _registry.get(backend)
        if not options:
            return row.fn
        _check_option_names(row, options)
        if row.check_options is not None:
            row.check_options(**options)
        return functools.partial(row.fn, **options)
    if callable(backend):
        if options:
            raise BackendError(
                f"lookup: options ({', '.join(sorted(options))}) are only accepted with a backend name; "
                f"bind them into the callable {_callable_name(backend)} yourself (functools.partial)"
            )
        return backend
    raise BackendError(
        f"lookup: backend must be a registered name (str) or a callable fn(gm, example_inputs), "
        f"got {type(backend).__name__}; registered names: {', '.join(_registry.names(()))}"
    )


def _check_option_names(row: _Backend, options: Mapping[str, Any]) -> None:
    """Raise BackendError naming the options that `row.fn` has no keyword parameter for."""
    try:
        parameters = list(inspect.signature(row.fn).parameters.values())[2:]  # after gm, example_inputs
    except (TypeError, ValueError):  # no signature to read (some C callables): the backend itself will judge
        return
    if any(parameter.kind is inspect.Parameter.VAR_KEYWORD for parameter in parameters):
        return
    keyword_kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    accepted = [parameter.name for parameter in parameters if parameter.kind in keyword_kinds]
    unknown = sorted(set(options) - set(accepted))
    if not unknown:
        return
    takes = f"it takes: {', '.join(accepted)}" if accepted else "it takes no options"
    raise BackendError(f"backend {row.name!r} got unknown option(s) {', '.join(map(repr, unknown))}; {takes}")


def _unknown_name_message(name: str, available: list[str]) -> str:
    close = difflib.get_close_matches(name, available, n=1)
    suggestion = f"did you mean {close[0]!r}? " if close else ""
    return (
        f"unknown backend {name!r}; {suggestion}available: {', '.join(available)} "
        "(or register one with backends.register_backend)"
    )


def _callable_name(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__qualname__", None) or type(fn).__name__


def list_names(*, exclude_tags: Iterable[str] = ()) -> list[str]:
    """Sorted names of every backend `lookup` can find: built-ins, registrations and declared entry points.

    Backends carrying one of `exclude_tags` are left out (`exclude_tags=("debug",)` hides eager and aot_eager).
    """
    return _registry.names(exclude_tags)


def tags_of(backend: str | Callable[..., Any]) -> tuple[str, ...]:
    """The tags of a registered backend, given its name or the callable `lookup` returned for it (options bound
    or not); () for a name nobody registered, an entry point not loaded yet, or a callable of no registration.

    Example:
        >>> AOT_AUTOGRAD in tags_of(lookup("inductor", mode="reduce-overhead"))
        True
    """
    return _registry.tags_of(backend)


def entry_point_errors() -> list[EntryPointFailure]:
    """The entry points of the `jitcore_backends` group that were skipped or failed to load, in order."""
    return _registry.failures()
