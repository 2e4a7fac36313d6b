"""Auto-enable (`JITCORE=1 python script.py`, `python -m jitcore run`): compile the user's tensor functions
process-wide, without code changes, and sum up what was compiled.

The `jitcore-autoenable.pth` hook imports this module at start-up when JITCORE is set, and importing it starts
auto-enable: runtime.autoenable's discovery, armed with the options of `config.autoenable_backend`. With
JITCORE_LOG naming graphs, the run ends with the summary table that `python -m jitcore run` prints.
Entry points: `start(backend=None)`, `stop()`, `summary()`, `print_summary(console=None)`.
"""
from __future__ import annotations

import atexit

from jitcore.api import make_options
from jitcore.config import config
from jitcore.explaining import is_explain_cache
from jitcore.runtime.autoenable import AUTO
from jitcore.runtime.install import ALL_CACHES

__all__ = ["start", "stop", "summary", "print_summary"]


def start(backend=None) -> None:
    """Compile the user's tensor functions from now on, process-wide (what JITCORE=1 does at start-up)."""
    if not AUTO.active:
        AUTO.start(make_options(backend or config.autoenable_backend, False, None, None))


def stop() -> None:
    AUTO.stop()


def summary():
    """What jitcore compiled in this process (every live cache but explain()'s own), as a report.summary.Summary."""
    from jitcore.report import summary as report_summary  # lazy: it imports rich, needed only at exit
    return report_summary.collect([cache for cache in list(ALL_CACHES) if not is_explain_cache(cache)])


def print_summary(console=None):
    """Print the summary table (once per process unless a console is given) and return the Summary."""
    from jitcore.report import summary as report_summary  # lazy: it imports rich, needed only at exit
    return report_summary.print_summary(summary(), console)


def _print_summary_at_exit() -> None:
    if "graphs" in config.log:
        print_summary()


def _start_from_environment() -> None:
    if config.autoenable and not AUTO.active:
        start()
        atexit.register(_print_summary_at_exit)


_start_from_environment()
