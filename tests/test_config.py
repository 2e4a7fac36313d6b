"""jit.config: every setting checks what it is given, and a name that is no setting is refused."""
import pytest

import jitcore as jit
from jitcore.config import Config
from jitcore.errors import InvalidArgumentError, UnknownBackendError


def test_an_unknown_setting_is_refused_naming_the_settings():
    with pytest.raises(InvalidArgumentError, match=r"no setting 'nonexistent'; the settings are: .*backend"):
        jit.config.nonexistent = 1
    assert not hasattr(jit.config, "nonexistent")


@pytest.mark.parametrize("field", ["backend", "autoenable_backend"])
def test_an_unregistered_backend_name_is_refused_naming_the_registered_ones(field):
    before = getattr(jit.config, field)
    with pytest.raises(UnknownBackendError, match=r"unknown backend 'nope'.*available: .*eager"):
        setattr(jit.config, field, "nope")
    assert getattr(jit.config, field) == before


@pytest.mark.parametrize("value", [3, "", None])
def test_a_backend_that_is_neither_a_name_nor_a_function_is_refused(value):
    with pytest.raises(InvalidArgumentError, match="config.backend must"):
        jit.config.backend = value


def test_a_registered_backend_name_or_a_backend_function_is_accepted(monkeypatch):
    monkeypatch.setattr(jit.config, "backend", "aot_eager")
    assert jit.config.backend == "aot_eager"

    def my_backend(gm, example_inputs):
        return gm.forward

    monkeypatch.setattr(jit.config, "backend", my_backend)
    assert jit.config.backend is my_backend


@pytest.mark.parametrize("field", ["strict", "debug_checks", "autoenable"])
@pytest.mark.parametrize("value", [1, "yes", None])
def test_switches_take_only_true_or_false(field, value):
    with pytest.raises(InvalidArgumentError, match=f"config.{field} must be True or False"):
        setattr(jit.config, field, value)


@pytest.mark.parametrize("value", [0, -1, 2.0, "8"])
def test_cache_limit_takes_a_positive_int(value):
    with pytest.raises(InvalidArgumentError, match="cache_limit must be a positive int"):
        jit.config.cache_limit = value


def test_log_topics_are_checked():
    with pytest.raises(InvalidArgumentError, match="unknown JITCORE_LOG topic 'bogus'"):
        jit.config.log = "breaks,bogus"


def test_environment_values_are_checked_when_read():
    with pytest.raises(InvalidArgumentError, match="JITCORE_STRICT must be 0 or 1"):
        Config.from_environ({"JITCORE_STRICT": "maybe"})
    assert Config.from_environ({"JITCORE_STRICT": "1"}).strict is True


@pytest.mark.parametrize("value", ["Native", "skip", None, True])
def test_loop_breaks_takes_native_or_resume(value):
    with pytest.raises(InvalidArgumentError, match="config.loop_breaks must be one of 'native', 'resume'"):
        jit.config.loop_breaks = value
    assert jit.config.loop_breaks == "native"


def test_loop_breaks_is_read_from_the_environment():
    assert Config.from_environ({"JITCORE_LOOP_BREAKS": "resume"}).loop_breaks == "resume"
    assert Config.from_environ({}).loop_breaks == "native"
    with pytest.raises(InvalidArgumentError, match="config.loop_breaks must be one of"):
        Config.from_environ({"JITCORE_LOOP_BREAKS": "sometimes"})
