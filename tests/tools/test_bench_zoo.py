"""The model zoo (tools/bench_zoo.py, tools/zoo/): the short zoo gives eager's results under jitcore with no error
reaching the caller, the graph counts it records are the graphs the backend received, and its outcome
classification, comparison and summary say what they claim.

The short zoo is `--small`: 10 small models of timm, torchvision and Hugging Face, run here in this process
(jitcore only: the torch.compile side is the tool's figures, not a correctness check), about a minute on 2 cores.
"""
from __future__ import annotations

import importlib.util
import json
import math

import pytest
import torch

from tools.zoo import catalogue, runner, summary
from tools.zoo.compare import max_difference

_LIBRARY_MODULE = {"timm": "timm", "tv": "torchvision", "hf": "transformers"}

#: models whose capture is known to be one graph (no break anywhere in their forward)
ONE_GRAPH = ("timm/test_resnet", "timm/test_vit", "tv/shufflenet_v2_x0_5",
             "hf/t5",  # copy.deepcopy of its config in forward (values/object_id.py, copy_rules.py)
             "hf/mixtral")  # routing tensors written in place are not inputs (capture/write_order.py)


def _installed(name: str) -> bool:
    return importlib.util.find_spec(_LIBRARY_MODULE[name.split("/")[0]]) is not None


def _run(name: str) -> dict:
    [record] = runner.run([catalogue.parse(name)], compilers=("jitcore",), in_process=True, progress=None,
                          steady_calls=0)
    return record


@pytest.mark.parametrize("name", catalogue.SMALL)
def test_small_zoo_model_matches_eager_without_errors(name):
    if not _installed(name):
        pytest.skip(f"{_LIBRARY_MODULE[name.split('/')[0]]} is not installed (pip install -e '.[zoo]')")
    record = _run(name)
    assert not record.get("skipped"), f"{name} no longer builds: {record['skipped']}"
    state = summary.outcome(record)
    assert state == "ok", f"{name}: {state}: {summary._problem(record, 'jitcore')}"
    jit = record["jitcore"]
    assert jit["fallbacks"] == [], f"{name}: internal errors fell back: {jit['fallbacks']}"
    # the count is what the backend received in the timed run, and explain() on a fresh copy agrees
    assert jit["graphs"] == jit["explain_graphs"], jit
    if name in ONE_GRAPH:
        assert jit["graphs"] == 1 and jit["breaks"] == [], jit


def test_graph_counts_are_the_graphs_the_backend_received():
    """A model with one break where it has to (a .item() feeding Python control flow) records two graphs and
    the break's file:line in this file; the same model without the break records one."""
    from tools.zoo import measure
    from tools.zoo.build import Built

    class Branchy(torch.nn.Module):
        def __init__(self, branch: bool):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)
            self.branch = branch

        def forward(self, x):
            y = self.lin(x)
            if self.branch and y.sum().item() > 0:  # the break: a tensor's value decides Python control flow
                y = y * 2
            return torch.relu(y) + 1

    counts = {}
    for branch in (False, True):
        record: dict = {}
        measure.measure(Built(Branchy(branch).eval(), (torch.randn(2, 4),), {}), record, lambda: None,
                        torch.device("cpu"), "eager", ("jitcore",), steady_calls=0)
        counts[branch] = record["jitcore"]
    assert counts[False]["graphs"] == 1 and counts[False]["breaks"] == []
    assert counts[True]["graphs"] == 2 and counts[True]["correct"]
    line = next(i for i, text in enumerate(open(__file__, encoding="utf-8"), 1) if "# the break:" in text)
    assert counts[True]["breaks"][0]["where"].endswith(f"test_bench_zoo.py:{line}"), counts[True]["breaks"]


def test_a_model_past_its_timeout_is_recorded_as_timed_out_not_lost():
    [record] = runner.run([catalogue.parse("timm/test_resnet")], timeout=0.5, compilers=("jitcore",),
                          progress=None)
    assert record["timed_out"] and summary.outcome(record) == "timeout"


