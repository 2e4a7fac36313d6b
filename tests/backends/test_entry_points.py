"""Backends declared by other distributions in the `jitcore_backends` entry-point group (Note [Entry-point backends]).

`importlib.metadata.entry_points` is monkeypatched to return the entry points a test declares; the autouse
fresh_registry fixture makes the registry read them anew in every test.
"""

from __future__ import annotations

import sys
from importlib import metadata

import pytest

from jitcore import backends
from jitcore.backends import ENTRY_POINT_GROUP, BackendError, EntryPointFailure, lookup, register_backend

PLUGIN = "tests.backends.plugin_backend"


@pytest.fixture
def declare(monkeypatch):
    """declare(name=value, ...): make those the entry points of the group, and count how often they are read."""
    reads = []

    def declare_entry_points(**targets):
        declared = [metadata.EntryPoint(name, value, ENTRY_POINT_GROUP) for name, value in targets.items()]

        def entry_points(*, group):
            reads.append(group)
            return declared if group == ENTRY_POINT_GROUP else []

        monkeypatch.setattr(metadata, "entry_points", entry_points)
        monkeypatch.delitem(sys.modules, PLUGIN, raising=False)
        return reads

    return declare_entry_points


def test_entry_point_backend_is_listed_without_importing_its_module(declare):
    declare(plug=f"{PLUGIN}:compile_graph")
    assert backends.list() == ["aot_eager", "cudagraphs", "eager", "inductor", "plug"]
    assert PLUGIN not in sys.modules


def test_entry_point_backend_is_loaded_at_its_lookup(declare):
    declare(plug=f"{PLUGIN}:compile_graph")
    found = lookup("plug")
    assert found is sys.modules[PLUGIN].compile_graph


def test_entry_point_backend_options_are_checked_against_its_signature(declare):
    declare(plug=f"{PLUGIN}:compile_graph")
    assert lookup("plug", level=3).keywords == {"level": 3}
    with pytest.raises(BackendError, match=r"'plug' got unknown option\(s\) 'mode'; it takes: level"):
        lookup("plug", mode="fast")


def test_entry_points_are_read_once(declare):
    reads = declare(plug=f"{PLUGIN}:compile_graph")
    backends.list()
    lookup("plug")
    backends.list()
    assert reads == [ENTRY_POINT_GROUP]


def test_entry_point_that_fails_to_import_is_recorded_and_its_lookup_raises(declare):
    declare(broken="tests.backends.no_such_module:compile_graph")
    with pytest.raises(BackendError, match=r"'broken' comes from entry point .*ModuleNotFoundError") as caught:
        lookup("broken")
    assert isinstance(caught.value.__cause__, ModuleNotFoundError)
    (failure,) = backends.entry_point_errors()
    assert failure.name == "broken"
    assert failure.value == "tests.backends.no_such_module:compile_graph"
    assert failure.reason.startswith("loading it raised ModuleNotFoundError")
    assert "broken" not in backends.list()


def test_entry_point_whose_target_is_not_callable_is_recorded(declare):
    declare(number=f"{PLUGIN}:NOT_CALLABLE")
    with pytest.raises(BackendError, match="its target is a int, not a callable"):
        lookup("number")
    assert backends.entry_point_errors() == [
        EntryPointFailure("number", f"{PLUGIN}:NOT_CALLABLE", "its target is a int, not a callable")
    ]


def test_entry_point_named_like_a_builtin_is_skipped_and_recorded(declare):
    declare(inductor=f"{PLUGIN}:compile_graph")
    assert lookup("inductor") is backends.inductor.inductor
    assert backends.entry_point_errors() == [
        EntryPointFailure(
            "inductor", f"{PLUGIN}:compile_graph", "name 'inductor' is taken by a backend registered in this process"
        )
    ]


def test_entry_point_with_an_invalid_name_is_skipped_and_recorded(declare):
    declare(**{"two words": f"{PLUGIN}:compile_graph"})
    assert backends.list() == ["aot_eager", "cudagraphs", "eager", "inductor"]
    assert backends.entry_point_errors()[0].reason == "'two words' is not a valid backend name"


def test_registering_an_entry_point_name_needs_replace(declare):
    declare(plug=f"{PLUGIN}:compile_graph")
    with pytest.raises(BackendError, match="'plug' is already registered"):
        register_backend("plug", lambda gm, example_inputs: gm.forward)


def test_failures_are_records_not_warnings(declare, recwarn):
    declare(broken="tests.backends.no_such_module:compile_graph", inductor=f"{PLUGIN}:compile_graph")
    with pytest.raises(BackendError):
        lookup("broken")
    assert len(backends.entry_point_errors()) == 2
    assert len(recwarn) == 0
