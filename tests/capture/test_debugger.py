"""A debugger entered inside compiled code (breakpoint(), pdb.set_trace(), sys.breakpointhook()) stops in the
user's own frame with the user's own names (Note [A debugger in compiled code]): the function runs in Python for
that call, results stay eager's. Driven by a pdb reading commands from stdin, through both doors."""
import os
import subprocess
import sys
import textwrap

import pytest

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_SCRIPT = textwrap.dedent('''
    import pdb, sys
    import torch
    import jitcore as jit

    def with_breakpoint(x):
        hidden = x * 2
        breakpoint()
        return hidden + 1

    def with_set_trace(x):
        hidden = x * 3
        pdb.set_trace()
        return hidden + 1

    def callee(y):
        inner_name = y - 1
        sys.breakpointhook()
        return inner_name

    def caller(x):
        outer_name = x + 10
        return callee(outer_name) * 2

    DOOR = sys.argv[1]
    for fn in (with_breakpoint, with_set_trace, caller):
        if DOOR == "compile":
            out = jit.compile(fn, backend="eager")(torch.ones(2))
        else:
            jit.register(fn)
            with jit.enabled(backend="eager"):
                out = fn(torch.ones(2))
        print("RESULT", fn.__name__, out.tolist())
''')

# per stop: the function's own names, a local, then continue
_COMMANDS = ("p sorted(k for k in locals() if not k.startswith('__'))\np hidden\nc\n"
             "p sorted(k for k in locals() if not k.startswith('__'))\np hidden\nc\n"
             "p sorted(k for k in locals() if not k.startswith('__'))\np inner_name\nc\n")


@pytest.mark.parametrize("door", ["compile", "register"])
def test_debugger_stops_in_the_users_frame_with_the_users_names(door, tmp_path):
    script = tmp_path / "debugged.py"
    script.write_text(_SCRIPT)
    env = dict(os.environ, PYTHONPATH=_ROOT, PYTHONBREAKPOINT="pdb.set_trace")
    env.pop("JITCORE", None)
    proc = subprocess.run([sys.executable, str(script), door], input=_COMMANDS, capture_output=True, text=True,
                          env=env, timeout=240)
    out = proc.stdout
    assert proc.returncode == 0, proc.stderr
    assert "debugged.py(9)with_breakpoint()" in out and "-> return hidden + 1" in out, out
    assert "(Pdb) ['hidden', 'x']" in out, out
    assert "debugged.py(14)with_set_trace()" in out, out
    assert "debugged.py(19)callee()" in out and "(Pdb) ['inner_name', 'y']" in out, out
    assert "___" not in out and "jitcore entry" not in out, out
    assert "RESULT with_breakpoint [3.0, 3.0]" in out and "RESULT with_set_trace [4.0, 4.0]" in out
    assert "RESULT caller [20.0, 20.0]" in out
