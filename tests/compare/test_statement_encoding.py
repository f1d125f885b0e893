"""One encoding of a pair's statement in every statement-bearing CSV (issue 52, item 4): each file
is written by its own command or step and read back here with one reader."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from enade_bench.benchmarks.enem.analysis import RANDOM, ExamAnalysis
from enade_bench.benchmarks.enem.files import ExamFile
from enade_bench.benchmarks.enem.steps.common import EnemAnalysis
from enade_bench.benchmarks.enem.steps.theta_pairs import theta_pairs_step
from enade_bench.cli.main import main
from enade_bench.metrics.simultaneous import ABOVE, BELOW, INTERVAL, holds_zero
from enade_bench.psychometrics.irt import ItemParams
from enade_bench.results.csv_safe import write_csv

ROOT = Path(__file__).resolve().parents[2]


def check_encoding(path: Path) -> pd.DataFrame:
    """Every row of a statement-bearing CSV as metrics/simultaneous.ENCODING says."""
    data = pd.read_csv(path)
    shown = data[data["statement"].notna() & data["ci_level"].notna()]
    assert len(shown) and set(shown["statement"]) <= {INTERVAL, ABOVE, BELOW}, set(shown["statement"])
    for row in shown.itertuples():
        assert 0 < row.ci_level < 1
        different = str(row.different).lower() == "true"
        if row.statement == ABOVE:
            assert row.ci_low == 0.0 and row.ci_high > 0 and different, row
        elif row.statement == BELOW:
            assert row.ci_high == 0.0 and row.ci_low < 0 and different, row
        else:
            assert row.ci_low <= row.diff <= row.ci_high and different == (
                row.ci_low > 0 or row.ci_high < 0
            ), row
        assert holds_zero(row.statement, row.ci_low, row.ci_high) == (not different)
    return shown


def test_pairs_csv_of_compare(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["compare", "--from", "helm", "tests/compare/data/helm", "--out", str(tmp_path / "out")]) == 0
    shown = check_encoding(tmp_path / "out" / "pairs.csv")
    assert set(shown["statement"]) >= {INTERVAL}


def test_theta_pairs_csv_of_the_enem_study(tmp_path: Path) -> None:
    """The ENEM study's θ-pairs step (its report writes the frame with the project's CSV writer)."""
    rng = np.random.default_rng(12)
    shared = rng.normal(0, 0.3, 10)
    rows = [
        {"respondent": m, "shuffle": k, "theta": mu + shared[k] + rng.normal(0, 0.1)}
        for m, mu in (("a", 0.0), ("b", 0.02), ("c", 0.1), ("d", 0.5), (RANDOM, -2.0))
        for k in range(10)
    ]
    empty = pd.DataFrame()
    items = ItemParams(("i1",), np.array([1.0]), np.array([0.0]), np.array([0.0]))
    exam = ExamAnalysis(
        ExamFile(2022, "MT", 1082),
        1082,
        items,
        empty,
        empty,
        pd.DataFrame(rows),
        empty,
        empty,
        empty,
        empty,
        empty,
        language="pt-br",
    )
    data = theta_pairs_step(EnemAnalysis([], [exam]), tmp_path).files["theta_pairs.csv"]
    write_csv(tmp_path / "theta_pairs.csv", data, index=False, float_format="%.6g")
    shown = check_encoding(tmp_path / "theta_pairs.csv")
    assert {INTERVAL, ABOVE} <= set(shown["statement"])


def test_theta_pairs_csv_of_irt_theta_pairs(enem_dir: Path, tmp_path: Path) -> None:
    """``irt theta-pairs --published --out``: the published runs (shared data)."""
    out = tmp_path / "theta_pairs.csv"
    assert main(["irt", "theta-pairs", "--published", "--enem-data", str(enem_dir), "--out", str(out)]) == 0
    shown = check_encoding(out)
    assert {INTERVAL, ABOVE, BELOW} & set(shown["statement"]) and not math.isnan(shown["ci_level"].min())
