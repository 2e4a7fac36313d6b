"""Fixtures for backends/ tests: each test gets a fresh registry, so that registrations and entry points do not leak."""

from __future__ import annotations

import pytest

from jitcore.backends import registry


@pytest.fixture(autouse=True)
def fresh_registry(monkeypatch: pytest.MonkeyPatch) -> registry._Registry:
    """A registry holding only the built-ins, entry points not yet read: registrations do not leak between tests."""
    fresh = registry._Registry(registry._BUILTINS)
    monkeypatch.setattr(registry, "_registry", fresh)
    return fresh
