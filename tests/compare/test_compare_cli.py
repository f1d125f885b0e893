"""``enade-bench compare`` end to end on the published ENEM patterns (data nobody here wrote)."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tests.conftest import require_shared

from enade_bench.cli.main import main


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    enem = require_shared("enem", "reference_llm_responses_mirt.parquet")
    folder = tmp_path_factory.mktemp("published")
    assert main(["irt", "published-long", str(folder / "all.csv"), "--enem-data", str(enem.parent)]) == 0
    table = pd.read_csv(folder / "all.csv", dtype=str)
    subset = table[(table["area"] == "MT") & (table["year"].isin(["2019", "2022"]))]
    subset.to_csv(folder / "mt.csv", index=False)
    return folder


def test_export_has_every_pattern(published: Path) -> None:
    table = pd.read_csv(published / "all.csv", dtype={"correct": int})
    assert len(table) == 4800 * 45 and table["model"].nunique() == 5
    assert table.groupby(["model", "year", "area", "language"])["replicate"].nunique().eq(30).all()


def test_compare_gives_clustered_scores_pairs_and_groups(published: Path) -> None:
    out = published / "cmp"
    assert main(["compare", str(published / "mt.csv"), "--by", "language", "--out", str(out)]) == 0
    scores, pairs = pd.read_csv(out / "scores.csv"), pd.read_csv(out / "pairs.csv")
    raw = pd.read_csv(published / "mt.csv", dtype={"correct": int})
    for (model, language), rows in raw.groupby(["model", "language"]):
        row = scores[(scores["model"] == model) & (scores["stratum"] == f"language={language}")].iloc[0]
        per_item = rows.groupby("item")["correct"].mean()
        assert row["accuracy"] == pytest.approx(per_item.mean(), abs=5e-7)  # scores.csv keeps 6 decimals
        assert row["se"] == pytest.approx(per_item.std(ddof=1) / np.sqrt(len(per_item)), abs=5e-7)
        assert row["n_questions"] == 90 and row["n_records"] == 90 * 30 and row["design_effect"] > 1
    assert len(pairs) == 2 * len(list(combinations(range(5), 2)))
    assert (pairs["test"] == "clustered paired t").all()
    assert (pairs["p_adjusted"] >= pairs["p_value"] - 1e-15).all()
    assert (scores["family"] == "all").all() and (pairs["family_size"] == 20).all()  # default: the strategy
    for stratum, cell in pairs.groupby("stratum"):
        letters = scores[scores["stratum"] == stratum].set_index("model")["letters"].astype(str)
        assert "a" in letters.iloc[int(np.argmax(scores[scores["stratum"] == stratum]["accuracy"]))]
        for pair in cell.itertuples():
            shared = bool(set(letters[pair.model_a]) & set(letters[pair.model_b]))
            assert shared == (pair.p_adjusted >= 0.05), (stratum, pair.model_a, pair.model_b)
    flips = pd.read_csv(out / "flips.csv")
    assert {"right", "wrong", "item", "year", "area", "language"} <= set(flips.columns)
    assert (out / "tables" / "comparison_table1.tex").is_file() and (
        out / "figures" / "comparison_clustered.png"
    ).is_file()


def test_calibration_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "--calibration", "--replications", "600"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    null = lines[2].split()  # no difference, model x item effect SD 1
    assert float(null[0]) == 0.0 and float(null[1]) == 1.0
    assert float(null[3]) < 0.1 and float(null[4]) > 0.2  # the [0.03, 0.07] check: test_paired_calibration.py
    letters = lines[9].split()
    assert lines[8].startswith("theta_C") and float(letters[0]) == 0.0 and float(letters[1]) >= 0.95


@pytest.mark.slow
def test_the_published_table_of_the_docs_is_reproduced(published: Path) -> None:
    """docs/comparisons.md's Table 1 of the five published models, letters included (~45 s)."""
    out = published / "docs_table"
    assert (
        main(["compare", str(published / "all.csv"), "--by", "area", "--by", "language", "--out", str(out)])
        == 0
    )
    scores = pd.read_csv(out / "scores.csv", keep_default_na=False)
    names = {"GPT-3.5-turbo": "gpt-3.5-turbo-0613", "Mixtral 8×7B": "mistral 8x7b", "Mistral 7B": "mistral 7b",
             "Llama-2 13B": "llama2 13b", "Llama-2 7B": "llama2 7b"}  # fmt: skip
    text = (Path(__file__).parents[2] / "docs" / "comparisons.md").read_text(encoding="utf-8")
    header, _, *rows = text[text.index("| model | CH en | CH pt-br") :].split("\n\n")[0].splitlines()
    cells = [c.strip() for c in header.strip("|").split("|")][1:]
    assert len(rows) == 5
    for line in rows:
        model, *shown = [c.strip() for c in line.strip("|").split("|")]
        for column, value in zip(cells, shown, strict=True):
            area, language = column.split()
            row = scores[
                (scores["model"] == names[model]) & (scores["stratum"] == f"area={area}, language={language}")
            ]
            r = row.iloc[0]
            expected = f"{100 * r.accuracy:.1f} [{100 * r.ci_low:.1f}, {100 * r.ci_high:.1f}] {r.letters}"
            assert value == expected, (model, column)