def _record(name, state="ok", jit_graphs=1, torch_graphs=1, first=(1.0, 2.0), steady=(1.0, 1.0), **extra):
    jit = {"graphs": jit_graphs, "first_s": first[0], "steady_s": steady[0], "correct": state == "ok",
           "max_diff": 0.0 if state == "ok" else 5.0, "breaks": [], "fallbacks": []}
    if state == "error":
        jit = {"error": {"type": "SyntaxError", "message": "boom", "raised_at": "x.py:1", "user_frame": "m.py:2"}}
    return {"name": name, "compilers": ["jitcore", "torch"], "eager": {"deterministic": True}, "jitcore": jit,
            "torch": {"graphs": torch_graphs, "first_s": first[1], "steady_s": steady[1], "correct": True,
                      "breaks": 0}, **extra}


def test_outcomes_geomeans_and_graph_gaps_of_the_summary():
    records = [
        _record("a", first=(1.0, 4.0), steady=(1.0, 2.0)),
        _record("b", first=(1.0, 1.0), steady=(2.0, 2.0), jit_graphs=3, torch_graphs=1),
        _record("c", jit_graphs=0, torch_graphs=1),
        _record("d", state="wrong"),
        _record("e", state="error"),
        {"name": "f", "skipped": "eager fails"},
        {"name": "g", "phase": "jitcore", "timed_out": True, "compilers": ["jitcore", "torch"]},
    ]
    result = summary.Summary.of(records)
    assert result.counts["ok"] == 3 and result.counts["wrong"] == 1 and result.counts["error"] == 1
    assert result.counts["skipped"] == 1 and result.counts["timeout"] == 1
    assert math.isclose(result.first_ratio, (0.25 * 1.0 * 0.5) ** (1 / 3))
    assert result.more == 1 and result.none == 1 and result.same == 1
    assert [r["name"] for r in summary.more_graphs(records)] == ["b", "c"]
    triage = summary.findings(records)
    assert "1 × error: SyntaxError" in triage and "`d`" in triage and "`g`" in triage
    assert math.isnan(result.first_cpu_ratio) and "CPU time" not in result.lines()[-1]
    records[0]["jitcore"]["first_cpu_s"], records[0]["torch"]["first_cpu_s"] = 1.0, 5.0
    records[1]["jitcore"]["first_cpu_s"], records[1]["torch"]["first_cpu_s"] = 1.0, 1.25
    with_cpu = summary.Summary.of(records)
    assert math.isclose(with_cpu.first_cpu_ratio, (0.2 * 0.8) ** 0.5)
    assert "first call in process CPU time 0.40x" in with_cpu.lines()[-1]


def test_comparison_scales_to_eager_values_and_catches_structure():
    a = {"logits": torch.tensor([1000.0, 2.0]), "ids": torch.tensor([1, 2])}
    assert max_difference(a, {"logits": torch.tensor([1000.05, 2.0]), "ids": torch.tensor([1, 2])}) <= 1
    assert max_difference(a, {"logits": torch.tensor([1000.0, 3.0]), "ids": torch.tensor([1, 2])}) > 1
    assert max_difference(a, {"logits": torch.tensor([1000.0, 2.0]), "ids": torch.tensor([1, 3])}) == math.inf
    assert max_difference(a, {"logits": torch.tensor([1000.0, 2.0])}) == math.inf
    assert max_difference((torch.ones(2), None), (torch.ones(2), 0)) == math.inf


def test_catalogue_names_and_selection():
    assert catalogue.parse("hf/gpt2:causal_lm") == catalogue.Entry("hf", "gpt2", "causal_lm")
    with pytest.raises(ValueError, match="unknown head"):
        catalogue.parse("hf/gpt2:lm")
    with pytest.raises(ValueError, match="timm/NAME"):
        catalogue.parse("resnet18")
    assert [e.name for e in catalogue.select(small=True, libraries=("timm",))] == \
        [n for n in catalogue.SMALL if n.startswith("timm/")]
    assert catalogue.timm_family("resnet50d", "resnet") == "resnet"
    assert catalogue.timm_family("seresnext26t_32x4d", "resnet") == "resnet.seresnext"
    assert catalogue.tv_family("mobilenet_v3_small") == "mobilenet_v3"
    assert catalogue.tv_family("regnet_y_400mf") == "regnet_y"


