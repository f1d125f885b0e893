"""``irt theta-pairs``: the published runs' θ differences, and one-line errors on bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tests.conftest import require_shared

from enade_bench.cli.main import main
from enade_bench.metrics.multiplicity import holm


def test_published_pairs_per_area_and_language(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    enem = require_shared("enem")
    out = tmp_path / "pairs.csv"
    assert main(["irt", "theta-pairs", "--published", "--enem-data", str(enem), "--out", str(out)]) == 0
    assert "θ differences between models (independent; 80 pairs)" in capsys.readouterr().out
    data = pd.read_csv(out)
    assert len(data) == 4 * 2 * 10 and set(data["years"]) == {"2019,2020,2021,2022"}
    assert (data["diff"] >= 0).all()  # higher mean θ first
    assert ((data["ci_low"] <= data["diff"]) & (data["diff"] <= data["ci_high"])).all()
    for _, part in data.groupby(["area", "language"]):
        assert np.allclose(part["p_adjusted"], holm(part["p_value"]))
    gpt = data[(data["area"] == "CH") & (data["language"] == "pt-br") & (data["model_b"] == "llama2 7b")
               & (data["model_a"] == "gpt-3.5-turbo-0613")].iloc[0]  # fmt: skip
    assert gpt["diff"] == pytest.approx(2.25, abs=0.01) and gpt["p_adjusted"] < 1e-10


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "results folder(s) or --published"),
        (["--published", "--pairing", "shuffle"], "independent samples"),
        (["--published", "--adjust", "bonferroni"], "invalid choice"),
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
