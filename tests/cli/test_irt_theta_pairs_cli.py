"""``irt theta-pairs``: the published runs' θ differences, and one-line errors on bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tests.conftest import require_shared

from enade_bench.cli.main import main
from enade_bench.metrics.multiplicity import directional_holm
from enade_bench.metrics.simultaneous import decision_levels, holds_zero


def test_published_pairs_per_area_and_language(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    enem = require_shared("enem")
    out = tmp_path / "pairs.csv"
    assert main(["irt", "theta-pairs", "--published", "--enem-data", str(enem), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "θ differences between models (independent; 80 pairs)" in printed
    assert "Δθ [statement]" in printed and "CI level" in printed and "ci_low_unadjusted" in printed
    data = pd.read_csv(out)
    assert len(data) == 4 * 2 * 10 and set(data["years"]) == {"2019,2020,2021,2022"}
    assert (data["diff"] >= 0).all()  # higher mean θ first
    assert ((data["ci_low"] <= data["diff"]) & (data["diff"] <= data["ci_high"])).all()
    # one family, as compare adjusts the same 80 pairs (--family all, the default); --family table: each cell
    assert (
        np.allclose(data["p_adjusted"], directional_holm(data["p_value"]))
        and (data["family_size"] == 80).all()
    )
    assert "note: multiplicity family: holm over every pair (80; --family all)" in printed
    # one inference per pair: the shown interval excludes 0 exactly when the Holm p is below 0.05
    excludes = ~np.array(
        [
            holds_zero(k, lo, hi)
            for k, lo, hi in zip(data["statement"], data["ci_low"], data["ci_high"], strict=True)
        ]
    )
    assert (excludes == (data["p_adjusted"] < 0.05)).all() and (data["different"] == excludes).all()
    intervals = data["statement"] == "interval"
    assert (data.loc[intervals, "ci_low"] <= data.loc[intervals, "ci_low_unadjusted"]).all() and (
        data.loc[intervals, "ci_high_unadjusted"] <= data.loc[intervals, "ci_high"]
    ).all()
    assert set(data["adjust"]) == {"holm"} and data["ci_method"].str.startswith("Holm simultaneous").all()
    assert np.allclose(data["alpha_i"], decision_levels(data["p_value"], 0.05, "holm"))
    gpt = data[
        (data["area"] == "CH")
        & (data["language"] == "pt-br")
        & (data["model_b"] == "llama2 7b")
        & (data["model_a"] == "gpt-3.5-turbo-0613")
    ].iloc[0]
    assert gpt["diff"] == pytest.approx(2.25, abs=0.01) and gpt["p_adjusted"] < 1e-10


def test_bonferroni_intervals_are_simultaneous(tmp_path: Path) -> None:
    """``--adjust bonferroni --family table``: every pair of a table at alpha/10, the interval excluding 0 exactly
    when p bonf < 0.05."""
    enem = require_shared("enem")
    out = tmp_path / "pairs.csv"
    assert (
        main(
            [
                "irt",
                "theta-pairs",
                "--published",
                "--enem-data",
                str(enem),
                "--adjust",
                "bonferroni",
                "--family",
                "table",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    data = pd.read_csv(out)
    assert np.allclose(data["alpha_i"], 0.05 / 10) and np.allclose(data["ci_level"], 1 - 0.05 / 10)
    excludes = ~np.array(
        [
            holds_zero(k, lo, hi)
            for k, lo, hi in zip(data["statement"], data["ci_low"], data["ci_high"], strict=True)
        ]
    )
    assert (excludes == (data["p_adjusted"] < 0.05)).all()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "results folder(s) or --published"),
        (["--published", "--pairing", "shuffle"], "independent samples"),
        (["--published", "--adjust", "none"], "invalid choice"),
    ],
)
def test_bad_input_is_one_error_line(args: list[str], message: str, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["irt", "theta-pairs", *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and message in err[0]


def test_folder_without_enem_runs_is_one_error_line(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["irt", "theta-pairs", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ")
