"""The exact unconditional score test and its interval: size at most alpha by enumeration, the
published example, an independent computation, and one statement with its interval."""

from __future__ import annotations

from pathlib import Path
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

from bench.paired_exact_size import actual_size
from enade_bench.metrics.paired_exact import (
    _tail,
    exact_interval,
    exact_pvalue,
    exact_pvalues,
    score_statistics,
    tables,
)
from enade_bench.metrics.paired_score import tango_statistic

GOLDEN = pd.read_csv(Path(__file__).parent / "data" / "paired_score_golden.csv", comment="#")


@pytest.mark.parametrize("n", [8, 10, 15, 20, 28, 50, 100])
def test_the_actual_size_is_at_most_alpha_where_the_score_tests_is_not(n: int) -> None:
    """Enumeration of every table, maximised over the discordance on a finer grid than the test's own."""
    size = actual_size(n, 0.05)
    b, c, _ = tables(n)
    score = np.abs(score_statistics(b, c, n, 0.0)) > NormalDist().inv_cdf(0.975)
    print(f"{n} questions: exact unconditional {size:.4f}, score test {actual_size(n, 0.05, score):.4f}")
    assert size <= 0.05
    assert actual_size(n, 0.05, score) > 0.05  # why the exact test: the score test's size exceeds alpha


def test_the_published_exact_unconditional_p_value() -> None:
    row = GOLDEN[GOLDEN["method"] == "exact_unconditional"].iloc[0]
    assert round(exact_pvalue(int(row.b), int(row.c), int(row.n)), 3) == row.p_value


def _independent_tail(b: int, c: int, n: int, delta0: float, upper: bool) -> float:
    """max over q of P(T(delta0) >= t_obs) (or <=), with scipy's multinomial and a bounded optimiser."""
    t_obs = tango_statistic(b, c, n, delta0)
    cells = [(i, j) for i in range(n + 1) for j in range(n + 1 - i)]
    extreme = [
        (i, j)
        for i, j in cells
        if (tango_statistic(i, j, n, delta0) - t_obs) * (1 if upper else -1) >= -1e-10
    ]

    def minus(q: float) -> float:
        probs = [q + delta0, q, 1 - 2 * q - delta0]
        return -sum(stats.multinomial.pmf([i, j, n - i - j], n, probs) for i, j in extreme)

    lo, hi = max(0.0, -delta0), (1 - delta0) / 2
    grid = np.linspace(lo, hi, 101)
    best = grid[int(np.argmin([minus(q) for q in grid]))]
    res = optimize.minimize_scalar(
        minus, bounds=(max(lo, best - 0.01), min(hi, best + 0.01)), method="bounded"
    )
    return min(1.0, max(-res.fun, -minus(best)))


@pytest.mark.parametrize(("b", "c", "n"), [(4, 0, 8), (5, 2, 12)])
def test_p_value_and_limits_equal_an_independent_computation(b: int, c: int, n: int) -> None:
    p = min(1.0, 2 * min(_independent_tail(b, c, n, 0.0, True), _independent_tail(b, c, n, 0.0, False)))
    assert exact_pvalue(b, c, n) == pytest.approx(p, rel=1e-5)
    low, high = exact_interval(b, c, n)
    step = 1e-4  # each limit is where its tail crosses 0.025
    assert (
        _independent_tail(b, c, n, low - step, True) <= 0.025 < _independent_tail(b, c, n, low + step, True)
    )
    assert (
        _independent_tail(b, c, n, high + step, False)
        <= 0.025
        < _independent_tail(b, c, n, high - step, False)
    )


