"""A pair's test: which one a cell's records choose, and the notes that say so (issue 52, item 7)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from tests.metrics.test_paired_signflip import _size

from enade_bench.cli.main import main
from enade_bench.compare.analysis import CompareOptions, compare_table
from enade_bench.compare.render import pairs_table
from enade_bench.metrics.paired import EXACT, MCNEMAR, PAIRED_T, SCORE_TEST_NOTE, SIGN_FLIP
from enade_bench.metrics.power import pair_mdd
from enade_bench.metrics.power_clustered import clustered_mdd


def _long(
    n: int, extra_replicate: bool, models: tuple[tuple[str, float], ...] = (("a", 0.8), ("b", 0.5))
) -> pd.DataFrame:
    """n questions with one record per model; with ``extra_replicate`` the last has 3 shuffles."""
    rng = np.random.default_rng(n)
    rows = []
    for model, p in models:
        for i in range(n):
            replicates = 3 if extra_replicate and i == n - 1 else 1
            rows += [
                {
                    "model": model,
                    "item": f"q{i}",
                    "replicate": str(r),
                    "correct": int(rng.random() < p),
                    "strategy": "S1",
                    "cluster": "",
                    "stem": "",
                    "answer": "",
                    "prediction": "",
                }
                for r in range(replicates)
            ]
    return pd.DataFrame(rows)


def test_a_mixed_cell_keeps_its_size_and_the_notes_name_the_test() -> None:
    """Three models on 8 single-record questions and one with 3 shuffles (issue 63's acceptance)."""
    comp = compare_table(_long(9, True, (("a", 0.9), ("b", 0.5), ("c", 0.2))), CompareOptions())
    assert [p.result.test for p in comp.pairs] == [SIGN_FLIP] * 3
    size = _size(9, 0.05)  # the enumerated actual size of that test on this design
    print(f"8 single-record questions and one with 3 shuffles: the sign-flip test's actual size {size:.4f}")
    assert size <= 0.05
    for p in comp.pairs:
        assert p.result.reason in comp.notes[-3 + comp.pairs.index(p)]
        assert "8 of 9 questions have one binary record" in p.result.reason
    table = pairs_table(comp)
    assert all(p.result.reason in table.notes for p in comp.pairs) and "sign-flip" in table.to_latex()
    assert set(comp.pairs_frame()["why_this_test"]) == {p.result.reason for p in comp.pairs}
    plain = compare_table(_long(20, extra_replicate=False), CompareOptions())
    assert plain.pairs[0].result.test == EXACT
    assert not any("binary record" in n for n in plain.notes) and SCORE_TEST_NOTE not in plain.notes


def test_the_score_tests_size_is_in_the_note_above_the_switch() -> None:
    comp = compare_table(_long(120, extra_replicate=False), CompareOptions())
    assert comp.pairs[0].result.test == MCNEMAR and SCORE_TEST_NOTE in comp.notes


def test_the_mdd_takes_the_records_the_comparison_counted_not_ones_read_off_the_scores() -> None:
    """30 shuffles on which each model answers each question alike: every question score is 0 or 1,
    from which a reading of the scores alone infers one record per question (it took that before)."""
    rng = np.random.default_rng(7)
    right = {m: rng.random(24) < p for m, p in (("a", 0.75), ("b", 0.5))}
    rows = [
        {
            "model": m,
            "item": f"q{i}",
            "replicate": str(r),
            "correct": int(right[m][i]),
            "strategy": "S4",
            "cluster": f"t{i // 2}",
            "stem": "",
            "answer": "",
            "prediction": "",
        }
        for m in right
        for i in range(24)
        for r in range(30)
    ]
    result = compare_table(pd.DataFrame(rows), CompareOptions()).pairs[0].result
    assert result.test == PAIRED_T and result.records == (30,) * 24
    d, m = np.asarray(result.differences), np.asarray(result.bases)
    counted = clustered_mdd(d, result.clusters, 0.05, bases=m, records=30)
    read_off = clustered_mdd(d, result.clusters, 0.05, bases=m, records=1)
    assert pair_mdd(result, 0.05) == counted != read_off


def test_pairs_csv_of_a_28_question_clustered_comparison_holds_the_mdds_range(tmp_path: Path) -> None:
    rng = np.random.default_rng(28)
    texts = np.sort(np.r_[np.arange(13), rng.integers(0, 13, 15)])
    ease = rng.normal(0, 1.2, 28)
    rows = [
        {"model": m, "item": f"q{i}", "replicate": str(r), "cluster": f"t{texts[i]}", "strategy": "S1"}
        | {"correct": int(rng.random() < 1 / (1 + np.exp(-(ease[i] + shift))))}
        for m, shift in (("a", 0.6), ("b", 0.0))
        for i in range(28)
        for r in range(30)
    ]
    pd.DataFrame(rows).to_csv(tmp_path / "long.csv", index=False)
    assert main(["compare", str(tmp_path / "long.csv"), "--out", str(tmp_path / "out")]) == 0
    (pair,) = pd.read_csv(tmp_path / "out" / "pairs.csv").itertuples()
    assert pair.test == PAIRED_T and pair.n_clusters == 13
    assert 0 < pair.mdd_80_low < pair.mdd_80 < pair.mdd_80_high < 1
    shown = (tmp_path / "out" / "tables" / "comparison_pairs.tex").read_text(encoding="utf-8")
    assert f"{100 * pair.mdd_80:.1f} ({100 * pair.mdd_80_low:.1f}--{100 * pair.mdd_80_high:.1f})" in shown