def test_fresh_caches_give_each_compile_its_own_directory_and_put_the_environment_back(monkeypatch):
    from tools.zoo.measure import compile_caches
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "/somewhere/else")
    monkeypatch.delenv("TRITON_CACHE_DIR", raising=False)
    seen = []
    for _ in range(2):
        with compile_caches("fresh") as folder:
            import os
            seen.append((folder, os.environ["TORCHINDUCTOR_CACHE_DIR"], os.environ["TRITON_CACHE_DIR"]))
            assert os.path.isdir(folder) and not os.listdir(folder)
        assert not os.path.exists(folder)
    (first, inductor1, triton1), (second, inductor2, _) = seen
    assert first != second and inductor1 == first and inductor2 == second and triton1.startswith(first)
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == "/somewhere/else" and "TRITON_CACHE_DIR" not in os.environ
    with compile_caches("shared") as folder:
        assert folder is None and os.environ["TORCHINDUCTOR_CACHE_DIR"] == "/somewhere/else"
    with pytest.raises(ValueError, match="fresh, shared"):
        with compile_caches("none"):
            pass


def test_each_measured_compiler_compiles_inside_its_own_fresh_cache_directory():
    """Both compilers' backends run while TORCHINDUCTOR_CACHE_DIR names a directory of their own (a backend
    registered under one name for jitcore and torch.compile records it), so the second compiler of a model, or
    a concurrent job, never finds the first one's inductor cache entries."""
    import os

    from torch._dynamo.backends import registry as dynamo_registry

    from jitcore.backends import registry as jit_registry
    from tools.zoo.build import Built
    from tools.zoo.measure import measure

    dirs = []

    def probe(gm, example_inputs):
        dirs.append(os.environ.get("TORCHINDUCTOR_CACHE_DIR"))
        return gm.forward

    name = "zoo_cache_probe"
    if name not in jit_registry.list_names():
        jit_registry.register_backend(name, probe)
    if name not in dynamo_registry._BACKENDS:
        dynamo_registry.register_backend(probe, name=name)
    before = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    record: dict = {}
    measure(Built(model, (torch.randn(2, 4),), {}), record, lambda: None, torch.device("cpu"), name,
            steady_calls=0, caches="fresh")
    assert record["jitcore"]["correct"] and record["torch"]["correct"] and record["caches"] == "fresh"
    jitcore_dirs = set(dirs[:record["jitcore"]["graphs"]])
    torch_dirs = set(dirs[-record["torch"]["graphs"]:])
    assert len(jitcore_dirs) == 1 and len(torch_dirs) == 1 and None not in jitcore_dirs | torch_dirs
    assert jitcore_dirs != torch_dirs
    assert os.environ.get("TORCHINDUCTOR_CACHE_DIR") == before


def test_steady_tool_prints_one_row_per_model_with_both_compilers_graphs(capsys):
    from tools import bench_zoo_steady
    assert bench_zoo_steady.main(["--only", "timm/test_resnet", "--rounds", "1", "--calls", "2"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| `timm/test_resnet`"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[1] == "1/1" and all(float(cell) > 0 for cell in cells[2:])
    assert "geomean jitcore/torch.compile steady" in out


def test_first_call_tool_captures_from_scratch_in_every_round(capsys, tmp_path):
    # the last round's backends received one graph each: every round compiled afresh, none found a cached entry
    from tools import bench_first_call
    table = tmp_path / "first.json"
    assert bench_first_call.main(["--only", "timm/test_resnet", "--rounds", "2", "--json", str(table)]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| `timm/test_resnet`"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[1] == "1/1" and all(float(cell) > 0 for cell in cells[2:])
    assert "geomean jitcore/torch.compile first call" in out
    (saved,) = json.loads(table.read_text())
    assert saved["graphs"] == [1, 1] and saved["ratio"] == saved["jitcore"] / saved["torch.compile"]