def test_one_statement_and_exact_coverage_at_ten_questions() -> None:
    """Every table of 10 questions: p < alpha exactly when the interval excludes 0, and the interval's
    exact coverage is at least 1 - alpha (Tang, Tang & Chan 2005)."""
    n = 10
    b, c, _ = tables(n)
    pvalues = exact_pvalues(n)
    for alpha in (0.05, 0.01):
        limits = [exact_interval(int(i), int(j), n, 1 - alpha) for i, j in zip(b, c, strict=True)]
        for (low, high), i, j, p_table in zip(limits, b, c, pvalues, strict=True):
            p = exact_pvalue(int(i), int(j), n)
            assert p == pytest.approx(p_table, abs=1e-6)
            assert (p < alpha) == (low > 0 or high < 0), (i, j, alpha, p, low, high)
            assert low <= (i - j) / n <= high
        for p10, p01 in ((0.1, 0.1), (0.3, 0.05), (0.4, 0.3), (0.05, 0.5)):
            probs = stats.multinomial.pmf(np.column_stack([b, c, n - b - c]), n, [p10, p01, 1 - p10 - p01])
            covered = np.array([low <= p10 - p01 <= high for low, high in limits])
            assert probs[covered].sum() >= 1 - alpha - 1e-9, (alpha, p10, p01)


LEVELS = (0.05, 0.01, 0.001)


def _accepted(b: int, c: int, n: int, delta0: float, alpha: float) -> bool:
    """Both tails at delta0 at least alpha/2: delta0 is in the acceptance region at 1 - alpha."""
    return min(_tail(b, c, n, delta0, 1), _tail(b, c, n, delta0, -1)) >= alpha / 2


@pytest.mark.parametrize("n", [8, 15, 20, 28, 50])
def test_the_interval_inverts_the_test_at_three_levels(n: int) -> None:
    """p < alpha exactly when the 1 - alpha interval excludes 0, at three levels, on every table
    whose p lies within a factor 3 of the level (1.5 from 20 questions on, where they are many:
    where a limit lies near 0, and a tie or a hole can put it on the wrong side; b >= c, the others
    mirror them); each limit is accepted, and the points just outside it are not."""
    b, c, _ = tables(n)
    checked, window = 0, 3 if n < 20 else 1.5
    for i, j in zip(b.astype(int), c.astype(int), strict=True):
        p = exact_pvalue(i, j, n)
        for alpha in LEVELS:
            if i < j or not alpha / window < p < window * alpha:
                continue
            checked += 1
            low, high = exact_interval(i, j, n, 1 - alpha)
            assert (p < alpha) == (low > 0 or high < 0), (i, j, n, alpha, p, low, high)
            for limit, outside in ((low, low - 1e-6), (high, high + 1e-6)):
                assert _accepted(i, j, n, limit, alpha), (i, j, n, alpha, limit)
                assert abs(limit) == 1 or not _accepted(i, j, n, outside, alpha), (i, j, n, alpha, limit)
    assert checked >= 10


def test_a_limit_at_a_tie_is_exactly_zero_and_a_hole_does_not_stop_the_limit() -> None:
    """(4, 0, 20): the tail jumps at 0 (ties of the ordering), p = 0.0504, and the lower limit is 0
    itself, not a root finder's 8e-11.  (11, 2, 15): the accepted set is 0.1222-0.1261, then from
    0.1288: the lower limit is the outer crossing, and every point of a fine grid below it is rejected."""
    p = exact_pvalue(4, 0, 20)
    low, high = exact_interval(4, 0, 20)
    assert 0.05 < p < 0.0505 and low == 0.0 < high
    assert _accepted(4, 0, 20, 0.0, 0.05) and not _accepted(4, 0, 20, -1e-9, 0.05)
    low, _ = exact_interval(11, 2, 15)
    assert low == pytest.approx(0.12223, abs=1e-4) and _accepted(11, 2, 15, low, 0.05)
    assert not _accepted(11, 2, 15, 0.127, 0.05)  # the hole inside the interval (its convex hull)
    below = np.linspace(-1.0, low - 1e-6, 400)
    assert not any(_accepted(11, 2, 15, float(x), 0.05) for x in below)
