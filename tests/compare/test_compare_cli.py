"""``enade-bench compare`` end to end on the published ENEM patterns (data nobody here wrote)."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tests.conftest import require_shared

from enade_bench.cli.main import main
from enade_bench.metrics.simultaneous import holds_zero


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
    assert (scores["family"] == "strategy (none: every pair)").all() and (pairs["family_size"] == 20).all()
    for stratum, cell in pairs.groupby("stratum"):
        letters = scores[scores["stratum"] == stratum].set_index("model")["letters"].astype(str)
        assert "a" in letters.iloc[int(np.argmax(scores[scores["stratum"] == stratum]["accuracy"]))]
        for pair in cell.itertuples():
            shared = bool(set(letters[pair.model_a]) & set(letters[pair.model_b]))
            assert shared == (pair.p_adjusted >= 0.05), (stratum, pair.model_a, pair.model_b)
            assert shared == holds_zero(pair.statement, pair.ci_low, pair.ci_high), (stratum, pair.model_a)
    flips = pd.read_csv(out / "flips.csv")
    assert {"right", "wrong", "item", "year", "area", "language"} <= set(flips.columns)
    assert (out / "tables" / "comparison_table1.tex").is_file() and (
        out / "figures" / "comparison_clustered.png"
    ).is_file()


def _rate_and_interval(tokens: list[str], replications: int = 300) -> tuple[float, float, float]:
    """``0.050 (15/300) [0.041, 0.060]`` split on spaces -> (rate, low, high); the count is the rate's."""
    count, total = (int(x) for x in tokens[1].strip("()").split("/"))
    assert total == replications and count == round(float(tokens[0]) * replications)
    return float(tokens[0]), float(tokens[2].strip("[,")), float(tokens[3].strip("]"))


