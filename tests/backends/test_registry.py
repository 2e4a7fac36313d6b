"""The registry: registering by decorator and by call, name and callable checks, lookup, options and listing."""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path

import pytest

from jitcore import backends
from jitcore.backends import BackendError, UnknownBackendError, lookup, register_backend

BUILTINS = ["aot_eager", "cudagraphs", "eager", "inductor"]


def run_graph(gm, example_inputs):
    return gm.forward


def with_options(gm, example_inputs, *, level=0, verbose=False):
    return gm.forward


# Registering


def test_register_backend_as_decorator_binds_name_and_returns_function():
    @register_backend("mine")
    def mine(gm, example_inputs):
        return gm.forward

    assert lookup("mine") is mine


def test_register_backend_as_call_binds_name_and_returns_function():
    assert register_backend("mine", run_graph) is run_graph
    assert lookup("mine") is run_graph


def test_register_taken_name_raises_backend_error():
    register_backend("mine", run_graph)
    with pytest.raises(BackendError, match=r"backend 'mine' is already registered; pass replace=True"):
        register_backend("mine", with_options)
    assert lookup("mine") is run_graph


def test_register_taken_name_with_replace_rebinds_it():
    register_backend("mine", run_graph)
    register_backend("mine", with_options, replace=True)
    assert lookup("mine") is with_options


def test_register_builtin_name_needs_replace():
    with pytest.raises(BackendError, match="'eager' is already registered"):
        register_backend("eager", run_graph)


@pytest.mark.parametrize("name", ["", "two words", "tab\t", 3, None, b"bytes"])
def test_register_rejects_bad_name(name):
    with pytest.raises(BackendError, match=r"name must be a non-empty str of letters, digits, '_', '-' or '\.', got"):
        register_backend(name, run_graph)


def test_register_rejects_non_callable_backend_naming_its_type():
    with pytest.raises(BackendError, match=r"backend 'mine' must be callable as fn\(gm, example_inputs\), got int"):
        register_backend("mine", 42)
    assert "mine" not in backends.list()


def test_register_rejects_a_str_as_tags():
    with pytest.raises(BackendError, match=r"tags must be an iterable of str, got the str 'debug'"):
        register_backend("mine", run_graph, tags="debug")


# Looking up


def test_lookup_unknown_name_suggests_closest_and_lists_available():
    with pytest.raises(UnknownBackendError) as caught:
        lookup("indcutor")
    assert str(caught.value).startswith(
        "unknown backend 'indcutor'; did you mean 'inductor'? available: aot_eager, cudagraphs, eager, inductor"
    )


def test_lookup_unknown_name_without_close_match_only_lists_available():
    with pytest.raises(UnknownBackendError, match=r"^unknown backend 'zzz'; available: aot_eager, cudagraphs"):
        lookup("zzz")


def test_unknown_backend_error_is_a_backend_error_and_a_lookup_error():
    with pytest.raises(BackendError):
        lookup("nope")
    with pytest.raises(LookupError):
        lookup("nope")


def test_lookup_returns_a_callable_as_it_is():
    assert lookup(run_graph) is run_graph


def test_lookup_rejects_options_with_a_callable():
    with pytest.raises(BackendError, match=r"options \(level\) are only accepted with a backend name"):
        lookup(with_options, level=1)


@pytest.mark.parametrize("value, type_name", [(3, "int"), (None, "NoneType"), (["eager"], "list")])
def test_lookup_rejects_neither_name_nor_callable_naming_the_type(value, type_name):
    with pytest.raises(BackendError, match=rf"must be a registered name \(str\) or a callable .*, got {type_name};"):
        lookup(value)


def test_lookup_without_options_returns_the_registered_function():
    assert lookup("eager") is backends.eager.eager


def test_lookup_binds_options_with_partial():
    register_backend("mine", with_options)
    bound = lookup("mine", level=2, verbose=True)
    assert isinstance(bound, functools.partial)
    assert bound.func is with_options
    assert bound.keywords == {"level": 2, "verbose": True}


def test_lookup_rejects_unknown_options_naming_them_and_the_accepted_ones():
    register_backend("mine", with_options)
    with pytest.raises(BackendError, match=r"unknown option\(s\) 'colour', 'speed'; it takes: level, verbose$"):
        lookup("mine", speed=1, colour="red", level=1)


def test_lookup_rejects_any_option_for_a_backend_without_options():
    with pytest.raises(BackendError, match=r"backend 'eager' got unknown option\(s\) 'mode'; it takes no options"):
        lookup("eager", mode="default")


def test_lookup_accepts_any_option_when_the_backend_takes_var_keywords():
    register_backend("mine", lambda gm, example_inputs, **options: gm.forward)
    assert lookup("mine", anything=1).keywords == {"anything": 1}


def test_lookup_runs_the_registered_options_check():
    def check(*, level=0, verbose=False):
        if level < 0:
            raise BackendError(f"level must be >= 0, got {level}")

    register_backend("mine", with_options, check_options=check)
    with pytest.raises(BackendError, match="level must be >= 0, got -1"):
        lookup("mine", level=-1)
    assert lookup("mine", level=1).keywords == {"level": 1}


# Listing


def test_list_holds_the_builtins_sorted():
    assert backends.list() == BUILTINS


def test_list_includes_registered_backends():
    register_backend("mine", run_graph)
    assert backends.list() == sorted([*BUILTINS, "mine"])


def test_list_leaves_out_excluded_tags():
    register_backend("mine", run_graph, tags=("debug", "experimental"))
    assert backends.list(exclude_tags=("debug",)) == ["cudagraphs", "inductor"]


# Tags


def test_the_aot_autograd_backends_are_tagged_so():
    assert [name for name in BUILTINS if backends.AOT_AUTOGRAD in backends.tags_of(name)] == [
        "aot_eager", "cudagraphs", "inductor"]


def test_tags_of_a_looked_up_callable_are_its_registrations_with_or_without_options():
    register_backend("mine", with_options, tags=("experimental",))
    assert backends.tags_of(lookup("mine")) == ("experimental",)
    assert backends.tags_of(lookup("mine", level=2)) == ("experimental",)
    assert backends.AOT_AUTOGRAD in backends.tags_of(lookup("aot_eager"))


def test_tags_of_what_nobody_registered_are_empty():
    assert backends.tags_of("no_such_backend") == ()
    assert backends.tags_of(run_graph) == ()


# Import cost


def test_listing_backends_loads_no_compiler():
    root = Path(__file__).resolve().parents[2]
    code = ("import sys, jitcore.backends as b; b.list(); "
            "print(sorted(m for m in sys.modules if m.startswith(('torch._inductor', 'torch._functorch.aot'))))")
    result = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
