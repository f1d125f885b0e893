"""l_z against R PerFit and hand-worked values; l_z* and the bootstrap cut-off."""

from __future__ import annotations

import numpy as np
import pytest

from enade_bench.psychometrics.estimation import Method, Quadrature, estimate_theta
from enade_bench.psychometrics.irt import ItemParams
from enade_bench.psychometrics.personfit import (
    Cutoff,
    NoCorrectionError,
    assessable,
    bootstrap_cutoff,
    lz,
    lz_star,
    person_fit,
    simulate_responses,
)

from .oracle import Oracle

# Two 2PL items (a = 1) with P = 0.8 and P = 0.4 at θ = 0: b = -ln 4, b = ln 1.5.
TWO = ItemParams.from_arrays([1.0, 1.0], [-np.log(4.0), np.log(1.5)])
PATTERN = np.array([[1.0, 0.0]])


def test_lz_reproduces_perfit_on_2400_published_rows(oracle: Oracle) -> None:
    got = lz(oracle.responses, oracle.rows["IRT_SCORE"].to_numpy(), oracle.items)
    np.testing.assert_allclose(got, oracle.rows["LZ_SCORE"], atol=1e-3, rtol=0)


def test_lz_hand_worked() -> None:
    # l0 = ln .8 + ln .6 = -0.733969; E = .8 ln .8 + .2 ln .2 + .4 ln .4 + .6 ln .6 = -1.173414;
    # Var = .16 (ln 4)^2 + .24 (ln 2/3)^2 = 0.346946; lz = 0.439445 / 0.589021 = 0.746059.
    assert lz(PATTERN, [0.0], TWO)[0] == pytest.approx(0.746059, abs=1e-5)


def test_lz_star_hand_worked_for_each_estimator() -> None:
    # r_j = a = 1, w = (ln 4, ln 2/3), P' = (.16, .24): c = 0.124495 / 0.4 = 0.311238,
    # tau^2 = .16 (1.075056)^2 + .24 (0.716703)^2 = 0.308199, W = 0.439445.
    assert lz_star(PATTERN, [0.0], TWO, "ml")[0] == pytest.approx(0.439445 / 0.555157, abs=1e-5)
    # MAP with prior N(-0.5, 1): r0 = -(0 + 0.5) = -0.5.
    shifted = Quadrature(prior_mean=-0.5)
    assert lz_star(PATTERN, [0.0], TWO, "map", shifted)[0] == pytest.approx(0.283826 / 0.555157, abs=1e-5)
    # WLE: J = sum a^3 PQ(1 - 2P) = -0.096 + 0.048, I = 0.4, r0 = J / 2I = -0.06.
    assert lz_star(PATTERN, [0.0], TWO, "wle")[0] == pytest.approx(0.420771 / 0.555157, abs=1e-5)


def test_lz_star_refuses_eap() -> None:
    with pytest.raises(NoCorrectionError, match="EAP"):
        lz_star(PATTERN, [0.0], TWO, "eap")
    est = estimate_theta(PATTERN, TWO, "eap")
    frame = person_fit(PATTERN, est, TWO)
    assert np.isnan(frame["lz_star"]).all()
    assert np.isfinite(frame["lz"]).all()


def test_extreme_patterns_are_not_assessable() -> None:
    items = ItemParams.from_arrays([1.0, 1.2, 0.8], [0.0, 0.5, -0.5], [0.2, 0.2, 0.2])
    x = np.array(
        [[1, 1, 1], [0, 0, 0], [1, np.nan, 0], [np.nan, np.nan, np.nan], [1, 1, np.nan]], dtype=float
    )
    assert assessable(x).tolist() == [False, False, True, False, False]
    est = estimate_theta(x, items, "map")
    assert np.isnan(lz(x, est.theta, items)[[0, 1, 3, 4]]).all()
    assert np.isnan(lz_star(x, est.theta, items, "map")[[0, 1, 3, 4]]).all()
    assert np.isfinite(lz(x, est.theta, items)[2])


def _long_test(rng: np.random.Generator, n_items: int = 60) -> ItemParams:
    return ItemParams.from_arrays(rng.lognormal(0.0, 0.25, n_items), rng.normal(0.0, 1.0, n_items))


@pytest.mark.parametrize("method", ["ml", "wle", "map"])
def test_lz_star_is_standard_normal_under_the_model(method: Method) -> None:
    """Snijders (2001): with estimated θ, l_z* is ~N(0, 1); l_z is deflated (conservative)."""
    rng = np.random.default_rng(20240611)
    items = _long_test(rng, 40)
    x = simulate_responses(np.full(3000, 1.5), items, rng)
    est = estimate_theta(x, items, method)
    star = lz_star(x, est.theta, items, method)
    plain = lz(x, est.theta, items)
    assert abs(np.nanmean(star)) < 0.15
    assert 0.9 < np.nanstd(star) < 1.1
    assert np.nanmean(star < -1.645) == pytest.approx(0.05, abs=0.02)
    assert np.nanstd(plain) < 0.85
    assert np.nanmean(plain < -1.645) < 0.03


def test_bootstrap_cutoff_is_seeded_and_near_normal_quantile() -> None:
    rng = np.random.default_rng(7)
    items = _long_test(rng, 40)

    def run() -> Cutoff:
        return bootstrap_cutoff(
            items, np.random.default_rng(1), method="ml", statistic="lz_star", n_boot=25, n_respondents=400
        )

    first = run()
    assert first == run()
    assert first.ci_low <= first.value <= first.ci_high
    assert first.value == pytest.approx(-1.645, abs=0.3)


def test_bootstrap_cutoff_resamples_given_theta_and_rejects_eap_lz_star() -> None:
    rng = np.random.default_rng(3)
    items = _long_test(rng, 30)
    high = bootstrap_cutoff(items, rng, theta=[2.5, 3.0], n_boot=20, n_respondents=300)
    assert high.statistic == "lz"
    assert high.method == "eap"
    assert np.isfinite(high.value)
    with pytest.raises(NoCorrectionError):
        bootstrap_cutoff(items, rng, method="eap", statistic="lz_star")
    with pytest.raises(ValueError, match="statistic"):
        bootstrap_cutoff(items, rng, statistic="ht")


def test_theta_length_must_match() -> None:
    with pytest.raises(ValueError, match="theta has 2 values"):
        lz(PATTERN, [0.0, 1.0], TWO)
