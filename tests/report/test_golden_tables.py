"""Golden checks: every table's numbers equal what the results files say.

Each test recomputes the numbers from the per-question records of the raw
results JSON (see ``oracle.py``) and compares them with the report's CSV; it
also checks that the LaTeX and HTML views show the same values.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from tests.report import oracle
from tests.report.conftest import DEMO_LIMIT, TEST_CUTOFF, enem_available

pytestmark = pytest.mark.slow


def _close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def _table(report_dir: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(report_dir / "tables" / f"{name}.csv", keep_default_na=True)


def test_all_runs_read_and_old_folder_skipped(results_root: Path, report_dir: Path) -> None:
    runs = oracle.load_runs(results_root)
    t1 = _table(report_dir, "table1")
    assert sorted(zip(t1["experiment"], t1["strategy"], strict=True)) == sorted(
        (r["experiment"], oracle.strategy(r)) for r in runs
    )
    demo = {oracle.strategy(r) for r in runs if r["experiment"].startswith("demo")}
    assert demo == {"S1", "S2", "S3", "S4", "S5", "S6"}
    assert all(
        len({rec["id"] for rec in r["records"]}) == DEMO_LIMIT for r in runs if "demo" in r["experiment"]
    )


def test_table1_matches_records(results_root: Path, report_dir: Path) -> None:
    t1 = _table(report_dir, "table1").set_index(["experiment", "strategy"])
    runs = oracle.load_runs(results_root)
    for run in runs:
        row = t1.loc[(run["experiment"], oracle.strategy(run))]
        recs = run["records"]
        k = sum(r["correct"] for r in recs)
        low, high = oracle.wilson(k, len(recs))
        assert (row["n"], row["correct"]) == (len(recs), k)
        assert _close(row["accuracy"], k / len(recs))
        assert _close(row["ci95_low"], low) and _close(row["ci95_high"], high)
        unanswered = sum(r["prediction"] is None and r["error"] is None for r in recs)
        assert row["unanswered"] == unanswered
    # best per column (several experiments) or per row (one experiment)
    group = "strategy" if t1.index.get_level_values(0).nunique() > 1 else "experiment"
    best = t1.groupby(level=group)["accuracy"].transform("max")
    assert (t1["best"] == (t1["accuracy"] == best)).all()
    tex = (report_dir / "tables" / "table1.tex").read_text(encoding="utf-8")
    assert "\\toprule" in tex and "\\bottomrule" in tex
    # percent, one decimal; with two models the comparison opens the report and nothing is bold
    compared = t1.index.get_level_values(0).nunique() > 1
    assert ("\\textbf{" in tex) is not compared
    for (_, _), row in t1.iterrows():
        cell = f"{100 * row['accuracy']:.1f} [{100 * row['ci95_low']:.1f}, {100 * row['ci95_high']:.1f}]"
        assert (f"\\textbf{{{cell}}}" if row["best"] and not compared else f"& {cell}") in tex


@pytest.mark.parametrize("key", ["course", "component", "year", "area", "booklet", "language"])
def test_breakdowns_match_records(results_root: Path, report_dir: Path, key: str) -> None:
    """One table per grouping field of the runs' exams: ENADE's and, with the ENEM run, ENEM's."""
    if key in ("area", "booklet", "language") and not enem_available():
        pytest.skip("no ENEM run without ../shared/data/enem")
    table = _table(report_dir, f"accuracy_by_{key}")
    table[key] = table[key].astype(str)
    table = table.set_index(["experiment", "strategy", key])
    runs = oracle.load_runs(results_root)
    expected_rows = 0
    for run in runs:
        for value, block in oracle.accuracy_groups(run["records"], key).items():
            row = table.loc[(run["experiment"], oracle.strategy(run), value)]
            expected_rows += 1
            for col, want in block.items():
                assert _close(float(row[col]), float(want)), (run["experiment"], value, col)
    assert len(table) == expected_rows


def test_training_cutoff_split(results_root: Path, report_dir: Path) -> None:
    table = _table(report_dir, "accuracy_by_cutoff").set_index(["experiment", "strategy", "period"])
    runs = [r for r in oracle.load_runs(results_root) if r["config"]["model"].get("training_cutoff")]
    assert runs and {r["config"]["model"]["training_cutoff"] for r in runs} == {TEST_CUTOFF}
    for run in runs:
        for period, keep in (
            ("before", lambda y: y < int(TEST_CUTOFF)),
            ("after", lambda y: y >= int(TEST_CUTOFF)),
        ):
            hits = [r["correct"] for r in run["records"] if keep(r["fields"]["year"])]
            row = table.loc[(run["experiment"], oracle.strategy(run), period)]
            assert row["n"] == len(hits) and row["correct"] == sum(hits)
            if hits:
                assert _close(row["accuracy"], sum(hits) / len(hits))
                low, high = oracle.wilson(sum(hits), len(hits))
                assert _close(row["ci95_low"], low) and _close(row["ci95_high"], high)


def test_position_bias_matches_records(results_root: Path, report_dir: Path) -> None:
    table = _table(report_dir, "position_bias")
    runs = [r for r in oracle.load_runs(results_root) if r["strategy"]["method"] != "log_prob"]
    seen = 0
    for run in runs:
        for k, want in oracle.position_shares(run["records"]).items():
            rows = table[
                (table["experiment"] == run["experiment"])
                & (table["strategy"] == oracle.strategy(run))
                & (table["n_options"] == k)
            ]
            assert list(rows["position"]) == list("ABCDE"[:k])
            assert list(rows["prediction_count"]) == want["counts"].tolist()
            for got, exp in zip(rows["prediction_share"], want["shares"], strict=True):
                assert _close(float(got), float(exp))
            for got, exp in zip(rows["answer_share"], want["answer_shares"], strict=True):
                assert _close(float(got), float(exp))
            assert _close(float(rows["bpc_tvd"].iloc[0]), want["tvd"])
            assert _close(float(rows["chi2"].iloc[0]), want["chi2"])
            assert math.isclose(float(rows["p_value"].iloc[0]), want["p"], rel_tol=1e-7) or (
                math.isnan(want["p"]) and math.isnan(float(rows["p_value"].iloc[0]))
            )
            seen += 1
    assert seen and len(table) == sum(k for run in runs for k in oracle.position_shares(run["records"]))
    assert "S5" not in set(table["strategy"]) and "S6" not in set(table["strategy"])


def test_extraction_shares_match_records(results_root: Path, report_dir: Path) -> None:
    table = _table(report_dir, "extraction")
    runs = oracle.load_runs(results_root)
    expected = {
        (r["experiment"], oracle.strategy(r), rule): share
        for r in runs
        for rule, share in oracle.extraction_shares(r["records"]).items()
    }
    got = {
        (e, s, rule): share for e, s, rule, share in table[["experiment", "strategy", "rule", "share"]].values
    }
    assert got.keys() == expected.keys()
    for key, share in expected.items():
        assert _close(got[key], share), key
    html = (report_dir / "index.html").read_text(encoding="utf-8")
    for key, share in expected.items():
        assert f"{100 * share:.1f}%" in html, key