def test_calibration_prints_each_rate_with_its_monte_carlo_interval(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Few replications (the docs use 2,000): every rate carries Wilson's interval on the replication count."""
    from enade_bench.metrics.accuracy import wilson_interval

    replications = 300
    assert main(["compare", "--calibration", "--replications", str(replications)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    null = lines[2].split()  # no difference, model x item effect SD 1
    assert float(null[0]) == 0.0 and float(null[1]) == 1.0
    for rate, low, high in (_rate_and_interval(null[3:7]), _rate_and_interval(null[7:11])):
        expected = wilson_interval(round(rate * replications), replications)
        assert (low, high) == (round(expected[0], 3), round(expected[1], 3)) and low <= rate <= high
    assert _rate_and_interval(null[3:7])[0] < 0.1 and _rate_and_interval(null[7:11])[0] > 0.2
    assert lines[8].startswith("theta_C") and f"{replications} replications" in lines[8]
    share, low, high = _rate_and_interval(lines[9].split()[1:5])
    assert float(lines[9].split()[0]) == 0.0 and share >= 0.9 and low < share < high
    assert high - low > 0.02  # 300 replications cannot support "at least 95 %" to three decimals


@pytest.mark.slow
def test_the_published_table_of_the_docs_is_reproduced(
    published: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/comparisons.md's Table 1 of the five published models, letters included (~45 s)."""
    out = published / "docs_table"
    assert (
        main(["compare", str(published / "all.csv"), "--by", "area", "--by", "language", "--out", str(out)])
        == 0
    )
    scores = pd.read_csv(out / "scores.csv", keep_default_na=False)
    names = {
        "GPT-3.5-turbo": "gpt-3.5-turbo-0613",
        "Mixtral 8×7B": "mistral 8x7b",
        "Mistral 7B": "mistral 7b",
        "Llama-2 13B": "llama2 13b",
        "Llama-2 7B": "llama2 7b",
    }
    text = (Path(__file__).parents[2] / "docs" / "comparisons.md").read_text(encoding="utf-8")
    header, _, *rows = text[text.index("| model | CH en | CH pt-br") :].split("\n\n")[0].splitlines()
    cells = [c.strip() for c in header.strip("|").split("|")][1:]
    assert len(rows) == 6 and rows[-1].startswith("| MDD 80 % (points) |")
    from enade_bench.compare.render import _mdd_cell

    mdd = [c.strip() for c in rows[-1].strip("|").split("|")][1:]
    pairs_mdd = pd.read_csv(out / "pairs.csv")
    for column, value in zip(cells, mdd, strict=True):
        area, language = column.split()
        assert value == _mdd_cell(
            pairs_mdd[pairs_mdd["stratum"] == f"area={area}, language={language}"]["mdd_80"]
        )
    for line in rows[:-1]:
        model, *shown = [c.strip() for c in line.strip("|").split("|")]
        for column, value in zip(cells, shown, strict=True):
            area, language = column.split()
            row = scores[
                (scores["model"] == names[model]) & (scores["stratum"] == f"area={area}, language={language}")
            ]
            r = row.iloc[0]
            expected = f"{100 * r.accuracy:.1f} [{100 * r.ci_low:.1f}, {100 * r.ci_high:.1f}] {r.letters}"
            assert value == expected, (model, column)
    # one inference per pair on the whole published table: the unadjusted intervals disagreed on 9 of 80
    pairs = pd.read_csv(out / "pairs.csv", keep_default_na=False)
    assert len(pairs) == 80 and _assert_one_inference(pairs, scores) == 9
    # the same family on the same pairs: irt theta-pairs adjusts the same 80 by default (issue 52, item 5)
    assert (pairs["family_size"] == 80).all()
    theta_out = published / "theta_pairs.csv"
    enem = require_shared("enem")
    capsys.readouterr()
    assert main(["irt", "theta-pairs", "--published", "--enem-data", str(enem), "--out", str(theta_out)]) == 0
    assert "note: multiplicity family: holm over every pair (80; --family all)" in capsys.readouterr().out
    theta = pd.read_csv(theta_out)
    assert len(theta) == 80 and (theta["family_size"] == 80).all()
    assert set(zip(theta["area"], theta["language"], strict=True)) == {
        tuple(s.replace("area=", "").replace("language=", "").split(", ")) for s in pairs["stratum"]
    }


def _assert_one_inference(pairs: pd.DataFrame, scores: pd.DataFrame) -> int:
    """Every pair: shares a letter <=> its shown interval holds 0 <=> not 'different'; returns the
    pairs whose *unadjusted* interval would have disagreed (the referee's objection)."""
    disagreed = 0
    for pair in pairs.itertuples():
        cell = scores[
            (scores["strategy"].astype(str) == str(pair.strategy)) & (scores["stratum"] == pair.stratum)
        ]
        letters = cell.set_index("model")["letters"].astype(str)
        shared = bool(set(letters[pair.model_a]) & set(letters[pair.model_b]))
        zero = holds_zero(pair.statement, pair.ci_low, pair.ci_high)
        assert shared == zero == (not pair.different) == (pair.p_adjusted >= 0.05), pair
        assert pair.ci_low <= pair.diff <= pair.ci_high
        assert pair.bonferroni_low <= pair.diff <= pair.bonferroni_high
        assert (
            pair.ci_low <= pair.ci_low_unadjusted + 1e-12 and pair.ci_high >= pair.ci_high_unadjusted - 1e-12
        )
        disagreed += shared == (pair.ci_low_unadjusted > 0 or pair.ci_high_unadjusted < 0)
    return disagreed


@pytest.mark.parametrize("adjust", ["holm", "bonferroni", "bh"])
def test_shown_intervals_agree_with_the_letters_on_published_data(published: Path, adjust: str) -> None:
    """MT 2019+2022, per cell (stratum family): CSV and the pairs table the HTML shows."""
    from enade_bench.compare.analysis import CompareOptions, compare_table
    from enade_bench.compare.render import pairs_table
    from enade_bench.compare.table import read_long_csv

    comp = compare_table(
        read_long_csv(published / "mt.csv"), CompareOptions(("language",), adjust, 0.05, "stratum")
    )
    pairs, scores = comp.pairs_frame(), comp.scores_frame()
    _assert_one_inference(pairs, scores)
    assert set(pairs["ci_method"]) == {comp.interval_name} and (pairs["alpha_i"] <= 0.05).all()
    assert (pairs["ci_level"] >= 0.95).all() and set(pairs["statement"]) <= {"interval", "> 0", "< 0"}
    shown = pairs_table(comp).display["statement"].tolist()
    for text, pair in zip(shown, pairs.itertuples(), strict=True):
        if text.startswith(("> 0", "< 0")):
            assert pair.different, text
            continue
        low, high = (float(x) for x in text.split("[")[1].rstrip("]").split(","))
        assert (low <= 0 <= high) == (not pair.different), text
