"""Tango's score interval for paired proportions: the published worked example, and agreement
with the exact McNemar test at every level (the interval the comparison shows)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from enade_bench.metrics.paired import mcnemar_exact, mcnemar_score_interval, pair_interval, paired_difference
from enade_bench.metrics.paired_score import tango_interval, tango_statistic

GOLDEN = pd.read_csv(Path(__file__).parent / "data" / "paired_score_golden.csv", comment="#")


def _row(method: str) -> pd.Series:
    return GOLDEN[GOLDEN["method"] == method].iloc[0]


def test_tango_matches_the_published_worked_example() -> None:
    row = _row("tango")
    low, high = tango_interval(int(row.b), int(row.c), int(row.n))
    assert (round(low, 4), round(high, 4)) == (row.low, row.high)
    assert round((row.b - row.c) / row.n, 4) == row.estimate


def test_tango_at_zero_is_mcnemars_asymptotic_statistic() -> None:
    row = _row("mcnemar_asymptotic")
    t = tango_statistic(int(row.b), int(row.c), int(row.n), 0.0)
    assert round(t, 3) == row.statistic
    assert round(2 * stats.norm.sf(abs(t)), 6) == row.p_value


def test_exact_p_of_the_worked_example() -> None:
    row = _row("mcnemar_exact")
    assert round(mcnemar_exact(int(row.b), int(row.c)), 6) == row.p_value


def test_the_example_where_tango_and_the_exact_test_disagree_reaches_zero() -> None:
    """Cavo: Tango excludes 0 but exact p = 0.052; the shown interval is widened to 0, no further."""
    row = _row("tango")
    low, high = mcnemar_score_interval(int(row.b), int(row.c), int(row.n))
    assert high == 0.0 and round(low, 4) == row.low


def test_not_capped_at_the_share_of_discordant_questions() -> None:
    """The demo's case: 5 of 30 discordant, all for A (+16.7 points): the upper limit is not 16.7."""
    low, high = tango_interval(5, 0, 30)
    assert high > 5 / 30 + 0.1 and low > 0
    # the conditional exact interval's upper limit was exactly the estimate
    assert mcnemar_score_interval(5, 0, 30)[1] == pytest.approx(high)


def test_tango_coverage_is_near_nominal() -> None:
    """Exact coverage over the multinomial (p10, p01) for n = 40: within 0.93-0.97 (Tango 1998, Table III)."""
    n = 40
    for p10, p01 in ((0.1, 0.05), (0.2, 0.2), (0.3, 0.1)):
        delta = p10 - p01
        cover = 0.0
        for b in range(n + 1):
            for c in range(n + 1 - b):
                prob = stats.multinomial.pmf([b, c, n - b - c], n, [p10, p01, 1 - p10 - p01])
                low, high = tango_interval(b, c, n)
                cover += prob * (low <= delta <= high)
        assert 0.93 <= cover <= 0.97, (p10, p01, cover)


@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.05 / 10, 0.05 / 80, 0.05 / 200, 0.05 / 1000])
def test_shown_interval_agrees_with_the_exact_test_at_every_level(alpha: float) -> None:
    """p < alpha <=> the interval excludes 0, for b, c <= 40 (and some larger), at familywise levels."""
    pairs = [(b, c) for b in range(41) for c in range(41)] + [(0, 13), (13, 0), (1, 19), (3, 24), (150, 110)]
    for b, c in pairs:
        if b + c == 0:
            continue
        n = b + c + 25
        low, high = mcnemar_score_interval(b, c, n, 1 - alpha)
        assert (mcnemar_exact(b, c) < alpha) == (low > 0 or high < 0), (b, c, alpha, low, high)
        assert low <= (b - c) / n <= high


def test_pair_interval_recomputes_the_shown_interval() -> None:
    rng = np.random.default_rng(1)
    a = (rng.random(80) < 0.7).astype(float)
    b = (rng.random(80) < 0.5).astype(float)
    r = paired_difference(a, b, single_record=True)
    assert pair_interval(r, 0.95) == (r.ci_low, r.ci_high)
    wide = pair_interval(r, 0.999)
    assert wide[0] <= r.ci_low and wide[1] >= r.ci_high
    scores = paired_difference(a * 0.5 + 0.25, b, single_record=False)
    low, high = pair_interval(scores, 0.95)
    assert math.isclose(low, scores.ci_low) and math.isclose(high, scores.ci_high)
