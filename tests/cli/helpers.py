"""Helpers for the subprocess tests of the CLI and of auto-enable: a clean environment and a script runner.

`run_python(args, cwd, **env)` runs this interpreter with jitcore's variables removed from the environment unless
given, and returns the CompletedProcess (text mode). PYTHONPATH is this checkout's root: the .pth start-up hook is
the installed one, and the jitcore it imports is the one under test (the editable install may point at another
checkout). `installed_pth()` is the path of the start-up hook that the
package installed into site-packages, or None when jitcore is not installed in this interpreter.
"""
from __future__ import annotations

import os
import subprocess
import sys

__all__ = ["run_python", "installed_pth", "PTH_NAME", "CHECKOUT"]

PTH_NAME = "jitcore-autoenable.pth"
#: the root of the checkout these tests belong to
CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_python(args: list, cwd, timeout: float = 240, **env: str) -> subprocess.CompletedProcess:
    clean = {key: value for key, value in os.environ.items() if not key.startswith("JITCORE")}
    clean["PYTHONPATH"] = CHECKOUT
    clean.update(env)
    clean.setdefault("COLUMNS", "100")
    return subprocess.run([sys.executable, *args], cwd=cwd, env=clean, capture_output=True, text=True,
                          timeout=timeout)


def installed_pth() -> str | None:
    """Looked up in site-packages itself: importlib.metadata may find a stale jitcore.egg-info in the checkout."""
    import site
    import sysconfig
    for directory in (sysconfig.get_paths()["purelib"], *site.getsitepackages()):
        path = os.path.join(directory, PTH_NAME)
        if os.path.isfile(path):
            return path
    return None
