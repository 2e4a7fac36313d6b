"""Packaging hook: install `jitcore-autoenable.pth` into site-packages, for `JITCORE=1 python script.py`.

Everything else about the package is declared in pyproject.toml. The .pth line runs at every interpreter start-up;
it only reads os.environ, and imports jitcore.autoenable when JITCORE is set (to anything but 0/false/no/off),
so a process without JITCORE imports nothing of jitcore.

Two install paths need the file:
- a wheel (`pip install .`): the wheel's root is site-packages, and build_py's build_lib becomes that root;
- an editable install (`pip install -e .`, what `make test` does): setuptools' editable wheel ignores build_lib
  for its import-hook strategy and skips data_files (it asks the distribution for `has_data`, which does not
  exist), so the file is written into the unpacked editable wheel next to setuptools' own `__editable__*.pth`.
  `_run_build_commands` is the step that fills that directory; tests/cli/test_autoenable.py checks that the file
  really lands in site-packages, so a setuptools change that bypasses this override fails loudly.
"""
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

PTH_NAME = "jitcore-autoenable.pth"
PTH_LINE = ('import os; os.environ.get("JITCORE", "").strip().lower() not in ("", "0", "false", "no", "off") '
            'and __import__("jitcore.autoenable")\n')


def _write_pth(directory) -> str:
    path = Path(directory) / PTH_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(PTH_LINE, encoding="utf-8")
    return str(path)


class BuildPyWithPth(build_py):
    """Regular wheels: put the .pth at the root of build_lib, which is the wheel's (and site-packages') root."""

    def run(self):
        super().run()
        if not getattr(self, "editable_mode", False):
            self._pth = _write_pth(self.build_lib)

    def get_outputs(self, include_bytecode=True):
        outputs = list(super().get_outputs(include_bytecode))
        pth = getattr(self, "_pth", None)
        return outputs + [pth] if pth else outputs


cmdclass = {"build_py": BuildPyWithPth}

try:
    from setuptools.command.editable_wheel import editable_wheel
except ImportError:  # setuptools < 64 has no PEP 660 editable wheels
    editable_wheel = None

if editable_wheel is not None:
    class EditableWheelWithPth(editable_wheel):
        """Editable installs: write the .pth into the unpacked editable wheel, beside `__editable__*.pth`."""

        def _run_build_commands(self, dist_name, unpacked_wheel, build_lib, tmp_dir):
            result = super()._run_build_commands(dist_name, unpacked_wheel, build_lib, tmp_dir)
            _write_pth(unpacked_wheel)
            return result

    cmdclass["editable_wheel"] = EditableWheelWithPth

setup(cmdclass=cmdclass)
