"""θ estimation: the R mirt oracle, numerical integration and independent root finding."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from enade_bench.psychometrics.estimation import (
    INEP,
    MIRT,
    Method,
    Quadrature,
    eap,
    estimate_theta,
)
from enade_bench.psychometrics.irt import ItemParams, item_information, prob

from .likelihood import estimating_function, log_likelihood
from .oracle import Oracle

ITEMS = ItemParams.from_arrays(
    [1.2, 0.8, 2.0, 1.5, 0.9, 1.1], [-1.0, -0.3, 0.2, 0.8, 1.5, 0.0], [0.2, 0.1, 0.25, 0.15, 0.2, 0.0]
)
PATTERNS = np.array(
    [
        [1, 1, 0, 1, 0, 1],
        [1, 0, 0, 0, 0, 1],
        [1, 1, 1, 1, 0, 1],
        [0, 1, 0, 0, 1, 0],
        [1, np.nan, 1, 0, np.nan, 0],
    ],
    dtype=float,
)


def test_eap_reproduces_mirt_on_2400_published_rows(oracle: Oracle) -> None:
    """mirt fscores(EAP) θ and SE to 1e-3 on every 2019/2022 row (mixed booklets in one call)."""
    assert len(oracle.rows) == 2400
    est = eap(oracle.responses, oracle.items, MIRT)
    np.testing.assert_allclose(est.theta, oracle.rows["IRT_SCORE"], atol=1e-3, rtol=0)
    np.testing.assert_allclose(est.se, oracle.rows["IRT_SCORE_SE"], atol=1e-3, rtol=0)


def test_older_mirt_61_points_also_within_tolerance(oracle: Oracle) -> None:
    """61 points (older mirt) stay within the 1e-3 contract, but are not identical to 121."""
    old = eap(oracle.responses, oracle.items, Quadrature(npts=61, lim=6.0))
    np.testing.assert_allclose(old.theta, oracle.rows["IRT_SCORE"], atol=1e-3, rtol=0)
    np.testing.assert_allclose(old.se, oracle.rows["IRT_SCORE_SE"], atol=1e-3, rtol=0)


def _posterior_moments(pattern: np.ndarray, items: ItemParams) -> tuple[float, float]:
    """Posterior mean and SD by adaptive integration over the real line."""

    def weight(t: float) -> float:
        return float(np.exp(log_likelihood([t], pattern[None, :], items)[0]) * stats.norm.pdf(t))

    z = integrate.quad(weight, -np.inf, np.inf, epsabs=1e-13)[0]
    m = integrate.quad(lambda t: t * weight(t), -np.inf, np.inf, epsabs=1e-13)[0] / z
    v = integrate.quad(lambda t: (t - m) ** 2 * weight(t), -np.inf, np.inf, epsabs=1e-13)[0] / z
    return m, float(np.sqrt(v))


def test_eap_matches_continuous_posterior_mean() -> None:
    est = eap(PATTERNS, ITEMS, MIRT)
    for k, pattern in enumerate(PATTERNS):
        mean, sd = _posterior_moments(pattern, ITEMS)
        assert est.theta[k] == pytest.approx(mean, abs=1e-6)
        assert est.se[k] == pytest.approx(sd, abs=1e-6)


def test_inep_preset_is_40_points_on_4() -> None:
    nodes = INEP.nodes()
    assert nodes.size == 40
    assert (nodes[0], nodes[-1]) == (-4.0, 4.0)
    assert INEP.weights().sum() == pytest.approx(1.0)
    assert estimate_theta(PATTERNS, ITEMS, "eap", "inep").quadrature == INEP


@pytest.mark.parametrize("method", ["ml", "wle", "map"])
def test_modal_estimates_solve_their_estimating_equation(method: Method) -> None:
    """Independent root finding (Brent) of g(θ) = 0 on each mixed pattern."""
    est = estimate_theta(PATTERNS, ITEMS, method)
    for k, pattern in enumerate(PATTERNS):
        root = optimize.brentq(
            lambda t, p=pattern: estimating_function([t], p[None, :], ITEMS, method)[0],  # type: ignore[misc,arg-type]
            -5.9,
            5.9,
            xtol=1e-12,
        )
        assert est.theta[k] == pytest.approx(root, abs=1e-7)


def test_ml_maximises_likelihood_and_map_posterior() -> None:
    ml = estimate_theta(PATTERNS, ITEMS, "ml")
    mp = estimate_theta(PATTERNS, ITEMS, "map")
    for k, pattern in enumerate(PATTERNS):
        grid = np.linspace(-6, 6, 4001)
        ll = log_likelihood(grid, np.repeat(pattern[None, :], grid.size, axis=0), ITEMS)
        assert ml.theta[k] == pytest.approx(grid[ll.argmax()], abs=3e-3)
        assert mp.theta[k] == pytest.approx(grid[(ll - grid**2 / 2).argmax()], abs=3e-3)


def test_standard_errors_follow_information() -> None:
    ml = estimate_theta(PATTERNS[:4], ITEMS, "ml")
    mp = estimate_theta(PATTERNS[:4], ITEMS, "map")
    info_ml = item_information(ml.theta, ITEMS).sum(axis=1)
    info_map = item_information(mp.theta, ITEMS).sum(axis=1)
    np.testing.assert_allclose(ml.se, 1 / np.sqrt(info_ml), rtol=1e-10)
    np.testing.assert_allclose(mp.se, 1 / np.sqrt(info_map + 1.0), rtol=1e-10)


def test_wle_matches_warm_for_the_2pl_all_correct_pattern() -> None:
    """2PL: Warm's WLE maximises L(θ)·sqrt(I(θ)); finite even for all-correct."""
    items = ItemParams.from_arrays([1.0, 1.5, 0.7, 1.2], [-1.0, 0.0, 0.5, 1.0])
    est = estimate_theta(np.ones((1, 4)), items, "wle")

    def neg(t: float) -> float:
        return -(float(np.sum(np.log(prob(t, items)))) + 0.5 * np.log(item_information(t, items).sum()))

    best = optimize.minimize_scalar(neg, bounds=(-6, 6), method="bounded", options={"xatol": 1e-12}).x
    assert np.isfinite(est.theta[0])
    assert est.theta[0] == pytest.approx(best, abs=1e-6)


