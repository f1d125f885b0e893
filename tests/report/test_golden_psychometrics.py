"""Golden checks of the psychometric tables of an ENEM shuffle run.

θ (EAP), SE, l_z, the ENEM score and accuracy per shuffle are recomputed from
the records and INEP's item table with the textbook formulas of ``oracle.py``;
the report's mean and percentile interval over shuffles must match.
"""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tests.conftest import require_shared
from tests.report import oracle
from tests.report.conftest import ENEM_SHUFFLES

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def enem_dir() -> Path:
    return require_shared("enem")


@pytest.fixture(scope="module")
def per_shuffle(results_root: Path, enem_dir: Path) -> pd.DataFrame:
    """θ, SE, l_z, score and accuracy of every shuffle of the ENEM run, recomputed."""
    (run,) = [r for r in oracle.load_runs(results_root) if r["records"][0]["id"].startswith("ENEM_")]
    stem = run["records"][0]["id"].split(":")[0]
    code, area = int(stem.rsplit("_", 1)[1]), stem.split("_")[2]
    booklet = oracle.booklet_params(enem_dir, code)
    params = {slot: (a, b, c) for slot, a, b, c, _ in booklet}
    item_ids = {slot: item for slot, *_, item in booklet}
    with (enem_dir / "questions" / "pt-br" / f"{stem}.csv").open(encoding="utf-8") as handle:
        questions = list(csv.DictReader(handle))
    numbers = sorted({int(r["question_number"]) for r in questions})
    with (enem_dir / "inep_scale_constants.csv").open(encoding="utf-8") as handle:
        const = next(r for r in csv.DictReader(handle) if r[next(iter(r))] == area)
    k, d = float(const["k"]), float(const["d"])
    rows = []
    for shuffle in sorted({r["shuffle"] for r in run["records"]}):
        recs = [r for r in run["records"] if r["shuffle"] == shuffle]
        slots = [numbers.index(int(r["id"].split(":")[1])) for r in recs]
        scored = [(r, params[s]) for r, s in zip(recs, slots, strict=True) if s in params]
        x = np.array([float(r["correct"]) for r, _ in scored])
        a, b, c = (np.array([p[i] for _, p in scored]) for i in range(3))
        theta, se = oracle.eap(x, a, b, c)
        rows.append(
            {
                "shuffle": shuffle,
                "theta": theta,
                "se": se,
                "lz": oracle.lz(x, theta, a, b, c),
                "score": k * theta + d,
                "accuracy": np.mean([r["correct"] for r in recs]),
                "n_items": len(scored),
            }
        )
    frame = pd.DataFrame(rows)
    frame.attrs.update(experiment=run["experiment"], k=k, d=d)
    answered = {numbers.index(int(r["id"].split(":")[1])) for r in run["records"]}
    frame.attrs["stem_digits"] = {
        item_ids[numbers.index(int(q["question_number"]))]: bool(re.search(r"\d", q["body"]))
        for q in questions
        if numbers.index(int(q["question_number"])) in answered
        and numbers.index(int(q["question_number"])) in item_ids
    }
    return frame


def _ability(report_dir: Path) -> pd.DataFrame:
    return pd.read_csv(report_dir / "tables" / "psychometrics_ability.csv")


def test_theta_lz_score_accuracy_over_shuffles(report_dir: Path, per_shuffle: pd.DataFrame) -> None:
    table = _ability(report_dir)
    row = table[table["respondent"] == per_shuffle.attrs["experiment"]].iloc[0]
    assert row["n_shuffles"] == ENEM_SHUFFLES == len(per_shuffle)
    assert row["n_items"] == per_shuffle["n_items"].max()
    for col in ("theta", "se", "lz", "score", "accuracy"):
        values = per_shuffle[col].to_numpy(dtype=float)
        values = values[np.isfinite(values)]
        if values.size == 0:
            assert math.isnan(row[f"{col}_mean"])
            continue
        assert row[f"{col}_mean"] == pytest.approx(values.mean(), abs=1e-6), col
        lo, hi = np.quantile(values, [0.025, 0.975])
        assert row[f"{col}_low"] == pytest.approx(lo, abs=1e-6), col
        assert row[f"{col}_high"] == pytest.approx(hi, abs=1e-6), col


def test_random_baseline_row(report_dir: Path, per_shuffle: pd.DataFrame) -> None:
    table = _ability(report_dir)
    base = table[table["respondent"] == "random baseline"].iloc[0]
    assert base["n_shuffles"] == ENEM_SHUFFLES
    assert base["n_items"] == per_shuffle["n_items"].max()
    assert base["accuracy_low"] <= base["accuracy_mean"] <= base["accuracy_high"]
    k, d = per_shuffle.attrs["k"], per_shuffle.attrs["d"]
    for stat in ("mean", "low", "high"):
        assert base[f"score_{stat}"] == pytest.approx(k * base[f"theta_{stat}"] + d, abs=1e-6)


def test_discrimination_and_attributes(report_dir: Path, per_shuffle: pd.DataFrame, enem_dir: Path) -> None:
    di = pd.read_csv(report_dir / "tables" / "psychometrics_discrimination.csv")
    assert di["di"].between(-1, 1).all()
    assert ((di["di"] - (di["p_top"] - di["p_bottom"])).abs() < 1e-12).all()
    assert (di["poor"] == (di["di"] < 0.2)).all()
    assert len(di) == per_shuffle["n_items"].max()
    att = pd.read_csv(report_dir / "tables" / "psychometrics_attributes.csv").set_index("attribute")
    n_poor = int(di["poor"].sum())
    for name, row in att.iterrows():
        assert row["poor_with"] + row["poor_without"] == n_poor, name
        assert row["ok_with"] + row["ok_without"] == len(di) - n_poor, name
    # digits in the stem, detected independently from the exam text
    digits = per_shuffle.attrs["stem_digits"]
    assert set(digits) == set(di["item_id"].astype(str))
    poor = dict(zip(di["item_id"].astype(str), di["poor"], strict=True))
    row = att.loc["numbers_in_stem"]
    assert row["poor_with"] == sum(poor[i] and digits[i] for i in digits)
    assert row["ok_with"] == sum(not poor[i] and digits[i] for i in digits)
    html = (report_dir / "index.html").read_text(encoding="utf-8")
    assert re.search(r"DI &lt; 0.2|DI < 0.2", html)
