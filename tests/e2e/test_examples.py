"""The scripts in examples/ under `JITCORE=1`: the same output as eager, and a console a user can act on: no
internal error, every location in the user's script (never torch's), each break once, a summary that adds up."""
import os
import re

import pytest

from tests.cli.helpers import CHECKOUT, installed_pth, run_python

needs_install = pytest.mark.skipif(installed_pth() is None,
                                   reason="jitcore is not installed in this interpreter (run `make test`)")

EXAMPLES = ("train_loop", "cached_module", "generate")
#: a location jitcore prints: `path/file.py:12`
_LOCATION = re.compile(r"([\w./<>-]+\.py|<[\w ]+>|\?):(\d+)")


def _run(name: str, **env):
    script = os.path.join("examples", f"{name}.py")
    # the console fits the summary table to COLUMNS (80 without a terminal, as in an xdist worker), folding a long
    # function name over lines; a wide console keeps each name on one line for the parsing below
    return run_python([script], CHECKOUT, timeout=600, COLUMNS="200", **env)


def _said(stderr: str) -> list[str]:
    """What jitcore printed, less the bodies of graphs (their `# file:line` comments say where each op came from,
    torch's layers included, which is what the graph is)."""
    return [line for line in stderr.splitlines() if not line.strip().startswith("#")]


def _break_locations(lines: list[str]) -> list[str]:
    found = []
    for index, line in enumerate(lines):
        if "graph break" in line and line.startswith("jitcore"):
            for following in lines[index + 1:index + 3]:
                match = re.match(r"\s+at (\S+:\d+)", following)
                if match:
                    found.append(match.group(1))
                    break
            else:
                found.append("<no location>")
    return found


def _summary(lines: list[str]):
    """(functions, graphs, breaks, recompiles) of the headline, and the table's rows as {column: int}."""
    for index, line in enumerate(lines):
        headline = re.search(r"(\d+) functions? .*· (\d+) graphs? · (\d+) breaks? · (\d+) recompiles?", line)
        if headline:
            break
    else:
        raise AssertionError("no summary in:\n" + "\n".join(lines))
    counts = tuple(int(group) for group in headline.groups())
    header_index = next(i for i in range(index + 1, len(lines)) if lines[i].split()[:2] == ["function", "graphs"])
    columns = lines[header_index].split()[1:]  # graphs, ops, ..., compile
    numeric = columns[:-1]
    rows = []
    for line in lines[header_index + 2:]:
        tokens = line.split()
        if len(tokens) == 1 and re.fullmatch(r"\S+:\d+", tokens[0]):
            continue  # a function's location: the line under its name
        if len(tokens) < len(numeric) + 3 or tokens[-1] != "ms" or not all(t.isdigit() for t in
                                                                            tokens[-2 - len(numeric):-1]):
            break
        rows.append(dict(zip(numeric, (int(t) for t in tokens[-2 - len(numeric):-2]))))
    return counts, rows


@needs_install
@pytest.mark.parametrize("name", EXAMPLES)
def test_example_under_jitcore_1_matches_eager_and_speaks_of_the_users_code(name):
    eager = _run(name)
    assert eager.returncode == 0, eager.stderr
    compiled = _run(name, JITCORE="1", JITCORE_LOG="all")
    assert compiled.returncode == 0, compiled.stderr
    assert compiled.stdout == eager.stdout

    lines = _said(compiled.stderr)
    text = "\n".join(lines)
    assert "internal error" not in text and "please report" not in text, text
    script = f"examples/{name}.py"
    for line in lines:
        for path, _ in _LOCATION.findall(line):
            assert path.endswith(script), f"a location outside {script}: {line!r}"
    assert "unknown location" not in text

    breaks = _break_locations(lines)
    assert len(breaks) == len(set(breaks)), f"a break printed more than once: {breaks}"

    (functions, graphs, break_count, recompiles), rows = _summary(lines)
    assert graphs >= 1
    assert len(rows) == functions
    assert sum(row["graphs"] for row in rows) == graphs
    assert sum(row["breaks"] for row in rows) == break_count
    assert sum(row["recompiles"] for row in rows) == recompiles