def test_extreme_patterns_have_documented_answers() -> None:
    x = np.array([[1.0] * 6, [0.0] * 6])
    ml = estimate_theta(x, ITEMS, "ml")
    assert ml.theta.tolist() == [np.inf, -np.inf]
    assert np.isnan(ml.se).all()
    for method in ("eap", "map"):
        est = estimate_theta(x, ITEMS, method)
        assert np.isfinite(est.theta).all()
        assert est.theta[0] > 1.0
        assert est.theta[1] < -1.0


def test_missing_responses_equal_dropping_the_items() -> None:
    pattern = PATTERNS[4]
    keep = ~np.isnan(pattern)
    ids = tuple(i for i, k in zip(ITEMS.item_ids, keep, strict=True) if k)
    sub = ItemParams(ids, ITEMS.a[keep], ITEMS.b[keep], ITEMS.c[keep])
    for method in ("eap", "map", "ml", "wle"):
        full = estimate_theta(pattern[None, :], ITEMS, method)
        reduced = estimate_theta(pattern[keep][None, :], sub, method)
        assert full.theta[0] == pytest.approx(reduced.theta[0], abs=1e-9)
        assert full.n_items[0] == 4
        assert full.n_correct[0] == 2


def test_no_administered_item() -> None:
    x = np.full((1, 6), np.nan)
    assert eap(x, ITEMS).theta[0] == pytest.approx(0.0, abs=1e-12)
    assert eap(x, ITEMS).se[0] == pytest.approx(1.0, abs=1e-3)
    assert np.isnan(estimate_theta(x, ITEMS, "ml").theta[0])


def test_quadrature_validation() -> None:
    with pytest.raises(ValueError, match="npts"):
        Quadrature(npts=1)
    with pytest.raises(ValueError, match="lim"):
        Quadrature(lim=0.0)
    with pytest.raises(ValueError, match="method"):
        estimate_theta(PATTERNS, ITEMS, "eapx")  # type: ignore[arg-type]


def test_prior_shifts_eap() -> None:
    low = eap(PATTERNS, ITEMS, Quadrature(prior_mean=-1.0))
    high = eap(PATTERNS, ITEMS, Quadrature(prior_mean=1.0))
    assert (high.theta > low.theta).all()
