"""Tango's score interval for paired proportions: the published worked example, and agreement
with McNemar's score test at every level, by construction (the interval the comparison shows)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from enade_bench.metrics.paired import MCNEMAR, mcnemar_score_test, pair_interval, paired_difference
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


def test_the_worked_example_is_shown_as_published() -> None:
    """Cavo: the comparison shows Tango's [-12.4, -0.5] and McNemar's score p 0.033, one statement."""
    row, test = _row("tango"), _row("mcnemar_asymptotic")
    a = np.array([1.0] * 59 + [1.0] * 6 + [0.0] * 16 + [0.0] * 80)
    b = np.array([1.0] * 59 + [0.0] * 6 + [1.0] * 16 + [0.0] * 80)
    r = paired_difference(a, b, single_record=True)
    assert r.test == MCNEMAR and (r.a_only, r.b_only) == (6, 16)
    assert (round(r.ci_low, 4), round(r.ci_high, 4)) == (row.low, row.high)
    assert round(r.p_value, 6) == test.p_value and round(r.statistic, 3) == test.statistic
    assert f"[{100 * r.ci_low:.1f}, {100 * r.ci_high:.1f}]" == "[-12.4, -0.5]"


def test_score_p_equals_statsmodels_without_continuity_correction() -> None:
    from statsmodels.stats.contingency_tables import mcnemar

    for b, c in ((6, 16), (5, 0), (0, 7), (13, 13), (40, 22), (1, 2)):
        ref = mcnemar([[10, b], [c, 10]], exact=False, correction=False)
        z, p = mcnemar_score_test(b, c)
        assert p == pytest.approx(ref.pvalue, rel=1e-10) and z * z == pytest.approx(ref.statistic, rel=1e-12)


def test_no_discordant_question_gets_tangos_interval() -> None:
    """b = c = 0 above 100 questions: p = 1 and the interval +-z^2/(n + z^2) (Tango 1998), not an empty one."""
    for n in (101, 200):
        r = paired_difference(np.ones(n), np.ones(n), single_record=True)
        half = stats.norm.ppf(0.975) ** 2 / (n + stats.norm.ppf(0.975) ** 2)
        assert r.test == MCNEMAR and r.p_value == 1.0 and math.isnan(r.se)
        assert r.ci_low == pytest.approx(-half, abs=1e-9) and r.ci_high == pytest.approx(half, abs=1e-9)


def test_not_capped_at_the_share_of_discordant_questions() -> None:
    """The demo's case: 5 of 30 discordant, all for A (+16.7 points): the upper limit is not 16.7."""
    low, high = tango_interval(5, 0, 30)
    assert high > 5 / 30 + 0.1 and low > 0


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
def test_shown_interval_agrees_with_the_test_at_every_level(alpha: float) -> None:
    """p < alpha <=> Tango's interval excludes 0, for b, c <= 40 (and some larger), unpatched."""
    pairs = [(b, c) for b in range(41) for c in range(41)] + [(0, 13), (13, 0), (1, 19), (3, 24), (150, 110)]
    for b, c in pairs:
        n = b + c + 25
        low, high = tango_interval(b, c, n, 1 - alpha)
        p = mcnemar_score_test(b, c)[1]
        if abs(p - alpha) < 1e-9:  # on the boundary the bisection's last digit decides
            continue
        assert (p < alpha) == (low > 0 or high < 0), (b, c, alpha, low, high)
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
