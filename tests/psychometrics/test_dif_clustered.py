"""The model-unit DIF test: per-model counts, ρ, the exact beta-binomial test."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from enade_bench.psychometrics.dif import DifOptions, machine_human_dif
from enade_bench.psychometrics.dif_clustered import (
    clustered_item_test,
    intra_model_correlation,
    model_counts,
)
from enade_bench.psychometrics.irt import ItemParams


def test_model_counts_collapse_the_shuffles() -> None:
    x = np.array([[1, 0], [1, np.nan], [0, 1]], dtype=float)
    pi = np.array([[0.2, 0.4], [0.4, 0.9], [0.5, 0.6]])
    c = model_counts(x, pi, ["a", "a", "b"])
    assert c.models == ["a", "b"]
    assert c.correct.tolist() == [[2, 0], [0, 1]] and c.answered.tolist() == [[2, 1], [1, 1]]
    assert np.allclose(c.expected, [[0.3, 0.4], [0.5, 0.6]])


@pytest.mark.parametrize("rho", [0.1, 0.5, 0.8])
def test_intra_model_correlation_recovers_rho(rho: float) -> None:
    rng = np.random.default_rng(3)
    mean = rng.uniform(0.1, 0.9, 400)
    p = rng.beta(mean * (1 - rho) / rho, (1 - mean) * (1 - rho) / rho)
    y = rng.binomial(30, p)
    assert intra_model_correlation(y, np.full(400, 30), mean) == pytest.approx(rho, abs=0.06)


def test_independent_shuffles_give_the_exact_binomial_test() -> None:
    """ρ → 0: T ~ Binomial(K, π); the p-value is the doubled smaller tail."""
    r = clustered_item_test(np.array([14]), np.array([30]), np.array([0.3]), np.array([1e-6]))
    expected = 2 * min(stats.binom.cdf(14, 30, 0.3), stats.binom.sf(13, 30, 0.3))
    assert r.p == pytest.approx(expected, rel=1e-3)
    assert r.delta == pytest.approx(np.log(14 / 16) - np.log(0.3 / 0.7), abs=1e-3)
    assert r.delta_low < r.delta < r.delta_high


def test_one_copied_answer_is_one_respondent() -> None:
    """ρ → 1: 30 identical shuffles weigh as one answer; P(all right) = π, so p = 2π."""
    r = clustered_item_test(np.array([30]), np.array([30]), np.array([0.2]), np.array([1 - 1e-6]))
    assert r.p == pytest.approx(0.4, abs=1e-3)
    assert r.delta == np.inf


def test_models_add_evidence() -> None:
    """The same all-right item is significant with five independent models, not with one."""
    one = clustered_item_test(np.array([30]), np.array([30]), np.array([0.2]), np.array([0.9]))
    five = clustered_item_test(np.full(5, 30), np.full(5, 30), np.full(5, 0.2), np.full(5, 0.9))
    assert one.p > 0.2 and five.p < 0.01  # one: 2 P(Y = 30) = 0.28


def test_machine_human_dif_with_the_model_unit_reports_rho_and_models() -> None:
    rng = np.random.default_rng(8)
    items = ItemParams.from_arrays(rng.uniform(0.8, 2, 25), rng.normal(0, 1, 25), np.full(25, 0.15))
    x = (rng.random((3, 25)) < 0.5).astype(float).repeat(10, axis=0)  # 3 models, 10 copies each
    models = [f"m{m}" for m in range(3) for _ in range(10)]
    res = machine_human_dif(x, None, items, models=models, options=DifOptions(unit="model"))
    assert res.unit == "model" and set(res.rho) == {"m0", "m1", "m2"}
    assert all(r > 0.9 for r in res.rho.values())  # copies: the shuffles agree completely
    assert (res.table["models"] == 3).all() and not res.table["flagged"].any()
    pooled = machine_human_dif(x, None, items, models=models, options=DifOptions(unit="pattern"))
    assert pooled.table["p"].min() < res.table["p"].min()
