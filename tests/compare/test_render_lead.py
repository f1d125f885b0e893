"""Table 1 (the page's lead): the detectable difference per column, bold only when it says something,
and the flips table without blank answers or an empty grid (issue 34)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from enade_bench.compare.analysis import CompareOptions, compare_table
from enade_bench.compare.render import MDD_ROW, NO_ANSWER, flips_table, pairs_table, table1
from enade_bench.metrics.power import pair_mdd


def _table(
    accuracies: dict[str, float], n: int = 80, seed: int = 0, predictions: bool = True
) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for model, p in accuracies.items():
        right = rng.random(n) < p
        for i in range(n):
            rows.append(
                {
                    "model": model,
                    "strategy": "S1",
                    "item": f"q{i:03d}",
                    "replicate": "0",
                    "correct": int(right[i]),
                    "cluster": "",
                    "stem": f"question {i}",
                    "answer": "A",
                    "prediction": ("A" if right[i] else ("" if i % 3 == 0 else "B")) if predictions else "",
                }
            )
    return pd.DataFrame(rows)


def test_table1_states_the_detectable_difference_of_its_pairs() -> None:
    comp = compare_table(_table({"A": 0.6, "B": 0.55, "C": 0.5}))
    table = table1(comp)
    assert table.display.index[-1] == MDD_ROW
    pairs = comp.pairs_frame()
    expected = [100 * pair_mdd(p.result, p.alpha_i) for p in comp.pairs]
    assert np.allclose(expected, 100 * pairs["mdd_80"])  # the pairs table and Table 1: one quantity
    cell = table.display.loc[MDD_ROW, "S1"]
    median = float(cell.split()[0])
    assert abs(median - float(np.median(expected))) < 0.051
    low, high = (float(x) for x in cell.split("(")[1].rstrip(")").split("–"))
    assert abs(low - min(expected)) < 0.051 and abs(high - max(expected)) < 0.051
    assert "not distinguishable at this size, not equal" in table.notes
    assert not table.bold.loc[MDD_ROW].any()
    assert "MDD 80 %" in pairs_table(comp).display.columns
    # the headings say which intervals are simultaneous (issue 43)
    assert "each model alone, not simultaneous" in table.title
    assert "jointly 95 %" in pairs_table(comp).title
    bh = compare_table(_table({"A": 0.6, "B": 0.55, "C": 0.5}), CompareOptions(adjust="bh"))
    assert "not simultaneous" in pairs_table(bh).title and "jointly" not in pairs_table(bh).title


def test_no_bold_when_every_model_shares_a() -> None:
    same = compare_table(_table({"A": 0.5, "B": 0.5}, seed=3))
    assert (same.scores_frame()["letters"] == "a").all()
    assert not table1(same).bold.to_numpy().any()
    apart = compare_table(_table({"A": 0.95, "B": 0.1}, seed=3))
    bold = table1(apart).bold
    assert bool(bold.loc["A", "S1"]) and not bool(bold.loc["B", "S1"])


def test_flips_show_no_blank_predictions_and_drop_empty_columns() -> None:
    comp = compare_table(_table({"A": 0.7, "B": 0.3}, seed=5))
    display = flips_table(comp).display
    assert not (display["prediction_wrong"].str.strip() == "").any()
    assert (display["prediction_wrong"] == NO_ANSWER).any()
    bare = flips_table(compare_table(_table({"A": 0.7, "B": 0.3}, seed=5, predictions=False))).display
    assert "prediction_wrong" not in bare.columns and "prediction_right" not in bare.columns


def test_no_flips_is_one_sentence_without_dashes() -> None:
    comp = compare_table(_table({"A": 1.0, "B": 1.0}, n=10))
    table = flips_table(comp)
    assert table.title == "Item flips: none" and table.display.shape == (1, 1)
    html, latex = table.to_html(), table.to_latex()
    assert "—" not in html and "–" not in html and "--" not in latex.split("\\midrule")[1]


def test_the_html_lead_states_the_detectable_difference() -> None:
    """The report page opens with Table 1: the MDD row and 'not distinguishable at this size'."""
    from enade_bench.report.html import Lead, render_html

    comp = compare_table(_table({"A": 0.6, "B": 0.55, "C": 0.5}))
    page = render_html([], [], [], [], lead=Lead([table1(comp)], "Comparison", True))
    lead = page[page.index('id="verdict"') : page.index('id="tables"')]
    assert MDD_ROW in lead and "not distinguishable at this size, not equal" in lead
    assert table1(comp).display.loc[MDD_ROW, "S1"] in lead
    assert comp.family_label in lead


def test_a_limit_near_zero_is_not_printed_as_zero() -> None:
    """An interval that excludes 0 by 0.04 points must not read [0.0, …] in the pairs table."""
    from enade_bench.compare.render import _bound

    assert _bound(0.0004) == "0.04" and _bound(-0.0002) == "-0.02"
    assert _bound(0.0) == "0.0" and _bound(0.1234) == "12.3"


def test_pairs_csv_names_alpha_i_and_gives_ci_level_as_a_confidence() -> None:
    """Issue 43: ``alpha_i`` is the decision level (p < alpha_i exactly when different); ``ci_level`` the
    confidence of the interval shown, 1 - 2 alpha / (2K - r) for Holm, 1 - alpha/K for Bonferroni."""
    from enade_bench.metrics.simultaneous import decision_levels

    for adjust in ("holm", "bonferroni"):
        comp = compare_table(
            _table({"A": 0.9, "B": 0.55, "C": 0.5, "D": 0.2}, n=60, seed=2), CompareOptions(adjust=adjust)
        )
        pairs = comp.pairs_frame()
        k, r = len(pairs), int(pairs["different"].sum())
        assert 0 < r < k
        assert np.allclose(pairs["alpha_i"], decision_levels(pairs["p_value"], 0.05, adjust))
        assert ((pairs["p_value"] < pairs["alpha_i"]) == pairs["different"]).all()
        expected = 1 - 2 * 0.05 / (2 * k - r) if adjust == "holm" else 1 - 0.05 / k
        assert np.allclose(pairs["ci_level"], expected)
        assert (pairs["bonferroni_low"] <= pairs["diff"]).all() and (
            pairs["diff"] <= pairs["bonferroni_high"]
        ).all()


def test_an_mdd_out_of_reach_reads_not_reachable_everywhere() -> None:
    """Issue 43: five models on 7 questions, one record each: every pair is decided at Holm's
    alpha_i <= 2 alpha / (2K - r) = 0.005, where 7 of 7 for one model gives z^2 = 7 < z_{0.9975}^2 = 7.9,
    so no difference reaches 80 % power; tested alone (alpha = 0.05) the pair has an MDD."""
    from enade_bench.metrics.power import NOT_REACHABLE

    comp = compare_table(_table({"A": 0.9, "B": 0.7, "C": 0.5, "D": 0.3, "E": 0.1}, n=7, seed=1))
    pairs = comp.pairs_frame()
    assert len(pairs) == 10 and (pairs["alpha_i"] <= 0.1 / (20 - pairs["different"].sum())).all()
    assert np.isinf(pairs["mdd_80"]).all() and np.isfinite(pairs["mdd_80_unadjusted"]).all()
    assert table1(comp).display.loc[MDD_ROW, "S1"] == NOT_REACHABLE
    assert (pairs_table(comp).display["MDD 80 %"] == NOT_REACHABLE).all()
