"""Each pair's level: adjusted p < alpha exactly when p < level (statsmodels' multipletests decides)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from enade_bench.metrics.multiplicity import adjust_pvalues
from enade_bench.metrics.simultaneous import ABOVE, BELOW, INTERVAL, decision_levels, shown_statements

METHODS = {"holm": "holm", "bonferroni": "bonferroni", "bh": "fdr_bh"}


@pytest.mark.parametrize("method", sorted(METHODS))
def test_levels_reproduce_the_adjusted_decisions(method: str) -> None:
    rng = np.random.default_rng(3)
    for _ in range(50):  # statsmodels' holm takes ~50 ms a call; 50 random families of 1-39 p-values
        k = int(rng.integers(1, 40))
        p = np.where(rng.random(k) < 0.4, rng.random(k) * 0.01, rng.random(k))
        levels = decision_levels(p, 0.05, method)
        if method == "holm":  # directional: Holm over the 2k one-sided p-values
            reject = multipletests(np.r_[p / 2, 1 - p / 2], alpha=0.05, method="holm")[0][:k]
        else:
            reject = multipletests(p, alpha=0.05, method=METHODS[method])[0]
        assert ((p < levels) == reject).all()
        assert ((adjust_pvalues(p, method) < 0.05) == reject).all()
        assert (levels >= 0.05 / k - 1e-15).all() and (levels <= 0.05 + 1e-15).all()


def test_holm_levels_step_down_then_stay() -> None:
    levels = decision_levels([0.001, 0.011, 0.02, 0.3, 0.5], 0.05, "holm")
    # directional: 0.001 < 0.1/10, 0.011 < 0.1/9, 0.02 >= 0.1/8: two rejected, the rest at 0.1/8
    assert levels.tolist() == pytest.approx([0.01, 0.1 / 9, 0.0125, 0.0125, 0.0125])


def test_not_comparable_pairs_have_no_level_and_do_not_count() -> None:
    levels = decision_levels([0.01, math.nan, 0.5], 0.05, "bonferroni")
    assert math.isnan(levels[1]) and levels[0] == levels[2] == pytest.approx(0.025)
    assert np.isnan(decision_levels([math.nan], 0.05, "holm")).all()


def test_bonferroni_intervals_hold_jointly() -> None:
    """Ten true nulls, normal estimates: all ten Bonferroni intervals cover 0 in >= 95 % of 4,000 draws."""
    rng = np.random.default_rng(0)
    z = rng.normal(size=(4000, 10))
    from statistics import NormalDist

    half = NormalDist().inv_cdf(1 - 0.05 / 10 / 2)
    joint = np.mean(np.all(np.abs(z) <= half, axis=1))
    assert joint >= 0.94  # 0.95 nominal; binomial SE 0.0034


def _normal(estimates: list[float], se: float = 1.0) -> tuple[list[float], object]:
    from scipy import stats

    p = [float(2 * stats.norm.sf(abs(e) / se)) for e in estimates]

    def at(i: int, confidence: float) -> tuple[float, float]:
        half = float(stats.norm.ppf(1 - (1 - confidence) / 2)) * se
        return estimates[i] - half, estimates[i] + half

    return p, at


def test_holm_statements_are_strassburger_bretz() -> None:
    """Two of four rejected (directional Holm): bounds at 0 in the effect's direction with their other
    limit, and every interval at confidence 1 - 2 alpha / (2K - r) = 1 - 0.1/6."""
    est = [4.0, -3.2, 1.0, -0.5]
    p, at = _normal(est)
    shown = shown_statements(p, est, 0.05, "holm", at)  # type: ignore[arg-type]
    assert [s.kind for s in shown] == [ABOVE, BELOW, INTERVAL, INTERVAL]
    level = 2 * 0.05 / (2 * 4 - 2)
    full = [at(i, 1 - level) for i in range(4)]  # type: ignore[operator]
    assert (shown[0].low, shown[0].high) == (0.0, full[0][1]) and (shown[1].low, shown[1].high) == (
        full[1][0],
        0.0,
    )
    assert (shown[2].low, shown[2].high) == full[2] and (shown[3].low, shown[3].high) == full[3]
    assert all(s.confidence == pytest.approx(1 - level) for s in shown)
    assert [s.different for s in shown] == [True, True, False, False]
    assert [s.alpha_i for s in shown] == pytest.approx([0.1 / 8, 0.1 / 7, 0.1 / 6, 0.1 / 6])


def test_directional_holm_equals_statsmodels_on_the_one_sided_p_values() -> None:
    from enade_bench.metrics.multiplicity import directional_holm

    rng = np.random.default_rng(5)
    for _ in range(20):
        p = np.where(rng.random(8) < 0.5, rng.random(8) * 0.01, rng.random(8))
        reference = multipletests(np.r_[p / 2, 1 - p / 2], method="holm")[1][:8]
        assert np.allclose(directional_holm(p), reference, rtol=0, atol=1e-15)
        assert ((p < decision_levels(p, 0.05, "holm")) == (reference < 0.05)).all()


@pytest.mark.parametrize("delta", [[4.0] * 10, [10.0] * 9 + [3.0]])
def test_holm_statements_hold_jointly_where_two_sided_step_intervals_do_not(delta: list[float]) -> None:
    """Normal estimates (exact marginals), 1,000 draws: the statements cover jointly (>= 0.935, MC SE 0.007;
    0.957 and 0.952 with 40,000), where a sign plus the two-sided interval at alpha/(K - r) covered 0.80 and
    0.93 (docs/comparisons.md)."""
    from scipy import stats

    rng = np.random.default_rng(43)
    k = len(delta)
    covered = 0
    for _ in range(1000):
        z = np.asarray(delta) + rng.normal(size=k)
        p = 2 * stats.norm.sf(np.abs(z))
        shown = shown_statements(
            p,
            z,
            0.05,
            "holm",
            lambda i, c, z=z: (z[i] - stats.norm.ppf(0.5 + c / 2), z[i] + stats.norm.ppf(0.5 + c / 2)),
        )  # type: ignore[misc]
        ok = True
        for s, d in zip(shown, delta, strict=True):
            assert s is not None
            if s.kind == ABOVE:
                ok &= 0 < d <= s.high
            elif s.kind == BELOW:
                ok &= s.low <= d < 0
            else:
                ok &= s.low <= d <= s.high
        covered += ok
    assert covered / 1000 >= 0.935, covered / 1000


def test_none_rejected_is_bonferroni_and_bonferroni_stays_available() -> None:
    est = [1.0, -0.3, 0.2]
    p, at = _normal(est)
    holm = shown_statements(p, est, 0.05, "holm", at)  # type: ignore[arg-type]
    assert all(s.kind == INTERVAL and s.confidence == pytest.approx(1 - 0.1 / 6) for s in holm)
    bonferroni = shown_statements(p, est, 0.05, "bonferroni", at)  # type: ignore[arg-type]
    assert all(s.kind == INTERVAL and s.confidence == pytest.approx(1 - 0.05 / 3) for s in bonferroni)
    bonf = shown_statements([1e-6, 0.5], [5.0, 0.1], 0.05, "bonferroni", _normal([5.0, 0.1])[1])  # type: ignore[arg-type]
    assert bonf[0].kind == INTERVAL and bonf[0].low > 0 and bonf[0].different
