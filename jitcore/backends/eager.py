"""The `eager` backend: run the captured GraphModule as it is, with no compiler in between.

For debugging capture apart from compilation. Imports nothing from torch at import time; never jitcore or guards.
Entry point: `eager`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .registry import _builtin

if TYPE_CHECKING:
    import torch.fx

__all__ = ["eager"]


@_builtin("eager", tags=("debug",))
def eager(gm: torch.fx.GraphModule, example_inputs: Sequence[Any]) -> Callable[..., Any]:
    """Return `gm.forward`, the graph's generated code: the shortest call path (no `Module.__call__` hooks)."""
    return gm.forward
