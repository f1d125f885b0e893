"""The ENEM θ-pairs step and table: the shown interval keeps the side of 0 of its pair's adjusted decision."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from tests.psychometrics.theta_table import theta_pairs

from enade_bench.benchmarks.enem.analysis import RANDOM, ExamAnalysis
from enade_bench.benchmarks.enem.files import ExamFile
from enade_bench.benchmarks.enem.steps.common import EnemAnalysis
from enade_bench.benchmarks.enem.steps.theta_pairs import display_pairs, pairs_note, theta_pairs_step
from enade_bench.metrics.simultaneous import decision_levels, holds_zero
from enade_bench.psychometrics.irt import ItemParams
from enade_bench.psychometrics.theta_compare import ThetaSample, pairs_frame


def _printed_excludes_0(text: str) -> bool:
    if "(> 0, " in text or "(< 0, " in text:
        return True
    low, high = (float(v) for v in text.split("[")[1].rstrip("]").split(", "))
    return low > 0 or high < 0


def test_printed_interval_agrees_with_the_adjusted_decision() -> None:
    """Many small tables (some bounds within 0.005 of 0): the printed interval excludes 0 ⇔ adjusted p < 0.05."""
    rng = np.random.default_rng(11)
    frames = []
    for adjust in ("holm", "bonferroni", "bh"):
        for _ in range(60):
            samples = [ThetaSample.of(f"m{m}", rng.normal(rng.normal(0, 0.1), 0.3, 20)) for m in range(4)]
            frames.append(pairs_frame(theta_pairs(samples, adjust=adjust)).assign(exam=f"{adjust}{_}"))
    data = pd.concat(frames, ignore_index=True)
    shown = display_pairs(data, ["exam"])
    printed = shown["Δθ [statement]"].map(_printed_excludes_0).to_numpy()
    assert (printed == (data["p_adjusted"] < 0.05).to_numpy()).all()
    assert (printed == data["different"].to_numpy()).all()
    assert data["different"].any() and not data["different"].all()
    levels = shown["CI level"].str.rstrip(" %").astype(float)
    assert np.allclose(levels, 100 * data["ci_level"], atol=0.01)
    note = pairs_note(data)
    assert all(a in note for a in ("holm: Holm simultaneous", "bonferroni: Bonferroni", "bh: false-coverage"))
    assert "ci_low_unadjusted" in note


def _exam(per_shuffle: pd.DataFrame) -> ExamAnalysis:
    """An analysed exam with only what the θ-pairs step reads: each model × shuffle θ."""
    empty = pd.DataFrame()
    items = ItemParams(("i1",), np.array([1.0]), np.array([0.0]), np.array([0.0]))
    return ExamAnalysis(
        ExamFile(2022, "MT", 1082),
        1082,
        items,
        empty,
        empty,
        per_shuffle,
        empty,
        empty,
        empty,
        empty,
        empty,
        language="pt-br",
    )


def test_step_writes_the_adjusted_and_unadjusted_intervals(tmp_path: Path) -> None:
    """Five models, ten shared shuffles: paired pairs, Holm's simultaneous statements in the CSV, table and notes."""
    rng = np.random.default_rng(12)
    shared = rng.normal(0, 0.3, 10)
    rows = [
        {"respondent": m, "shuffle": k, "theta": mu + shared[k] + rng.normal(0, 0.1)}
        for m, mu in (("a", 0.0), ("b", 0.02), ("c", 0.1), ("d", 0.5), (RANDOM, -2.0))
        for k in range(10)
    ]
    section = theta_pairs_step(EnemAnalysis([], [_exam(pd.DataFrame(rows))]), tmp_path)
    data = section.files["theta_pairs.csv"]
    assert len(data) == 6 and (data["pairing"] == "shuffle").all() and (data["adjust"] == "holm").all()
    assert data["ci_method"].str.startswith("Holm simultaneous").all()
    zero = [
        holds_zero(k, lo, hi)
        for k, lo, hi in zip(data["statement"], data["ci_low"], data["ci_high"], strict=True)
    ]
    excludes = pd.Series(~np.array(zero), index=data.index)
    assert (excludes == (data["p_adjusted"] < 0.05)).all() and (excludes == data["different"]).all()
    assert excludes.any() and not excludes.all()
    assert (data["ci_low"] <= data["ci_low_unadjusted"]).all() and (
        data["ci_high_unadjusted"] <= data["ci_high"]
    ).all()
    assert np.allclose(data["alpha_i"], decision_levels(data["p_value"], 0.05, "holm"))
    (table,) = section.tables
    assert {"Δθ [statement]", "CI level", "Bonferroni α/K CI (magnitude)"} <= set(table.display.columns)
    assert "Holm simultaneous" in table.title + table.notes and "ci_low_unadjusted" in table.notes
