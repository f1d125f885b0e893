"""Fast checks of the report library on synthetic results files (no model)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from enade_bench.cli.main import main
from enade_bench.errors import UserError
from enade_bench.metrics import field_breakdowns, position_bias, summarize
from enade_bench.report import load_results, write_report
from enade_bench.report.table import Table, latex_escape
from enade_bench.report.tables import cutoff_period, table1
from enade_bench.results.records import QuestionRecord, RunResult


def _records(correct: list[bool], predicted: list[int]) -> list[QuestionRecord]:
    out = []
    for i, (ok, pos) in enumerate(zip(correct, predicted, strict=True)):
        answer = "ABCDE"[(pos if ok else pos + 1) % 5]
        out.append(
            QuestionRecord(
                id=f"q{i}",
                fields={
                    "year": 2015 + i % 4,
                    "course": ["Medicina", "Enfermagem"][i % 2],
                    "component": "Formação Geral",
                },
                n_options=5,
                answer=answer,
                prediction="ABCDE"[pos],
                correct=ok,
                method="generation",
                shot="zero",
                strategy="S1",
                permutation=None,
                answer_position="ABCDE".index(answer),
                predicted_position=pos,
                displayed_prediction="ABCDE"[pos],
                extraction_rule="resposta",
                question_hash="h",
                prompt_hash="p",
                prompt="...",
            )
        )
    return out


def write_run(folder: Path, name: str, strategy: str, correct: list[bool], cutoff: str | None = None) -> Path:
    records = _records(correct, [i % 3 for i in range(len(correct))])
    result = RunResult(
        experiment=name,
        strategy={
            "id": strategy,
            "label": "generation, zero-shot",
            "method": "generation",
            "shot": "zero",
            "shuffle": False,
            "n_shuffles": 1,
        },
        config={"name": name, "model": {"name": f"model-{name}", "training_cutoff": cutoff}},
        seed=1,
        environment={"python": "3.11", "libraries": {}, "git": {}},
        model={"backend": "test", "name": f"model-{name}"},
        dataset={"sources": [], "filter_counts": {}, "invalid_rows": [], "n_evaluated": len(records)},
        prompts={},
        totals=summarize(records),
        breakdowns=field_breakdowns(records, ("year", "course", "component")),
        position_bias=position_bias(records),
        records=records,
    )
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}_{strategy}_results.json"
    path.write_text(json.dumps(result.model_dump(mode="json")), encoding="utf-8")
    return path


@pytest.fixture
def two_models(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    write_run(root / "a", "alpha", "S1", [True, True, False, False])
    write_run(root / "a", "alpha", "S2", [True, False, False, False])
    write_run(root / "b", "beta", "S1", [True, False, False, False], cutoff="2017-06")
    write_run(root / "b", "beta", "S2", [True, True, True, False], cutoff="2017-06")
    return root


def test_best_per_column_with_several_models(two_models: Path) -> None:
    table = table1(load_results([two_models]))
    best = table.data.set_index(["experiment", "strategy"])["best"]
    assert best[("alpha", "S1")] and not best[("beta", "S1")]
    assert best[("beta", "S2")] and not best[("alpha", "S2")]
    tex = table.to_latex()
    assert tex.count("\\textbf{") == 2 and "\\begin{tabular}{llrr}" in tex


def test_old_folders_are_skipped_and_duplicates_refused(two_models: Path) -> None:
    shutil.copytree(two_models / "a", two_models / "a_old")
    assert len(load_results([two_models])) == 4
    shutil.copytree(two_models / "a", two_models / "copy")
    with pytest.raises(UserError, match="also in"):
        load_results([two_models])


def test_cutoff_period_rule() -> None:
    assert cutoff_period(2016, "2017-06") == "before"
    assert cutoff_period(2017, "2017-06") == "after"
    assert cutoff_period(2016, None) is None


def test_write_report_without_psychometrics(two_models: Path, tmp_path: Path) -> None:
    folders = [two_models / "a", two_models / "b"]
    report = write_report(load_results(folders), tmp_path / "out", folders=folders)
    names = {t.name for t in report.tables}
    assert {"table1", "accuracy_by_course", "accuracy_by_cutoff", "position_bias", "extraction"} <= names
    assert not any(n.startswith("psychometrics") for n in names)
    cut = pd.read_csv(tmp_path / "out" / "tables" / "accuracy_by_cutoff.csv")
    assert set(cut["experiment"]) == {"beta"}
    for fig in report.figures:
        assert fig.png.stat().st_size > 1000 and fig.pdf.read_bytes().startswith(b"%PDF")
    html = report.index.read_text(encoding="utf-8")
    assert html.count("data:image/png;base64,") == len(report.figures)
    assert "model-alpha" in html and "model-beta" in html


def test_cli_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(tmp_path / "missing"), "--out", str(tmp_path / "o")]) == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["report", str(empty), "--out", str(tmp_path / "o")]) == 2
    assert main(["report", str(empty), "--out", str(tmp_path / "o"), "--enem-data", str(empty)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("error: ") for line in err)


def test_latex_escaping_and_bold() -> None:
    assert latex_escape("a_b & 50% #1") == r"a\_b \& 50\% \#1"
    display = pd.DataFrame({"x": ["1.0", "2.0"]}, index=pd.Index(["r_1", "r2"], name="row"))
    bold = pd.DataFrame({"x": [False, True]}, index=display.index)
    table = Table("t", "T", display, display, bold)
    assert "r\\_1 & 1.0 \\\\" in table.to_latex() and "\\textbf{2.0}" in table.to_latex()
    assert "<td><strong>2.0</strong></td>" in table.to_html()
