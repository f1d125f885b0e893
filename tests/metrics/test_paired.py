"""Paired differences: McNemar's score test (above 100 questions) equals statsmodels; the exact
unconditional test up to 100; the clustered paired t; excluded questions."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar

from enade_bench.metrics.paired import (
    EXACT,
    MCNEMAR,
    NO_DISCORDANT,
    NOT_COMPARABLE,
    PAIRED_T,
    mcnemar_score_test,
    paired_difference,
)
from enade_bench.metrics.paired_exact import SWITCH_N, exact_interval, exact_pvalue


@pytest.mark.parametrize("seed", range(6))
def test_one_record_per_question_is_mcnemar_score_like_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(SWITCH_N + 1, 400))
    a = (rng.random(n) < rng.uniform(0.3, 0.8)).astype(float)
    b = np.where(rng.random(n) < 0.7, a, 1 - a)
    r = paired_difference(a, b, single_record=True)
    table = [
        [np.sum((a == 1) & (b == 1)), np.sum((a == 1) & (b == 0))],
        [np.sum((a == 0) & (b == 1)), np.sum((a == 0) & (b == 0))],
    ]
    ref = mcnemar(table, exact=False, correction=False)
    assert r.test == MCNEMAR
    assert abs(r.p_value - ref.pvalue) <= 1e-12
    assert r.statistic**2 == pytest.approx(ref.statistic, rel=1e-12)
    assert r.diff == pytest.approx(a.mean() - b.mean())


def test_no_discordant_question_gives_p_one() -> None:
    assert mcnemar_score_test(0, 0) == (0.0, 1.0)
    r = paired_difference([1, 0, 1], [1, 0, 1], single_record=True)
    assert r.p_value == 1.0 and r.diff == 0.0 and r.test == EXACT


def test_repeated_records_use_the_clustered_paired_t() -> None:
    from scipy import stats

    a = np.array([0.9, 0.8, 0.1, 0.6, 1.0, 0.3, 0.7, 0.5])
    b = np.array([0.7, 0.9, 0.0, 0.2, 0.9, 0.3, 0.4, 0.6])
    r = paired_difference(a, b)
    d = a - b
    t = stats.ttest_rel(a, b)  # each question its own cluster: the ordinary paired t test
    assert r.test == PAIRED_T and "repeated records" in r.reason
    assert r.p_value == pytest.approx(t.pvalue, rel=1e-10)
    assert r.se == pytest.approx(d.std(ddof=1) / np.sqrt(8), rel=1e-12)
    assert r.ci_low < r.diff < r.ci_high


def test_clusters_are_used_even_with_single_records() -> None:
    r = paired_difference(
        [1, 1, 0, 1, 0, 1],
        [0, 1, 0, 0, 0, 1],
        single_record=True,
        clusters=["s1", "s1", "s2", "s2", "s3", "s3"],
    )
    assert r.test == PAIRED_T and r.n_clusters == 3 and "clusters" in r.reason


def test_no_discordant_question_has_no_interval_and_p_one() -> None:
    """Identical repeated scores: not an SE of 0 and an interval [0, 0], but 'no discordant questions'."""
    r = paired_difference([1, 0, 1, 1], [1, 0, 1, 1], single_record=False)
    assert r.test == NO_DISCORDANT and r.p_value == 1.0 and r.diff == 0.0
    assert np.isnan(r.ci_low) and np.isnan(r.ci_high) and np.isnan(r.se)


def test_equal_differences_up_to_rounding_have_no_standard_error() -> None:
    """A ahead by 2 of 30 shuffles on every question: the differences a - b differ only by rounding
    (their SD is ~1e-17), so there is no SE and no test, not t ~ 1e15 and p = 0."""
    a, b = np.arange(2, 31) / 30, np.arange(0, 29) / 30
    d = a - b
    assert d.std() > 0 and np.allclose(d, 2 / 30)  # not exactly equal in floating point
    r = paired_difference(a, b)
    assert (
        r.test == PAIRED_T and np.isnan(r.p_value) and np.isnan(r.ci_low) and "no standard error" in r.reason
    )
    assert r.diff == pytest.approx(2 / 30)


def test_fewer_than_two_questions_are_not_comparable() -> None:
    for a, b in (([], []), ([1.0], [0.0])):
        r = paired_difference(a, b, single_record=True)
        assert r.test == NOT_COMPARABLE and np.isnan(r.p_value) and np.isnan(r.ci_low)


def test_issue_example_four_discordant_questions_all_one_way() -> None:
    """28 questions, 4 discordant all for A: the score z is 2 (normal p 0.0455, a test of size
    0.056 at 28 questions); the exact unconditional test gives p 0.0486, and its interval excludes 0
    with it (the test and the interval are one score statement)."""
    a = np.array([1.0] * 4 + [1.0] * 12 + [0.0] * 12)
    b = np.array([0.0] * 4 + [1.0] * 12 + [0.0] * 12)
    r = paired_difference(a, b, single_record=True)
    assert r.test == EXACT and r.statistic == pytest.approx(2.0)
    assert r.p_value == exact_pvalue(4, 0, 28) and 0.045 < r.p_value < 0.05
    assert (r.ci_low, r.ci_high) == exact_interval(4, 0, 28)
    assert 0 < r.ci_low and r.ci_high > 4 / 28 + 0.05


def test_the_switch_to_the_score_test_above_100_questions() -> None:
    for n, test in ((SWITCH_N, EXACT), (SWITCH_N + 1, MCNEMAR)):
        a = np.r_[np.ones(10), np.zeros(n - 10)]
        b = np.r_[np.zeros(3), np.ones(2), np.zeros(n - 5)]
        r = paired_difference(a, b, single_record=True)
        assert r.test == test and str(SWITCH_N) in r.reason
