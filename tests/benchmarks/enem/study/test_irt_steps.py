"""The study's letter-prior correction and prediction sets on constructed inputs (fast)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tests.benchmarks.enem.study.test_plan import _cli_error, write_study
from tests.metrics.test_prior_correction import synthetic, tvd

from enade_bench.benchmarks.enem.steps import correct_entries
from enade_bench.benchmarks.enem.study.config import VerdictRule
from enade_bench.benchmarks.enem.study.plan import plan_study
from enade_bench.benchmarks.enem.study.report import theta_overview_figure, verdict_table
from enade_bench.report.loader import RunEntry
from enade_bench.results.records import RunResult


@pytest.fixture(autouse=True)
def _shared() -> None:
    from tests.conftest import require_shared

    require_shared("enem", "inep_items.csv")


def _entry(records: list, path: Path) -> RunEntry:  # type: ignore[type-arg]
    return RunEntry(path, RunResult.model_construct(records=records))


def test_correct_entries_replaces_biased_records_and_notes_unscored_runs(tmp_path: Path) -> None:
    plan = plan_study(write_study(tmp_path))
    run = plan.runs[0]
    biased, prior = synthetic("first_token", seed=3)
    unscored = [r.model_copy(update={"option_scores": None}) for r in biased]
    label = (run.model, run.area, run.language)
    fixed, corrections, notes = correct_entries(
        [_entry(biased, tmp_path / "a.json"), _entry(unscored, tmp_path / "b.json")],
        "question",
        [label, label],
    )
    assert fixed[1] is None and fixed[0] is not None and len(corrections) == 1
    assert len(notes) == 1 and "smollm2 on MT pt-br" in notes[0] and "letter scores" in notes[0]
    pc = corrections[0].correction
    assert np.allclose(pc.prior[5], prior / prior.sum(), atol=0.03)
    records = fixed[0].result.records
    assert records is pc.records and len(records) == len(biased)
    assert tvd(pc, corrected=False) > 0.4 and tvd(pc, corrected=True) < 0.1
    assert [r.extra["raw"]["prediction"] for r in records if r.extra] == [
        b.prediction for b, r in zip(biased, records, strict=True) if r.extra
    ]
    assert biased[0].extra is None  # the raw records are left as they were


def test_prediction_sets(tmp_path: Path) -> None:
    assert plan_study(write_study(tmp_path)).config.prediction_sets == ("raw", "corrected")
    assert plan_study(write_study(tmp_path, predictions="raw")).config.prediction_sets == ("raw",)
    assert plan_study(write_study(tmp_path, predictions="corrected")).config.prediction_sets == ("corrected",)


def test_corrected_predictions_need_letter_scores(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = _cli_error(write_study(tmp_path, predictions="corrected", method="generation"), capsys)
    assert "key 'predictions'" in line and "needs method first_token or log_prob" in line
    assert not (tmp_path / "out").exists()
    line = _cli_error(write_study(tmp_path, predictions="debiased"), capsys)
    assert "'predictions'" in line
    line = _cli_error(write_study(tmp_path, dif={"alpha": 0.05, "min": 3}), capsys)
    assert "dif.min" in line


def _verdict_rows() -> pd.DataFrame:
    base = {
        "area": "MT",
        "language": "pt-br",
        "n_shuffles": 3,
        "n_items": 45,
        "accuracy": 0.2,
        "theta_low": -1.0,
        "theta_high": 0.0,
        "se": 0.6,
        "score": 420.0,
        "score_low": 380.0,
        "score_high": 470.0,
        "n_assessable": 3,
        "aberrant_share": 0.0,
        "relative_information": 0.03,
        "side": "below",
        "verdict": "outside the exam's range",
    }
    return pd.DataFrame(
        [
            {**base, "model": "random baseline", "predictions": "raw", "baseline": True, "theta": -0.5},
            {**base, "model": "m", "predictions": "raw", "baseline": False, "theta": -0.6},
            {**base, "model": "m", "predictions": "corrected", "baseline": False, "theta": -0.4},
        ]
    )


def test_verdict_table_and_overview_keep_raw_and_corrected_apart() -> None:
    table = verdict_table(_verdict_rows(), VerdictRule())
    assert list(table.display.index.names) == ["model", "predictions", "area", "language"]
    assert ("m", "corrected", "MT", "pt-br") in table.display.index
    assert "corrected" in table.notes
    fig = theta_overview_figure(_verdict_rows())
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert {"m", "m (corrected)", "random baseline"} <= set(labels)
