"""Machine-human DIF: the offset logistic test, its calibration and power on simulated machines."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from enade_bench.psychometrics.dif import (
    EASIER,
    HARDER,
    DifOptions,
    group_prior,
    machine_human_dif,
)
from enade_bench.psychometrics.irt import ItemParams, logistic, prob


def bank(n: int = 30, seed: int = 2) -> ItemParams:
    rng = np.random.default_rng(seed)
    return ItemParams.from_arrays(rng.uniform(0.8, 2.2, n), rng.normal(0, 1, n), rng.uniform(0.05, 0.25, n))


def test_shift_estimate_matches_a_glm_fit_with_offset() -> None:
    """δ̂ and G² against statsmodels-free check: the score equation and the LR by brute force."""
    items = bank(5)
    rng = np.random.default_rng(0)
    theta = rng.normal(0, 1, 400)
    p = prob(theta, items)
    x = (rng.random(p.shape) < logistic(np.log(p) - np.log1p(-p) + 0.8)).astype(float)
    res = machine_human_dif(x, theta, items).table
    for j in range(5):
        off = np.log(p[:, j]) - np.log1p(-p[:, j])
        d = res.loc[j, "delta"]
        assert np.sum(x[:, j] - logistic(off + d)) == pytest.approx(0.0, abs=1e-8)
        grid = np.linspace(d - 0.5, d + 0.5, 2001)
        ll = [
            np.sum(x[:, j] * np.log(logistic(off + g)) + (1 - x[:, j]) * np.log1p(-logistic(off + g)))
            for g in grid
        ]
        ll0 = np.sum(x[:, j] * np.log(p[:, j]) + (1 - x[:, j]) * np.log1p(-p[:, j]))
        assert res.loc[j, "g2"] == pytest.approx(2 * (max(ll) - ll0), rel=1e-5)
        assert res.loc[j, "p"] == pytest.approx(stats.chi2.sf(res.loc[j, "g2"], 1))
    assert (res["direction"] == EASIER).sum() >= 4


def test_table_columns_bh_and_directions() -> None:
    items = bank()
    rng = np.random.default_rng(1)
    theta = rng.normal(-1, 1, 300)
    p = prob(theta, items)
    delta = np.zeros(len(items))
    delta[[3, 7]] = [2.0, -2.0]
    x = (rng.random(p.shape) < logistic(np.log(p) - np.log1p(-p) + delta)).astype(float)
    x[rng.random(x.shape) < 0.1] = np.nan
    result = machine_human_dif(x, None, items, item_ids=[f"i{k}" for k in range(len(items))])
    t = result.table
    assert list(t.columns[:5]) == ["item_id", "n", "observed", "expected", "difference"]
    assert {"delta", "g2", "p", "q", "flagged", "direction"} <= set(t.columns)
    assert np.allclose(t["q"], stats.false_discovery_control(t["p"], method="bh"))
    assert t.loc[3, "direction"] == EASIER and t.loc[7, "direction"] == HARDER
    assert t.loc[3, "flagged"] and t.loc[7, "flagged"]
    assert t.loc[3, "difference"] > 0 > t.loc[7, "difference"]
    assert set(result.flagged()["item_id"]) >= {"i3", "i7"}
    assert result.prior_mean == pytest.approx(-1.0, abs=0.3)


def test_all_correct_item_has_infinite_shift() -> None:
    items = bank(4)
    x = np.array([[1, 0, 1, 1], [1, 1, 0, 0], [1, 0, 0, 1]] * 5, dtype=float)
    t = machine_human_dif(x, np.zeros(15), items, options=DifOptions(min_n=5)).table
    assert t.loc[0, "delta"] == np.inf and t.loc[0, "direction"] == EASIER
    assert np.isfinite(t.loc[0, "g2"]) and t.loc[0, "p"] < 0.05


def test_group_prior_recovers_the_machines_distribution() -> None:
    items = bank(40)
    rng = np.random.default_rng(4)
    theta = rng.normal(-1.5, 0.7, 2000)
    x = (rng.random((2000, 40)) < prob(theta, items)).astype(float)
    quad = group_prior(x, items)
    assert quad.prior_mean == pytest.approx(-1.5, abs=0.1)
    assert quad.prior_sd == pytest.approx(0.7, abs=0.1)


def test_options_are_checked() -> None:
    with pytest.raises(ValueError, match="alpha"):
        DifOptions(alpha=1.5)
    with pytest.raises(ValueError, match="unit"):
        DifOptions(unit="respondent")  # type: ignore[arg-type]
    x = np.ones((4, 3))
    with pytest.raises(ValueError, match="one model label per pattern"):
        machine_human_dif(x, None, bank(3), options=DifOptions(unit="model"))
