"""Each pair's level: adjusted p < alpha exactly when p < level (statsmodels' multipletests decides)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from enade_bench.metrics.multiplicity import adjust_pvalues
from enade_bench.metrics.simultaneous import decision_levels, family_mdd

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
    assert family_mdd(1.0, 0.05 / 10) == pytest.approx(half + NormalDist().inv_cdf(0.8))
