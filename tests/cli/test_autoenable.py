"""JITCORE=1: the .pth start-up hook is installed with the package, compiles a script's tensor functions without
code changes, and imports nothing of jitcore when the variable is unset. Discovery rules are tested in-process."""
import dis
import json
import os
import sys
import textwrap

import pytest
import torch

from tests.cli.helpers import installed_pth, run_python

needs_install = pytest.mark.skipif(installed_pth() is None,
                                   reason="jitcore is not installed in this interpreter (run `make test`)")

_SCRIPT = textwrap.dedent("""\
    import sys
    import torch

    def double(x):
        return x * 2 + 1

    ORIGINAL = double.__code__
    for _ in range(3):
        out = double(torch.ones(3))
    print("jitcore imported:", "jitcore" in sys.modules)
    print("prologue installed:", double.__code__ is not ORIGINAL)
    print("result:", out.tolist())
""")


@needs_install
def test_the_pth_hook_only_reads_the_environment_and_imports_autoenable():
    with open(installed_pth(), encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    assert len(lines) == 1
    line = lines[0]
    assert line.startswith("import os;")
    assert 'os.environ.get("JITCORE"' in line
    assert line.endswith('__import__("jitcore.autoenable")')


@needs_install
def test_jitcore_1_compiles_the_scripts_tensor_functions(tmp_path):
    (tmp_path / "script.py").write_text(_SCRIPT)
    proc = run_python(["script.py"], tmp_path, JITCORE="1", JITCORE_LOG="graphs")
    assert proc.returncode == 0, proc.stderr
    assert "jitcore imported: True" in proc.stdout
    assert "prologue installed: True" in proc.stdout
    assert "result: [3.0, 3.0, 3.0]" in proc.stdout
    assert "jitcore · graph  double() · 2 ops" in proc.stderr  # the graph, live
    assert "1 function compiled · 1 graph · 0 breaks · 0 recompiles" in proc.stderr  # the summary at exit


@needs_install
@pytest.mark.parametrize("value", [None, "0"])
def test_without_jitcore_nothing_of_jitcore_is_imported(tmp_path, value):
    (tmp_path / "script.py").write_text('import sys\nprint("jitcore imported:", "jitcore" in sys.modules)\n')
    env = {} if value is None else {"JITCORE": value}
    proc = run_python(["script.py"], tmp_path, **env)
    assert proc.stdout == "jitcore imported: False\n", proc.stderr


# -- discovery, in-process ------------------------------------------------------------------------------------
def _tensor_work(x):
    return torch.cos(x) + 1


def _int_work(n):
    return n + 1


def _generator(x):
    yield x


class _Holder(torch.nn.Module):
    def __init__(self):
        super().__init__()


def test_discovery_compiles_user_tensor_functions_and_disables_the_rest():
    from jitcore.api import make_options
    from jitcore.runtime.autoenable import AutoEnabler
    auto = AutoEnabler()
    tensor_code, int_code = _tensor_work.__code__, _int_work.__code__
    auto.start(make_options("eager"))
    try:
        assert auto.active
        x = torch.randn(3)
        first = _tensor_work(x)   # captured from its arguments, runs natively
        second = _tensor_work(x)  # runs the compiled entry through the prologue
        _int_work(1)
        swapped = _tensor_work.__code__ is not tensor_code
        untouched = _int_work.__code__ is int_code
        entries = [entry for cache in auto.caches() for entry in cache.entries]
    finally:
        auto.stop()
    assert swapped and untouched
    assert len(entries) == 1 and entries[0].gm is not None and not entries[0].native
    torch.testing.assert_close(first, torch.cos(x) + 1)
    torch.testing.assert_close(second, first)
    assert _tensor_work.__code__ is tensor_code  # stop() gives the original code back


def test_only_user_code_qualifies():
    from jitcore.api import make_options
    from jitcore.codegen.resume import resume_code
    from jitcore.runtime.autoenable import AutoEnabler
    auto = AutoEnabler()
    auto.start(make_options("eager"))
    try:
        user = auto._may_be_user_code(_tensor_work.__code__)
        stdlib = auto._may_be_user_code(json.dumps.__code__)
        torch_code = auto._may_be_user_code(torch.nn.Linear.forward.__code__)
        jitcore_code = auto._may_be_user_code(sys.modules["jitcore.api"].compile.__code__)
        generator = auto._may_be_user_code(_generator.__code__)
        constructor = auto._may_be_user_code(_Holder.__init__.__code__)
        # a resume code runs the user's function natively, below a resume function that already dispatched
        target = next(i.offset for i in dis.get_instructions(_tensor_work) if i.opname == "RETURN_VALUE")
        resumed = auto._may_be_user_code(resume_code(_tensor_work.__code__, target, ("value",), ()))
    finally:
        auto.stop()
    assert (user, stdlib, torch_code, jitcore_code, generator, constructor, resumed) == (
        True, False, False, False, False, False, False)


def test_the_backend_of_auto_enable_defaults_to_eager_and_follows_jitcore_backend():
    from jitcore.config import Config
    assert Config.from_environ({}).autoenable_backend == "eager"
    assert Config.from_environ({"JITCORE_BACKEND": "aot_eager"}).autoenable_backend == "aot_eager"
    assert Config.from_environ({"JITCORE": "1"}).autoenable is True
    assert Config.from_environ({"JITCORE": "off"}).autoenable is False


def test_pth_line_in_setup_matches_the_documented_contract():
    setup_py = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "setup.py")
    with open(setup_py, encoding="utf-8") as handle:
        source = handle.read()
    assert 'PTH_NAME = "jitcore-autoenable.pth"' in source
    assert '__import__("jitcore.autoenable")' in source


@needs_install
def test_code_given_with_python_c_is_the_users(tmp_path):
    program = ("import torch\n"
               "def double(x):\n"
               "    return x * 2\n"
               "ORIGINAL = double.__code__\n"
               "for _ in range(2):\n"
               "    out = double(torch.ones(2))\n"
               "print(double.__code__ is not ORIGINAL, out.tolist())\n")
    proc = run_python(["-c", program], tmp_path, JITCORE="1")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "True [2.0, 2.0]\n"


_NAMEDTUPLE_SCRIPT = textwrap.dedent("""\
    import collections
    import torch

    Pair = collections.namedtuple("Pair", "a b")
    LOG = collections.defaultdict(list)

    def step(x):
        LOG["k"].append(1)
        print("between")
        return Pair(x + len(LOG["k"]), x * 2)

    for _ in range(3):
        out = step(torch.ones(2))
    print("result:", out.a.tolist(), out.b.tolist(), dict(LOG), repr(torch.ones(1)))
""")


@needs_install
def test_jitcore_1_rebuilds_namedtuples_without_calling_their_new_again(tmp_path):
    """A namedtuple's __new__ (eval'd from "<string>") holds tensors, so JITCORE=1 compiles it too; rebuilding
    its result must not call it again (it would run its own entry, without end). Printing a tensor makes one."""
    (tmp_path / "script.py").write_text(_NAMEDTUPLE_SCRIPT)
    eager = run_python(["script.py"], tmp_path)
    proc = run_python(["script.py"], tmp_path, JITCORE="1")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == eager.stdout
    assert "result: [4.0, 4.0] [2.0, 2.0] {'k': [1, 1, 1]}" in proc.stdout
    assert "fallback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
