"""Report folders: only what a report wrote is cleaned; a stopped report says so (issue 26);
the comparison leads, in percent, with the models in the order given (issue 27)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from tests.report.test_unit import _records, write_run

from enade_bench.cli.main import main
from enade_bench.errors import UserError
from enade_bench.metrics import field_breakdowns, summarize
from enade_bench.report import load_results
from enade_bench.report.folder import MANIFEST, MARKER, ReportFolder
from enade_bench.report.tables import table1
from enade_bench.results.records import QuestionRecord


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    write_run(root / "b", "beta", "S1", [True, False, False, False])
    write_run(root / "b", "beta", "S2", [True, True, True, False])
    write_run(root / "a", "alpha", "S1", [True, True, False, False])
    write_run(root / "a", "alpha", "S2", [True, False, False, False])
    return root


def _compared(name: str) -> bool:
    """A file of the comparison across models (tables under comparison/, its own figure)."""
    return "comparison/" in name or name.startswith("comparison") or "comparison_clustered" in name


def _report(*args: str | Path) -> int:
    return main(["report", *map(str, args), "--no-psychometrics"])


def test_a_second_report_removes_the_first_reports_files_and_keeps_the_users(
    runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: a one-model report over an earlier two-model report kept its comparison tables."""
    out = tmp_path / "out"
    assert _report(runs / "a", runs / "b", "--out", out) == 0
    comparison = {
        p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() and _compared(p.as_posix())
    }
    assert comparison, "a two-model report writes the comparison"
    listed = json.loads((out / MANIFEST).read_text(encoding="utf-8"))["files"]
    assert comparison <= set(listed) and "index.html" in listed and not (out / MARKER).exists()
    (out / "my_notes.txt").write_text("mine", encoding="utf-8")

    assert _report(runs / "a", "--out", out) == 0
    left = {p.relative_to(out).as_posix() for p in out.rglob("*")}
    assert not any(_compared(name) for name in left), left
    assert (out / "my_notes.txt").read_text(encoding="utf-8") == "mine"
    assert "my_notes.txt" not in json.loads((out / MANIFEST).read_text(encoding="utf-8"))["files"]
    assert set(pd.read_csv(out / "tables" / "table1.csv")["experiment"]) == {"alpha"}


def test_a_folder_that_no_report_wrote_is_refused(
    runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "thesis.tex").write_text("x", encoding="utf-8")
    assert _report(runs / "a", "--out", out) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --out ") and "holds no report_manifest.json" in err[0]
    assert [p.name for p in out.iterdir()] == ["thesis.tex"]


