"""`python -m jitcore run | explain | demo`: help for each, the run summary, explain of a script's function, and
clear errors for what cannot work. The two commands that run torch do so in a subprocess, once each."""
import textwrap

import pytest

from jitcore.__main__ import main
from tests.cli.helpers import installed_pth, run_python

_SCRIPT = textwrap.dedent("""\
    import sys
    import torch

    def step(x):
        y = x * 2
        print("step ran")
        return y + 1

    if __name__ == "__main__":
        print("MAIN BLOCK", sys.argv[1:])
        for _ in range(2):
            step(torch.ones(3))
""")
_PRINT_LINE = 6  # print("step ran")


@pytest.mark.parametrize("command, expected", [
    (["--help"], "{run,explain,demo}"),
    (["run", "--help"], "python -m jitcore run [-h] [--backend BACKEND] [--log TOPICS]"),
    (["explain", "--help"], "--args is evaluated as the argument list of a call"),
    (["demo", "--help"], "--backend BACKEND"),
])
def test_each_command_has_help(capsys, command, expected):
    with pytest.raises(SystemExit) as info:
        main(command)
    assert info.value.code == 0
    assert expected in capsys.readouterr().out


@pytest.mark.skipif(installed_pth() is None, reason="jitcore is not installed in this interpreter")
def test_run_compiles_the_script_and_ends_with_a_summary(tmp_path):
    (tmp_path / "script.py").write_text(_SCRIPT)
    proc = run_python(["-m", "jitcore", "run", "script.py", "--flag", "1"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["MAIN BLOCK ['--flag', '1']", "step ran", "step ran"]
    summary = proc.stderr
    assert "jitcore · summary" in summary
    assert "1 function compiled · 2 graphs · 1 break · 0 recompiles" in summary
    assert "step()" in summary and "\n script.py:4" in summary  # the function, its file:line on the next line
    assert f"break script.py:{_PRINT_LINE} in step(): printing, logging and I/O have to run in Python" in summary


@pytest.mark.skipif(installed_pth() is None, reason="jitcore is not installed in this interpreter")
def test_explain_reports_a_function_of_a_script_without_running_its_main_block(tmp_path):
    (tmp_path / "script.py").write_text(_SCRIPT)
    proc = run_python(["-m", "jitcore", "explain", "script.py:step", "--args", "torch.ones(3)",
                       "--html", "report.html"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "MAIN BLOCK" not in out
    assert out.splitlines().count("step ran") == 1  # explain ran step once
    assert "graphs: 2   graph breaks: 1   ops: 2" in out
    assert f"script.py:{_PRINT_LINE} in step()" in out
    assert f"step() from line {_PRINT_LINE}, after `print(\"step ran\")`" in out
    page = (tmp_path / "report.html").read_text()
    assert f"script.py:{_PRINT_LINE}" in page and "graph breaks</td><td>1</td>" in page


def test_explain_of_a_function_that_needs_arguments_says_how_to_pass_them(tmp_path, capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "needs_args.py").write_text("def step(x, scale=2.0):\n    return x * scale\n")
    assert main(["explain", f"{tmp_path / 'needs_args.py'}:step"]) == 2
    err = capsys.readouterr().err
    assert "step needs arguments (x); pass them with --args" in err
    assert '--args "torch.randn(4, 8), 3"' in err


@pytest.mark.parametrize("target, message", [
    ("no_colon.py", "explain needs SCRIPT:FUNCTION"),
    ("missing.py:f", "no such script: missing.py"),
])
def test_explain_target_errors_are_clear(capsys, target, message):
    assert main(["explain", target]) == 2
    assert message in capsys.readouterr().err


def test_explain_of_a_missing_function_names_it(tmp_path, capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "tiny_script.py").write_text("x = 1\n")
    assert main(["explain", f"{tmp_path / 'tiny_script.py'}:nope"]) == 2
    assert "has no 'nope'" in capsys.readouterr().err


def test_bad_args_expression_is_a_clear_error(tmp_path, capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "args_script.py").write_text("def f(x):\n    return x\n")
    assert main(["explain", f"{tmp_path / 'args_script.py'}:f", "--args", "torch.nope(3)"]) == 2
    assert "--args 'torch.nope(3)' could not be evaluated: AttributeError" in capsys.readouterr().err


def test_run_with_a_bad_log_value_lists_the_valid_topics(tmp_path, capsys):
    (tmp_path / "script.py").write_text("print('never')\n")
    assert main(["run", "--log", "breaks,bogus", str(tmp_path / "script.py")]) == 2
    err = capsys.readouterr().err
    assert ("unknown JITCORE_LOG topic 'bogus'; valid topics are: recompiles, breaks, guards, graphs, fallbacks, "
            "distributed, all") in err


def test_run_of_a_missing_script_is_a_clear_error(capsys):
    assert main(["run", "no_such_script.py"]) == 2
    assert "no such script: no_such_script.py" in capsys.readouterr().err
