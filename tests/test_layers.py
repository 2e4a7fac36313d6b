"""The import rules between jitcore's layers, checked on the source of every module of jitcore/ (jitcore/guards/ and jitcore/backends/ included).

Each module belongs to one layer, and a layer imports only the layers below it (docs/architecture.md):

    leaf     jitcore.errors, jitcore.config, jitcore.events, jitcore.marks: nothing of jitcore but each other
    jitcore.guards, jitcore.backends: nothing of jitcore but each other
    capture  -> leaf, guards, backends
    codegen  -> leaf, guards, capture
    runtime  -> leaf, guards, backends, capture, codegen
    report   -> leaf, guards, capture, codegen
    top      (jitcore/__init__, api, __main__, demo and every other module directly in jitcore/) -> anything

Every import counts: at module level, inside functions, under `if TYPE_CHECKING:`, relative ones resolved, and
`importlib.import_module` / `__import__` calls with a literal name. An import of jitcore, guards or backends
written inside a function must say why on its line or the line above with `# lazy: <why>` (it keeps a heavy or
optional module off start-up); an inner import that only dodges a cycle is a design smell, restructure instead.
"""
from __future__ import annotations

import ast
import dataclasses
import pathlib
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = ("jitcore",)
LEAF_MODULES = frozenset({"jitcore.errors", "jitcore.config", "jitcore.events", "jitcore.marks"})
#: the layers each layer may import (its own included)
ALLOWED = {
    "leaf": {"leaf"},
    "guards": {"guards", "backends"},
    "backends": {"guards", "backends"},
    "capture": {"leaf", "guards", "backends", "capture"},
    "codegen": {"leaf", "guards", "capture", "codegen"},
    "runtime": {"leaf", "guards", "backends", "capture", "codegen", "runtime"},
    "report": {"leaf", "guards", "capture", "codegen", "report"},
    "top": {"leaf", "guards", "backends", "capture", "codegen", "runtime", "report", "top"},
}
LAZY_MARK = "# lazy:"

#: Modules (and packages: every module under them) still allowed inner imports of jitcore without `# lazy:`.
#: Empty since capture/values lost its last ones; an entry that is no longer needed fails
#: test_the_pending_list_only_names_modules_that_still_need_it, so the list can only shrink.
PENDING_INNER_IMPORTS = frozenset()


@dataclasses.dataclass(frozen=True)
class Import:
    """One imported module: its absolute name, where the statement is, and whether it runs inside a function."""
    target: str
    lineno: int
    end_lineno: int
    in_function: bool


def layer_of(module: str) -> str | None:
    """The layer of a module of jitcore, guards or backends; None for any other module (torch, rich, ...)."""
    parts = module.split(".")
    if parts[0] != "jitcore":
        return None
    if module in LEAF_MODULES:
        return "leaf"
    if len(parts) > 1 and parts[1] in ("guards", "backends", "capture", "codegen", "runtime", "report"):
        return parts[1]
    return "top"


