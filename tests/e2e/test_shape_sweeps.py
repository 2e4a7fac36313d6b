"""The shape-sweep corpus (tools/sweep_corpus.py) through jitcore: every call equals eager (values, dtype, shape,
requires_grad, exceptions with their messages, gradients), and no sweep takes more graphs than torch.compile took
on it (`TORCH_COMPILE_GRAPHS`, measured by tools/sweep_diff.py; re-measure with
`PYTHONPATH=. python tools/sweep_diff.py --print-counts`), except where the corpus says why jitcore makes more
(`MORE_GRAPHS_THAN_TORCH_COMPILE`) or where torch.compile is wrong (`TORCH_COMPILE_WRONG`). The differential tool runs every sweep in all four modes against torch.compile
in one process; to stay near a minute on one core, this test runs each sweep once, in one of the four modes
(auto, dynamic=True, dynamic=False, register + enabled()), rotating through them across the corpus.
"""
from __future__ import annotations

import pytest

from tools.sweep_corpus import MORE_GRAPHS_THAN_TORCH_COMPILE, PROGRAMS, TORCH_COMPILE_GRAPHS, TORCH_COMPILE_WRONG
from tools.sweep_diff import MODES, compare_outcome, eager_calls, jit_calls

_CASES = [(program, sweep, MODES[(number + index) % len(MODES)]) for number, program in enumerate(PROGRAMS)
          for index, sweep in enumerate(program.sweeps)]


@pytest.mark.parametrize("program, sweep, mode", _CASES,
                         ids=[f"{p.name}-{s}-{m}" for p, s, m in _CASES])
def test_sweep_equals_eager_with_no_more_graphs_than_torch_compile(program, sweep, mode):
    items = program.sweeps[sweep]
    expected = eager_calls(program, items)
    outcomes, graphs = jit_calls(program, items, mode)
    for index, (item, e, a) in enumerate(zip(items, expected, outcomes)):
        problem = compare_outcome(e, a, messages=True)
        assert problem is None, f"call {index} ({item}): {problem}"
    if program.name in MORE_GRAPHS_THAN_TORCH_COMPILE or f"{program.name}/{sweep}" in TORCH_COMPILE_WRONG:
        return
    limit = TORCH_COMPILE_GRAPHS[f"{program.name}/{sweep}/{'auto' if mode == 'register' else mode}"]
    assert graphs <= limit, f"{graphs} graphs, torch.compile took {limit}"
