"""Fixtures shared by every test package: jitcore's caches are dropped after each test, and a fresh counting backend.

The reset touches jitcore only when a test has imported it, so tests of guards/ and backends/ never load the engine.
Every test run checks each interpreted instruction's stack effect (config.debug_checks, seeded from JITCORE_DEBUG
before any test imports jitcore; worker processes inherit it). `JITCORE_DEBUG=0 pytest ...` runs without.
Under pytest-xdist (`make test` runs two workers) each worker gets an equal share of the machine's cores as torch
threads, so that the workers do not each start one thread per core.
"""

import os
import sys

os.environ.setdefault("JITCORE_DEBUG", "1")

import pytest

from tests.support import CountingBackend


def pytest_configure(config: pytest.Config) -> None:
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")  # set in each xdist worker before it reads conftests
    if workers:
        import torch

        torch.set_num_threads(max(1, (os.cpu_count() or 1) // int(workers)))


@pytest.fixture(autouse=True)
def _reset_jitcore():
    """After each test, `jit.reset()`: no cache entry, swapped function or counter leaks into the next test."""
    yield
    jit = sys.modules.get("jitcore")
    if jit is not None:
        jit.reset()


@pytest.fixture
def counting() -> CountingBackend:
    """A fresh CountingBackend that runs each graph it receives with `gm.forward`."""
    return CountingBackend()