def module_files() -> dict:
    """module name -> (path, is a package's __init__) for every module of the three packages."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            found[".".join(parts)] = (path, is_package)
    return found


KNOWN_MODULES = frozenset(module_files())


def _absolute(module: str, is_package: bool, level: int, name: str | None) -> str:
    """The absolute name of `from <level dots><name> import ...` written in `module`."""
    if level == 0:
        return name or ""
    base = module.split(".")
    if not is_package:
        base.pop()
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def imports_of(source: str, module: str, is_package: bool = False) -> list:
    """Every module the source imports, `from pkg import sub` naming the submodule when there is one."""
    tree = ast.parse(source)
    found = []

    def visit(node, in_function: bool) -> None:
        if isinstance(node, ast.Import):
            found.extend(Import(alias.name, node.lineno, node.end_lineno, in_function) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, is_package, node.level, node.module)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.append(Import(sub if sub in KNOWN_MODULES else base, node.lineno, node.end_lineno,
                                    in_function))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str) and _is_dynamic_import(node.func):
            found.append(Import(node.args[0].value, node.lineno, node.end_lineno, in_function))
        inner = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(tree, False)
    return list(dict.fromkeys(found))  # `from m import a, b` imports m once


def _is_dynamic_import(func) -> bool:
    if isinstance(func, ast.Name):
        return func.id in ("__import__", "import_module")
    return isinstance(func, ast.Attribute) and func.attr == "import_module"


def _is_pending(module: str) -> bool:
    return any(module == name or module.startswith(name + ".") for name in PENDING_INNER_IMPORTS)


def _has_lazy_mark(lines: list, imp: Import) -> bool:
    """A `# lazy:` comment on a line of the statement, or alone on the line above it."""
    above = lines[imp.lineno - 2].strip() if imp.lineno > 1 else ""
    return above.startswith(LAZY_MARK) or any(LAZY_MARK in line for line in lines[imp.lineno - 1: imp.end_lineno])


def layer_violations(module: str, source: str, is_package: bool = False) -> list:
    """'module:line imports target (layer a -> layer b)' for each import the layer rules forbid."""
    own = layer_of(module)
    problems = []
    for imp in imports_of(source, module, is_package):
        target = layer_of(imp.target)
        if target is not None and target not in ALLOWED[own]:
            problems.append(f"{module}:{imp.lineno} imports {imp.target} ({own} -> {target})")
    return problems


def unmarked_inner_imports(module: str, source: str, is_package: bool = False) -> list:
    """'module:line imports target inside a function' for each such import of ours without a `# lazy:` reason."""
    lines = source.splitlines()
    return [f"{module}:{imp.lineno} imports {imp.target} inside a function without '{LAZY_MARK} <why>'"
            for imp in imports_of(source, module, is_package)
            if imp.in_function and layer_of(imp.target) is not None and not _has_lazy_mark(lines, imp)]


def _sources():
    for module, (path, is_package) in sorted(module_files().items()):
        yield module, path.read_text(encoding="utf-8"), is_package


# -- the rules, on the real tree --------------------------------------------------------------------------------
def test_every_module_belongs_to_a_layer():
    assert len(KNOWN_MODULES) > 50
    assert all(layer_of(module) is not None for module in KNOWN_MODULES)
    assert all(module in KNOWN_MODULES for module in LEAF_MODULES)


def test_every_import_keeps_the_layer_rules():
    problems = [p for module, source, is_package in _sources()
                for p in layer_violations(module, source, is_package)]
    assert problems == []


def test_imports_inside_functions_say_why_they_are_lazy():
    problems = [p for module, source, is_package in _sources() if not _is_pending(module)
                for p in unmarked_inner_imports(module, source, is_package)]
    assert problems == []


def test_the_pending_list_only_names_modules_that_still_need_it():
    still_needed = {name for name in PENDING_INNER_IMPORTS
                    for module, source, is_package in _sources()
                    if (module == name or module.startswith(name + "."))
                    and unmarked_inner_imports(module, source, is_package)}
    assert sorted(PENDING_INNER_IMPORTS - still_needed) == []


# -- the checker itself can fail ---------------------------------------------------------------------------------
def _dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def test_layer_of_places_modules():
    assert [layer_of(m) for m in ("jitcore.errors", "jitcore.capture.values.base", "jitcore.codegen",
                                  "jitcore.runtime.cache", "jitcore.report.view", "jitcore.api", "jitcore",
                                  "jitcore.guards.tree", "jitcore.backends", "torch", "rich.console")] == \
        ["leaf", "capture", "codegen", "runtime", "report", "top", "top", "guards", "backends", None, None]


def test_a_report_module_importing_the_runtime_is_caught():
    source = _dedent("""
        from jitcore.report.describe import frame_of
        from jitcore.runtime.install import ALL_CACHES
        """)
    assert layer_violations("jitcore.report.summary", source) == [
        "jitcore.report.summary:2 imports jitcore.runtime.install (report -> runtime)"]


def test_relative_and_from_package_imports_are_resolved():
    source = _dedent("""
        from .. import api
        from ..runtime import install
        from . import describe
        from jitcore import events
        """)
    assert layer_violations("jitcore.report.view", source) == [
        "jitcore.report.view:1 imports jitcore.api (report -> top)",
        "jitcore.report.view:2 imports jitcore.runtime.install (report -> runtime)"]
    # in a package's __init__, one dot is the package itself
    assert [imp.target for imp in imports_of(source, "jitcore.report", is_package=True)] == \
        ["jitcore.api", "jitcore.runtime.install", "jitcore.report.describe", "jitcore.events"]
    assert [imp.target for imp in imports_of("from . import api\n", "jitcore.runtime", is_package=True)] == \
        ["jitcore.runtime"]


def test_imports_inside_functions_and_dynamic_imports_count():
    source = _dedent("""
        import importlib

        def f():
            import jitcore.api
            return importlib.import_module("jitcore.report.console")

        class C:
            def g(self):
                return __import__("jitcore.codegen.steps")
        """)
    assert layer_violations("jitcore.capture.frame", source) == [
        "jitcore.capture.frame:4 imports jitcore.api (capture -> top)",
        "jitcore.capture.frame:5 imports jitcore.report.console (capture -> report)",
        "jitcore.capture.frame:9 imports jitcore.codegen.steps (capture -> codegen)"]


@pytest.mark.parametrize("module, target", [("jitcore.config", "jitcore.runtime.registry"),
                                            ("jitcore.guards.tree", "jitcore.errors"),
                                            ("jitcore.backends.registry", "jitcore.config"),
                                            ("jitcore.codegen.steps", "jitcore.backends"),
                                            ("jitcore.runtime.cache", "jitcore.report.console"),
                                            ("jitcore.runtime.install", "jitcore.api")])
def test_each_forbidden_direction_is_caught(module, target):
    assert len(layer_violations(module, f"import {target}\n")) == 1


def test_an_inner_import_needs_a_lazy_reason():
    source = _dedent("""
        import jitcore.events

        def f():
            from jitcore.report.live import render_event
            # lazy: rich costs 100 ms at start-up
            from jitcore.report.layout import header
            from jitcore.report.view import (  # lazy: rich
                render)
            from jitcore.report.html import page
            import rich
            return render_event, header, render, page, rich
        """)
    assert unmarked_inner_imports("jitcore.report.console", source) == [
        "jitcore.report.console:4 imports jitcore.report.live inside a function without '# lazy: <why>'",
        "jitcore.report.console:9 imports jitcore.report.html inside a function without '# lazy: <why>'"]
