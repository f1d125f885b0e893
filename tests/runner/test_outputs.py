"""A run returns what it wrote; Table 1 and the accuracy lines come from one place."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest
from api_fakes import FAKE_KEY, FakeServer, Reply, openai_completion, write_config

from enade_bench.backends.api.backend import ApiBackend
from enade_bench.backends.api.keys import resolve_api_key
from enade_bench.backends.base import BatchLogProbBackend, GenerationBackend, StreamingBackend
from enade_bench.benchmarks import run_config
from enade_bench.cli.main import main
from enade_bench.config import ApiConfig
from enade_bench.results.store import read_result
from enade_bench.runner.outputs import accuracy_line
from enade_bench.runner.plan import RunOptions


def _answer_a(req: Any) -> Reply:
    return Reply(200, openai_completion("Resposta: A"))


def test_outcome_lists_every_file_written_and_the_cli_prints_them(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    with FakeServer(_answer_a) as server:
        cfg = write_config(
            tmp_path,
            {"provider": "openai", "model": "m", "api_key": FAKE_KEY, "base_url": server.url + "/v1"},
        )
        outcome = run_config(cfg, RunOptions(strategies=["S1", "S4"], limit=3, progress=False))
        out = tmp_path / "out"
        assert outcome.written == [
            out / "api_test_S1_results.json",
            out / "api_test_S1_summary.csv",
            out / "api_test_S4_results.json",
            out / "api_test_S4_summary.csv",
            out / "api_test_table1.csv",
        ]
        assert all(path.is_file() for path in outcome.written)
        assert [r.strategy.id for r in outcome.results] == ["S1", "S4"]
        capsys.readouterr()
        assert main(["run", str(cfg), "--strategy", "S1", "--strategy", "S4", "--limit", "3", "--quiet"]) == 0
        printed = capsys.readouterr().out.splitlines()
        one = RunOptions(strategies=["S1"], limit=3, progress=False, output_dir=tmp_path / "one")
        single = run_config(cfg, one)
    assert printed == [accuracy_line(r) for r in outcome.results] + [f"wrote {p}" for p in outcome.written]
    assert [p.name for p in single.written] == ["api_test_S1_results.json", "api_test_S1_summary.csv"]


def test_accuracy_line() -> None:
    data = Path(__file__).resolve().parents[1] / "results" / "data" / "v1_demo_S4_results.json"
    result = read_result(data)
    t = result.totals
    assert accuracy_line(result) == (
        f"S4: accuracy {t.correct / t.n:.3f} [{t.ci95[0]:.3f}, {t.ci95[1]:.3f}] "
        f"on {len(result.records)} items ({sum(r.prediction is None for r in result.records)} unanswered)"
    )


def test_optional_abilities_are_protocols(smollm2_backend) -> None:  # type: ignore[no-untyped-def]
    cfg = ApiConfig(provider="openai", model="m", api_key=FAKE_KEY)
    api = ApiBackend(cfg, resolve_api_key(cfg))
    assert isinstance(api, StreamingBackend) and isinstance(api, GenerationBackend)
    assert not isinstance(api, BatchLogProbBackend)
    assert isinstance(smollm2_backend, BatchLogProbBackend)
    assert isinstance(smollm2_backend, GenerationBackend) and not isinstance(
        smollm2_backend, StreamingBackend
    )


def test_table1_holds_every_strategy_on_disk_when_two_processes_share_a_folder(tmp_path: Path) -> None:
    """Before: S1+S2 and S3+S4 run by two processes gave a Table 1 of the last process's two only."""
    with FakeServer(_answer_a) as server:
        cfg = write_config(
            tmp_path,
            {"provider": "openai", "model": "m", "api_key": FAKE_KEY, "base_url": server.url + "/v1"},
        )
        run_config(cfg, RunOptions(strategies=["S1", "S2"], limit=2, progress=False))
        outcome = run_config(cfg, RunOptions(strategies=["S3", "S4"], limit=2, progress=False))
    table = tmp_path / "out" / "api_test_table1.csv"
    assert table in outcome.written
    rows = list(csv.DictReader(table.open(encoding="utf-8")))
    assert [r["strategy"] for r in rows] == ["S1", "S2", "S3", "S4"]
    assert all(r["n"] == "2" and r["n_errors"] == "0" for r in rows)


def test_two_models_under_one_experiment_name_are_kept_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 51: two people, one experiment name, one folder, two models: Table 1 names each
    row's model (with a note), and the report refuses to show them as one experiment."""
    with FakeServer(_answer_a) as server:
        for model, strategies in (("m", ["S1", "S2"]), ("other-model", ["S3"])):
            cfg = write_config(
                tmp_path,
                {"provider": "openai", "model": model, "api_key": FAKE_KEY, "base_url": server.url + "/v1"},
            )
            outcome = run_config(cfg, RunOptions(strategies=strategies, limit=2, progress=False))
    table = tmp_path / "out" / "api_test_table1.csv"
    assert table in outcome.written
    rows = list(csv.DictReader(table.open(encoding="utf-8")))
    assert [(r["strategy"], r["model"]) for r in rows] == [("S1", "m"), ("S2", "m"), ("S3", "other-model")]
    assert "holds strategies run by 2 models (m: S1 S2, other-model: S3)" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "out"), "--out", str(tmp_path / "rep")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "experiment 'api_test' was run by model 'other-model' here and by 'm'" in err[0]
