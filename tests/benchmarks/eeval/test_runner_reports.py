"""E-EVAL through the core runner with an instant fake backend: results, summaries, leaderboard."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from tests.benchmarks.eeval.helpers import FixedLetterBackend, raw_rows, write_config

from enade_bench.benchmarks import run_config
from enade_bench.benchmarks.eeval.report import leaderboard, leaderboard_csv, leaderboard_markdown
from enade_bench.cli.main import main
from enade_bench.runner.plan import RunOptions


def _answers(eeval_root: Path) -> dict[str, list[str]]:
    return {
        f.stem.removesuffix("_val").lower(): [
            r["answer"].strip() for r in raw_rows(f)
        ]  # a few keys carry a trailing space
        for f in sorted((eeval_root / "val").glob("*_val.csv"))
    }


def _share(answers: dict[str, list[str]], letter: str) -> float:
    flat = [a for rows in answers.values() for a in rows]
    return sum(a == letter for a in flat) / len(flat)


@pytest.fixture(scope="module")
def two_models(eeval_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Val runs of two fixed-letter 'models' in all three settings, one results folder."""
    out = tmp_path_factory.mktemp("eeval_results")
    for letter in "AB":
        config = write_config(
            out / f"m{letter}.yaml", name=f"model_{letter}", data=eeval_root / "val", output=out
        )
        options = RunOptions(progress=False, backend_factory=lambda c, x=letter: FixedLetterBackend(x))
        results = run_config(config, options).results  # what `python run.py CONFIG` calls
        assert [r.strategy.id for r in results] == ["ao0", "ao5", "cot5"]
    return out


def test_results_files_and_extraction_shares(two_models: Path, eeval_root: Path) -> None:
    result = json.loads((two_models / "model_A_cot5_results.json").read_text(encoding="utf-8"))
    n = sum(len(v) for v in _answers(eeval_root).values())
    assert result["totals"]["n"] == n
    assert result["totals"]["extraction"] == {"so_answer": {"count": n, "share": 1.0}}
    assert result["strategy"]["kind"] == "cot" and result["strategy"]["k"] == 5
    assert all(r["prompt"].endswith("答案：让我们一步一步思考，\n1. ") for r in result["records"])
    ao = json.loads((two_models / "model_A_ao0_results.json").read_text(encoding="utf-8"))
    assert ao["totals"]["extraction"] == {"leading_letter": {"count": n, "share": 1.0}}
    for stem in ("model_A_ao0", "model_A_ao5", "model_A_cot5"):
        for suffix in ("_summary.csv", "_subjects.csv", "_eeval.json", "_intermediate.jsonl"):
            assert (two_models / f"{stem}{suffix}").exists()


def test_per_subject_and_per_level_accuracy(two_models: Path, eeval_root: Path) -> None:
    answers = _answers(eeval_root)
    summary = json.loads((two_models / "model_B_ao5_eeval.json").read_text(encoding="utf-8"))
    assert set(summary["by_subject"]) == set(answers)
    for key, rows in answers.items():
        block = summary["by_subject"][key]
        assert block["n"] == len(rows)
        assert block["accuracy"] == pytest.approx(sum(a == "B" for a in rows) / len(rows))
    for level in ("primary", "middle", "high"):
        rows = [a for key, v in answers.items() if key.startswith(level) for a in v]
        assert summary["by_level"][level]["accuracy"] == pytest.approx(Counter(rows)["B"] / len(rows))
    assert summary["by_subject"]["primary_school_science"]["name_zh"] == "小学科学"


def test_leaderboard_layout_and_values(two_models: Path, eeval_root: Path) -> None:
    answers = _answers(eeval_root)
    rows = {r.experiment: r for r in leaderboard(two_models)}
    assert set(rows) == {"model_A", "model_B"}
    for letter in "AB":
        row = rows[f"model_{letter}"]
        expected = _share(answers, letter)
        assert row.scores == pytest.approx({"ao0": expected, "ao5": expected, "cot5": expected})
        assert row.average == pytest.approx(expected)
    table = leaderboard_markdown(list(rows.values()))
    assert table.splitlines()[0] == "| Model | 0-shot AO | 5-shot AO | 5-shot CoT | Average |"
    assert f"{100 * _share(answers, 'A'):.1f}" in table
    assert (
        leaderboard_csv(list(rows.values()))
        .splitlines()[0]
        .startswith("experiment,model,ao0,ao5,cot5,average")
    )


def test_leaderboard_cli(two_models: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert (
        main(["eeval", "leaderboard", str(two_models), "--format", "csv", "--out", str(tmp_path / "lb.csv")])
        == 0
    )
    out = capsys.readouterr().out
    assert out == (tmp_path / "lb.csv").read_text(encoding="utf-8")
    assert len(out.splitlines()) == 3


def test_leaderboard_of_an_empty_folder_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eeval", "leaderboard", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and len(err.strip().splitlines()) == 1


def test_resume_does_not_recompute(eeval_root: Path, tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "c.yaml",
        name="resume",
        data=eeval_root / "val",
        output=tmp_path,
        subjects=["primary_school_english"],
    )
    first = FixedLetterBackend("C")
    run_config(config, RunOptions(strategies=["cot2"], progress=False, backend_factory=lambda c: first))
    before = (tmp_path / "resume_cot2_results.json").read_text(encoding="utf-8")
    again = FixedLetterBackend("C")
    run_config(config, RunOptions(strategies=["cot2"], progress=False, backend_factory=lambda c: again))
    assert first.generated and not again.generated
    after = json.loads((tmp_path / "resume_cot2_results.json").read_text(encoding="utf-8"))
    assert after["records"] == json.loads(before)["records"]


def test_eeval_run_rejects_a_non_eeval_config(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.conftest import REPO_ROOT

    assert main(["eeval", "run", str(REPO_ROOT / "configs" / "demo.yaml")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "benchmark" in err and len(err.strip().splitlines()) == 1


def test_unknown_setting_is_one_error_line(
    eeval_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(tmp_path / "c.yaml", name="bad", data=eeval_root / "val", output=tmp_path)
    assert main(["eeval", "run", str(config), "--setting", "S1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown E-EVAL setting 'S1'") and len(err.strip().splitlines()) == 1
