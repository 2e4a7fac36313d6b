"""JITCORE=1 and the rest of the environment: a bad JITCORE_* value stops the run with one line naming the variable
and its valid values (exit status 2, as `python -m jitcore run` does), JITCORE_STRICT=1 holds under JITCORE=1, a
seeded program draws the same random numbers, and the user's own `guards.py` / `backends.py` stay theirs."""
import textwrap

import pytest

from tests.cli.helpers import CHECKOUT, installed_pth, run_python

needs_install = pytest.mark.skipif(installed_pth() is None,
                                   reason="jitcore is not installed in this interpreter (run `make test`)")

_TOPICS = "valid topics are: recompiles, breaks, guards, graphs, fallbacks, distributed, all"


@needs_install
@pytest.mark.parametrize("variable, value, expected", [
    ("JITCORE_LOG", "recompiles,bogus", f"unknown JITCORE_LOG topic 'bogus'; {_TOPICS}"),
    ("JITCORE_BACKEND", "nope", "JITCORE_BACKEND=nope: unknown backend 'nope'; available: aot_eager, cudagraphs, "
                                "eager, inductor"),
    ("JITCORE_STRICT", "maybe", "JITCORE_STRICT must be 0 or 1 (or true/false), got 'maybe'"),
    ("JITCORE_DEBUG", "2", "JITCORE_DEBUG must be 0 or 1 (or true/false), got '2'"),
    ("JITCORE", "maybe", "JITCORE must be 0 or 1 (or true/false), got 'maybe'"),
])
def test_a_bad_value_under_jitcore_1_stops_with_one_line(tmp_path, variable, value, expected):
    (tmp_path / "script.py").write_text('print("the script ran")\n')
    env = {"JITCORE": "1", variable: value}
    proc = run_python(["script.py"], tmp_path, **env)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("JITCORE=1: error: ") and expected in lines[0], lines[0]


_BOOM_BACKEND = textwrap.dedent("""\
    def boom(gm, example_inputs):
        raise RuntimeError("the backend failed")
""")


def _boom_distribution(root):
    """A distribution on the path declaring the backend `boom` in the jitcore_backends entry-point group."""
    (root / "boom_backend.py").write_text(_BOOM_BACKEND)
    info = root / "boom_backend-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: boom-backend\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[jitcore_backends]\nboom = boom_backend:boom\n")


_STRICT_SCRIPT = textwrap.dedent("""\
    import torch

    def double(x):
        return x * 2

    for _ in range(2):
        print(double(torch.ones(2)).tolist())
""")


@needs_install
@pytest.mark.parametrize("strict", ["0", "1"])
def test_jitcore_strict_holds_under_jitcore_1(tmp_path, strict):
    _boom_distribution(tmp_path)
    (tmp_path / "script.py").write_text(_STRICT_SCRIPT)
    proc = run_python(["script.py"], tmp_path, JITCORE="1", JITCORE_BACKEND="boom", JITCORE_STRICT=strict,
                      PYTHONPATH=f"{tmp_path}:{CHECKOUT}")
    if strict == "1":
        assert proc.returncode == 1
        assert "BackendCompileError" in proc.stderr and "the backend failed" in proc.stderr
    else:
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == "[2.0, 2.0]\n[2.0, 2.0]\n"
        assert "the backend failed" in proc.stderr  # reported once, and the program ran natively


_SEEDED = textwrap.dedent("""\
    import random
    import torch

    def scale(x):
        return torch.sin(x) * 3

    random.seed(0)
    for _ in range(3):
        scale(torch.ones(4))
        print(random.random())
""")


@needs_install
def test_a_seeded_program_draws_the_same_numbers_under_jitcore_1(tmp_path):
    (tmp_path / "script.py").write_text(_SEEDED)
    eager = run_python(["script.py"], tmp_path)
    compiled = run_python(["script.py"], tmp_path, JITCORE="1", JITCORE_LOG="graphs")
    assert compiled.returncode == 0, compiled.stderr
    assert "graph" in compiled.stderr  # it did compile (rich, imported to print, draws at import)
    assert compiled.stdout == eager.stdout


_OWN_MODULES = textwrap.dedent("""\
    import torch
    import guards
    import backends
    {import_jitcore}

    def step(x):
        return guards.check(x) + backends.scale(x)

    for _ in range(2):
        print(step(torch.ones(2)).tolist())
""")


@needs_install
@pytest.mark.parametrize("how", ["JITCORE=1", "import jitcore"])
def test_the_users_own_guards_and_backends_modules_work_beside_jitcore(tmp_path, how):
    (tmp_path / "guards.py").write_text("def check(x):\n    return x + 1\n")
    (tmp_path / "backends.py").write_text("def scale(x):\n    return x * 10\n")
    import_jitcore = "import jitcore" if how == "import jitcore" else ""
    (tmp_path / "script.py").write_text(_OWN_MODULES.format(import_jitcore=import_jitcore))
    env = {"JITCORE": "1"} if how == "JITCORE=1" else {}
    proc = run_python(["script.py"], tmp_path, **env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "[12.0, 12.0]\n[12.0, 12.0]\n"
