"""Each pair's level: adjusted p < alpha exactly when p < level (statsmodels' multipletests decides)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from enade_bench.metrics.multiplicity import adjust_pvalues
from enade_bench.metrics.simultaneous import ABOVE, BELOW, CUT, INTERVAL, decision_levels, shown_statements

METHODS = {"holm": "holm", "bonferroni": "bonferroni", "bh": "fdr_bh"}


@pytest.mark.parametrize("method", sorted(METHODS))
def test_levels_reproduce_the_adjusted_decisions(method: str) -> None:
    rng = np.random.default_rng(3)
    for _ in range(50):  # statsmodels' holm takes ~50 ms a call; 50 random families of 1-39 p-values
        k = int(rng.integers(1, 40))
        p = np.where(rng.random(k) < 0.4, rng.random(k) * 0.01, rng.random(k))
        levels = decision_levels(p, 0.05, method)
        reject = multipletests(p, alpha=0.05, method=METHODS[method])[0]
        assert ((p < levels) == reject).all()
        assert ((adjust_pvalues(p, method) < 0.05) == reject).all()
        assert (levels >= 0.05 / k - 1e-15).all() and (levels <= 0.05 + 1e-15).all()


def test_holm_levels_step_down_then_stay() -> None:
    levels = decision_levels([0.001, 0.011, 0.02, 0.3, 0.5], 0.05, "holm")
    # 0.001 < 0.05/5, 0.011 < 0.05/4, 0.02 >= 0.05/3: two rejected, the rest at 0.05/3
    assert levels.tolist() == pytest.approx([0.01, 0.0125, 0.05 / 3, 0.05 / 3, 0.05 / 3])


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
    """Two of four rejected: bounds at 0 in the effect's direction, the others at alpha/(K - r)."""
    est = [4.0, -3.2, 1.0, -0.5]
    p, at = _normal(est)
    shown = shown_statements(p, est, 0.05, "holm", at)  # type: ignore[arg-type]
    assert [s.kind for s in shown] == [ABOVE, BELOW, INTERVAL, INTERVAL]
    assert (shown[0].low, shown[0].high) == (0.0, math.inf) and (shown[1].low, shown[1].high) == (
        -math.inf,
        0.0,
    )
    assert math.isnan(shown[0].confidence) and shown[2].confidence == pytest.approx(1 - 0.05 / 2)
    assert (shown[2].low, shown[2].high) == at(2, 1 - 0.05 / 2)  # type: ignore[operator]
    assert [s.different for s in shown] == [True, True, False, False]
    assert [s.alpha_i for s in shown] == pytest.approx([0.05 / 4, 0.05 / 3, 0.05 / 2, 0.05 / 2])


def test_holm_with_every_pair_rejected_cuts_the_alpha_over_k_intervals_at_zero() -> None:
    est = [4.0, 2.3, -2.1]
    p, at = _normal(est)
    shown = shown_statements(p, est, 0.05, "holm", at)  # type: ignore[arg-type]
    assert all(s.kind == CUT and s.different and s.confidence == pytest.approx(1 - 0.05 / 3) for s in shown)
    full = [at(i, 1 - 0.05 / 3) for i in range(3)]  # type: ignore[operator]
    assert (shown[0].low, shown[0].high) == full[0]  # far from 0: nothing to cut
    assert (shown[1].low, shown[1].high) == (0.0, full[1][1]) and full[1][0] < 0
    assert (shown[2].low, shown[2].high) == (full[2][0], 0.0) and full[2][1] > 0


def test_none_rejected_is_bonferroni_and_bonferroni_stays_available() -> None:
    est = [1.0, -0.3, 0.2]
    p, at = _normal(est)
    for method in ("holm", "bonferroni"):
        shown = shown_statements(p, est, 0.05, method, at)  # type: ignore[arg-type]
        assert all(s.kind == INTERVAL and s.confidence == pytest.approx(1 - 0.05 / 3) for s in shown)
    bonf = shown_statements([1e-6, 0.5], [5.0, 0.1], 0.05, "bonferroni", _normal([5.0, 0.1])[1])  # type: ignore[arg-type]
    assert bonf[0].kind == INTERVAL and bonf[0].low > 0 and bonf[0].different
