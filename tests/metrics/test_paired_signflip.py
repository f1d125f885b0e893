"""The sign-flip test on text sums (mixed pairs, issue 63): equal to a brute-force enumeration of
every sign pattern, one statement with its interval, and an actual size at most alpha by enumeration."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from enade_bench.metrics.paired import SIGN_FLIP, paired_difference
from enade_bench.metrics.paired_signflip import signflip_interval, signflip_pvalue


def _brute(d: np.ndarray, labels: list[int], delta: float = 0.0) -> tuple[float, float]:
    """One-sided p-values of delta by flipping every subset of texts (2^G patterns, no shortcut)."""
    groups = sorted(set(labels))
    sums = np.array([sum(x - delta for x, g in zip(d, labels, strict=True) if g == k) for k in groups])
    observed = sums.sum()
    flipped = [np.dot(np.where(s, -1.0, 1.0), sums) for s in itertools.product([0, 1], repeat=len(groups))]
    upper = np.mean([f >= observed - 1e-9 for f in flipped])
    lower = np.mean([f <= observed + 1e-9 for f in flipped])
    return float(upper), float(lower)


def _mixed(rng: np.random.Generator, n: int) -> tuple[np.ndarray, list[int]]:
    """n questions: most with one binary record, some with 3 shuffles; texts of 1-3 questions."""
    records = np.where(rng.random(n) < 0.3, 3, 1)
    a = rng.binomial(records, rng.uniform(0.4, 0.9)) / records
    b = rng.binomial(records, rng.uniform(0.3, 0.8)) / records
    return a - b, np.sort(rng.integers(0, max(2, 2 * n // 3), n)).tolist()


@pytest.mark.parametrize("seed", range(4))
def test_p_value_and_limits_equal_a_brute_force_enumeration(seed: int) -> None:
    rng = np.random.default_rng(seed)
    d, labels = _mixed(rng, 10)
    upper, lower = _brute(d, labels)
    assert signflip_pvalue(d, labels).p_value == pytest.approx(min(1.0, 2 * min(upper, lower)), abs=1e-12)
    low, high = signflip_interval(d, labels, 0.9)
    if low > -1:  # each limit accepted, just past it rejected (the interval is the accepted set's hull)
        for limit, step, side in ((low, -1e-6, 0), (high, 1e-6, 1)):
            assert min(_brute(d, labels, limit)) >= 0.05 - 1e-12
            assert _brute(d, labels, limit + step)[side] < 0.05


@pytest.mark.parametrize("n", [8, 15, 20, 28, 50])
def test_one_statement_at_three_levels(n: int) -> None:
    rng = np.random.default_rng(n)
    for _ in range(8):
        d, labels = _mixed(rng, n)
        p = signflip_pvalue(d, labels).p_value
        for alpha in (0.05, 0.05 / 3, 0.01):
            low, high = signflip_interval(d, labels, 1 - alpha)
            assert (p < alpha) == (not low <= 0 <= high)


def _size(n: int, alpha: float) -> float:
    """Actual size of the cell's test by enumeration: n - 1 questions with one binary record
    (P(d = 1) = P(d = -1) = psi/2), one with 3 shuffles per model (d = (k_A - k_B)/3, k ~ Bin(3, q));
    the largest rejection probability over a grid of (psi, q)."""
    single = n - 1
    tables = [(b, c) for b in range(single + 1) for c in range(single + 1 - b)]
    shuffled = np.arange(-3, 4) / 3
    reject = np.zeros((len(tables), shuffled.size))
    for i, (b, c) in enumerate(tables):
        for j, last in enumerate(shuffled):
            d = np.r_[np.ones(b), -np.ones(c), np.zeros(single - b - c), last]
            reject[i, j] = signflip_pvalue(d).p_value < alpha
    worst = 0.0
    for psi in np.linspace(0.05, 1.0, 20):
        multinomial = np.array(
            [
                stats.multinomial.pmf([b, c, single - b - c], single, [psi / 2, psi / 2, 1 - psi])
                for b, c in tables
            ]
        )
        for q in (0.1, 0.3, 0.5, 0.7, 0.9):
            k = stats.binom.pmf(np.arange(4), 3, q)
            last = np.array(
                [sum(k[x] * k[y] for x in range(4) for y in range(4) if x - y == s) for s in range(-3, 4)]
            )
            worst = max(worst, float(multinomial @ reject @ last))
    return worst


@pytest.mark.parametrize("n", [8, 10, 20])
def test_the_actual_size_of_a_mixed_cell_is_at_most_alpha(n: int) -> None:
    records = np.r_[np.ones(n - 1, dtype=int), 3]
    d = np.r_[np.ones(n - 2), 0.0, 2 / 3]
    assert paired_difference(d, np.zeros(n), records=records).test == SIGN_FLIP
    for alpha in (0.05, 0.05 / 3):
        size = _size(n, alpha)
        print(f"n = {n}, alpha = {alpha:.4f}: actual size {size:.4f}")
        assert size <= alpha


def test_too_few_texts_is_not_testable() -> None:
    r = paired_difference([1.0, 1.0, 1.0, 2 / 3, 1.0], np.zeros(5), records=[1, 1, 1, 3, 1])
    assert r.test == SIGN_FLIP and r.p_value == 2 / 32 and "not testable at this size" in r.reason
    assert (r.ci_low, r.ci_high) == (-1.0, 1.0) and not math.isnan(r.p_value)


def test_above_the_enumeration_the_monte_carlo_p_is_within_its_error_of_the_exact_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from enade_bench.metrics import paired_signflip

    d = np.random.default_rng(3).normal(0.2, 0.3, 14)  # 14 distinct texts: 16,384 outcomes
    exact = signflip_pvalue(d)
    monkeypatch.setattr(paired_signflip, "ENUMERATE", 1000)
    paired_signflip._flipped.cache_clear()
    drawn = signflip_pvalue(d)
    paired_signflip._flipped.cache_clear()
    assert exact.exact and not drawn.exact and drawn.patterns == paired_signflip.DRAWS + 1
    assert abs(drawn.p_value - exact.p_value) < 4 * drawn.mc_se and 0.001 < exact.p_value < 0.5
