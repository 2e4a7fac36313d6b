"""Backends for jitcore: what turns a captured torch.fx GraphModule into a callable, and the registry naming them.

A backend is `backend(gm, example_inputs, **options) -> compiled`, as for torch.compile; `compiled(*inputs)` returns
what `gm(*inputs)` returns. Built in: eager, aot_eager, inductor, cudagraphs. Imports neither jitcore nor guards,
and no torch until a backend compiles. Entry points: `lookup`, `register_backend`, `list`, `tags_of`.
"""

from . import aot, cudagraphs, eager, inductor  # noqa: F401  (importing them registers the built-ins)
from .registry import (
    AOT_AUTOGRAD,
    ENTRY_POINT_GROUP,
    BackendError,
    EntryPointFailure,
    UnknownBackendError,
    entry_point_errors,
    lookup,
    register_backend,
    tags_of,
)
from .registry import list_names as list  # noqa: A004  (the public name is backends.list, as DESIGN.md §6 has it)

__all__ = [
    "AOT_AUTOGRAD",
    "ENTRY_POINT_GROUP",
    "BackendError",
    "EntryPointFailure",
    "UnknownBackendError",
    "entry_point_errors",
    "list",
    "lookup",
    "register_backend",
    "tags_of",
]
