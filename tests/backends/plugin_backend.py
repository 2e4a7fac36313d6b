"""A backend that tests declare as an entry point of the `jitcore_backends` group (see test_entry_points.py).

It stands for another distribution's plugin module: tests check when it gets imported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["NOT_CALLABLE", "compile_graph"]

#: an entry-point target that is not a backend.
NOT_CALLABLE = 42


def compile_graph(gm: Any, example_inputs: list[Any], *, level: int = 0) -> Callable[..., Any]:
    """Run the graph as it is; `level` is an option, so that lookup's option check has something to read."""
    return gm.forward
