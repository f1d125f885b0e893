"""The verdict rule: constructed inputs, and simulated response patterns on real ENEM 2022 MT items."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from tests.conftest import require_shared

from enade_bench.benchmarks.enem.inep import booklet_items, load_inep_items, scored_params
from enade_bench.benchmarks.enem.study.analysis import respondent_verdict
from enade_bench.benchmarks.enem.study.config import VerdictRule
from enade_bench.benchmarks.enem.study.verdict import (
    MEASURED,
    OUTSIDE,
    UNRELIABLE,
    aberrant_share,
    add_verdicts,
    verdict_word,
)
from enade_bench.psychometrics.information import information_peak
from enade_bench.psychometrics.irt import ItemParams
from enade_bench.psychometrics.personfit import simulate_responses
from enade_bench.psychometrics.shuffles import score_shuffles

RULE = VerdictRule(n_boot=50, n_respondents=300)


def test_aberrant_share_counts_only_assessable_shuffles() -> None:
    share, n = aberrant_share([-3.0, -1.0, np.nan, 0.5, -2.5], cutoff=-2.0)
    assert (share, n) == (0.5, 4)
    share, n = aberrant_share([np.nan, np.nan], cutoff=-2.0)
    assert math.isnan(share) and n == 0


@pytest.mark.parametrize(
    ("share", "rho", "expected"),
    [
        (0.0, 0.9, MEASURED),
        (0.49, 0.25, MEASURED),  # both exactly at / just inside the thresholds
        (0.5, 0.9, UNRELIABLE),  # share >= max_aberrant_share
        (0.9, 0.01, UNRELIABLE),  # aberrance is checked before information
        (0.1, 0.2499, OUTSIDE),
        (math.nan, 0.9, MEASURED),  # no assessable shuffle: judged on information alone
        (math.nan, 0.1, OUTSIDE),
        (0.1, math.nan, OUTSIDE),
    ],
)
def test_verdict_word(share: float, rho: float, expected: str) -> None:
    assert verdict_word(share, rho, VerdictRule()) == expected


def test_thresholds_are_config_fields() -> None:
    strict = VerdictRule(max_aberrant_share=0.1, min_relative_information=0.6)
    assert verdict_word(0.2, 0.9, strict) == UNRELIABLE
    assert verdict_word(0.0, 0.5, strict) == OUTSIDE
    assert verdict_word(0.2, 0.5, VerdictRule()) == MEASURED


def test_add_verdicts_column() -> None:
    rows = pd.DataFrame({"aberrant_share": [0.0, 0.8, 0.0], "relative_information": [0.7, 0.7, 0.05]})
    assert add_verdicts(rows, VerdictRule())["verdict"].tolist() == [MEASURED, UNRELIABLE, OUTSIDE]


@pytest.fixture(scope="module")
def mt_items() -> ItemParams:
    inep = load_inep_items(require_shared("enem", "inep_items.csv"))
    return scored_params(booklet_items(inep, 1082))


def _scored(x: np.ndarray, items: ItemParams) -> pd.DataFrame:
    """Per-shuffle scores as the study computes them: EAP θ, l_z* at the WLE θ."""
    k, j = x.shape
    tidy = pd.DataFrame(
        {
            "respondent": "m",
            "shuffle": np.repeat(np.arange(k), j),
            "item_id": np.tile(list(items.item_ids), k),
            "correct": x.reshape(-1).astype(int),
        }
    )
    eap = score_shuffles(tidy, items, "eap")
    eap["lz_star"] = score_shuffles(tidy, items, "wle")["lz_star"].to_numpy()
    return eap


def test_model_conforming_patterns_at_the_peak_are_measured(mt_items: ItemParams) -> None:
    rng = np.random.default_rng(1)
    peak = information_peak(mt_items).theta
    x = simulate_responses(np.full(30, peak), mt_items, rng)
    row = respondent_verdict(_scored(x, mt_items), mt_items, (129.646, 500.02), RULE, rng)
    assert row["aberrant_share"] < 0.25
    assert row["relative_information"] > 0.5
    assert abs(row["theta"] - peak) < 0.5
    assert row["score"] == pytest.approx(129.646 * row["theta"] + 500.02)
    assert verdict_word(row["aberrant_share"], row["relative_information"], RULE) == MEASURED


def test_reversed_patterns_are_unreliable(mt_items: ItemParams) -> None:
    """Right on the hardest half, wrong on the easiest: the 3PL cannot produce this."""
    rng = np.random.default_rng(2)
    hard = mt_items.b >= np.median(mt_items.b)
    x = np.tile(hard.astype(float), (30, 1))
    flips = rng.random(x.shape) < 0.05
    x = np.where(flips, 1.0 - x, x)
    row = respondent_verdict(_scored(x, mt_items), mt_items, (129.646, 500.02), RULE, rng)
    assert row["aberrant_share"] >= 0.9
    assert verdict_word(row["aberrant_share"], row["relative_information"], RULE) == UNRELIABLE


def test_low_ability_is_outside_the_range(mt_items: ItemParams) -> None:
    """ENEM math is hard: a conforming examinee at θ = -3 answers at chance and is barely measured."""
    rng = np.random.default_rng(3)
    x = simulate_responses(np.full(30, -3.0), mt_items, rng)
    row = respondent_verdict(_scored(x, mt_items), mt_items, (129.646, 500.02), RULE, rng)
    assert row["relative_information"] < 0.25
    assert row["side"] == "below"
    assert row["aberrant_share"] < 0.5
    assert verdict_word(row["aberrant_share"], row["relative_information"], RULE) == OUTSIDE