def test_a_stopped_report_is_marked_and_the_next_one_cleans_up_after_it(runs: Path, tmp_path: Path) -> None:
    """Before: a killed report left 22 of 34 files and no index.html, with no marker."""
    out = tmp_path / "out"
    assert _report(runs / "b", "--out", out) == 0
    (out / "keep.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(KeyboardInterrupt), ReportFolder.open(out):
        assert not (out / "index.html").exists()  # the earlier report's files are gone first
        (out / "tables").mkdir()
        (out / "tables" / "half.csv").write_text("half", encoding="utf-8")
        raise KeyboardInterrupt
    assert (out / MARKER).is_file() and not (out / MANIFEST).exists() and not (out / "index.html").exists()
    assert json.loads((out / MARKER).read_text(encoding="utf-8"))["kept"] == ["keep.txt"]

    assert _report(runs / "a", "--out", out) == 0
    assert not (out / MARKER).exists() and (out / "index.html").is_file()
    assert (out / "keep.txt").read_text(encoding="utf-8") == "mine" and not (
        out / "tables" / "half.csv"
    ).exists()
    assert pd.read_csv(out / "tables" / "table1.csv")["experiment"].tolist() == ["alpha", "alpha"]


def test_models_keep_the_order_given_and_the_comparison_leads_in_percent(runs: Path, tmp_path: Path) -> None:
    """Before: ``report b a`` listed alpha first (alphabetical), ``compare b a`` beta first."""
    entries = load_results([runs / "b", runs / "a"])
    assert [e.experiment for e in entries] == ["beta", "beta", "alpha", "alpha"]
    assert list(table1(entries).display.index) == ["beta", "alpha"]
    out = tmp_path / "out"
    assert _report(runs / "b", runs / "a", "--out", out) == 0
    html = (out / "index.html").read_text(encoding="utf-8")
    assert html.index('id="verdict"') < html.index('id="tables"')
    opening = html[html.index('id="verdict"') : html.index('id="tables"')]
    assert "section-comparison_table1" in opening or "comparison" in opening
    assert opening.count('<table class="data"') >= 3  # Table 1 with groups, the pairs, the flips
    per_run = html[html.index('id="tables"') :]
    assert "<strong>" not in per_run.split("</table>")[0] and "Bold:" not in per_run
    # percent with one decimal everywhere: beta S2 is 3 of 4
    assert "75.0 [30.1, 95.4]" in per_run and "0.750" not in per_run
    course = pd.read_csv(out / "tables" / "accuracy_by_course.csv")
    assert list(dict.fromkeys(course["experiment"])) == ["beta", "alpha"]


def test_a_version_3_file_with_errors_is_rescored(tmp_path: Path) -> None:
    """Version 3 counted 2 errors of 4 records as wrong answers: n = 4, accuracy 0.25."""
    records = _records([True, False, False, False], [0, 1, 2, 0])
    records[2] = records[2].model_copy(
        update={
            "error": "HTTP 401: unauthorised",
            "prediction": None,
            "predicted_position": None,
            "displayed_prediction": None,
        }
    )
    records[3] = records[3].model_copy(
        update={
            "error": "timeout",
            "prediction": None,
            "predicted_position": None,
            "displayed_prediction": None,
        }
    )
    path = write_run(tmp_path / "r", "old", "S1", [True, False, False, False])
    data = json.loads(path.read_text(encoding="utf-8"))
    data["records"] = [r.model_dump(mode="json") for r in records]
    totals = summarize(records).model_dump(mode="json")
    totals.update(n=4, accuracy=0.25, ci95=[0.0456, 0.6994])
    del totals["n_errors"]
    data.update(schema_version=3, totals=totals, breakdowns=field_breakdowns(records, ["course"]))
    data["breakdowns"] = {
        k: {v: c.model_dump(mode="json") for v, c in cells.items()} for k, cells in data["breakdowns"].items()
    }
    del data["complete"]
    path.write_text(json.dumps(data), encoding="utf-8")

    (entry,) = load_results([tmp_path / "r"])
    t = entry.result.totals
    assert (t.n, t.n_errors, t.correct, t.accuracy) == (2, 2, 1, 0.5)
    assert entry.result.complete is False
    assert sum(c.n for c in entry.result.breakdowns["course"].values()) == 2
    assert any("2 of 4 records ended in an error" in w for w in entry.warnings)

    data["totals"]["correct"] = 2  # an altered file is still refused
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(UserError, match="totals.correct is 2"):
        load_results([tmp_path / "r"])


def test_a_file_with_a_blank_named_group_reads_it_as_the_empty_group(tmp_path: Path) -> None:
    """Files written before ``(empty)`` named the group of empty values ``""``; read, they say ``(empty)``."""
    path = write_run(tmp_path / "r", "old", "S1", [True, False, True, False])
    data = json.loads(path.read_text(encoding="utf-8"))
    for record in data["records"][:2]:
        record["fields"]["course"] = ""
    records = [QuestionRecord.model_validate(r) for r in data["records"]]
    cells = field_breakdowns(records, ["year", "course", "component"])
    data["breakdowns"] = {
        k: {("" if v == "(empty)" else v): c.model_dump(mode="json") for v, c in cells.items()}
        for k, cells in cells.items()
    }
    assert "" in data["breakdowns"]["course"]  # as the earlier version wrote it
    path.write_text(json.dumps(data), encoding="utf-8")
    (entry,) = load_results([tmp_path / "r"])
    course = entry.result.breakdowns["course"]
    assert list(course) == ["Enfermagem", "Medicina", "(empty)"] and course["(empty)"].n == 2
    assert entry.result.complete is True and entry.result.totals.n == 4  # nothing else changes
