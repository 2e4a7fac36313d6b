"""jitcore/guards/ stays a leaf package: it imports the standard library, torch and itself, never jitcore or bytecode."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from jitcore import guards

ALLOWED = set(sys.stdlib_module_names) | {"torch"}


def _top(module: str) -> str:
    """The top-level package a module belongs to; jitcore.guards counts as its own package."""
    return "jitcore.guards" if module.startswith("jitcore.guards") else module.split(".")[0]


def _imported_top_modules(source: str) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules |= {_top(alias.name) for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            modules.add(_top(node.module))
    return modules


def test_guards_imports_only_stdlib_torch_and_itself():
    for path in Path(guards.__file__).parent.glob("*.py"):
        assert _imported_top_modules(path.read_text()) <= ALLOWED | {"jitcore.guards"}, path.name


def test_every_public_name_is_exported():
    assert all(hasattr(guards, name) for name in guards.__all__)
    assert {"GuardTree", "compile_tree", "GuardFunction", "TensorMatch", "count_checks"} <= set(guards.__all__)
