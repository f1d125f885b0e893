"""MML-EM calibration: recovery of simulated parameters, optimality, SEs and item fit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.typing import ArrayLike
from scipy import optimize

from enade_bench.psychometrics.calibration import EM_QUADRATURE, Model, Priors, _Data, _Packing, calibrate
from enade_bench.psychometrics.estimation import Quadrature
from enade_bench.psychometrics.irt import ItemParams
from enade_bench.psychometrics.itemfit import summed_score_distribution, sx2
from enade_bench.psychometrics.personfit import simulate_responses
from enade_bench.psychometrics.tidy import aggregate_shuffles


def marginal_log_posterior(
    responses: ArrayLike,
    items: ItemParams,
    model: Model,
    priors: Priors,
    quadrature: Quadrature = EM_QUADRATURE,
) -> float:
    """Marginal log-likelihood plus log prior of ``items`` (the quantity EM maximises)."""
    data = _Data(np.asarray(responses, dtype=np.float64), quadrature)
    _, _, loglik = data.e_step(items.a, items.b, items.c)
    pack = _Packing(model, len(items))
    return loglik + pack.log_prior(priors, pack.natural(items.a, items.b, items.c))


def _simulate(
    seed: int, n: int, a: np.ndarray, b: np.ndarray, c: np.ndarray | None = None
) -> tuple[ItemParams, np.ndarray]:
    rng = np.random.default_rng(seed)
    items = ItemParams.from_arrays(a, b, c)
    return items, simulate_responses(rng.normal(size=n), items, rng)


def _rmse(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.sqrt(np.mean((np.asarray(x) - np.asarray(y)) ** 2)))


def test_2pl_recovers_simulated_parameters() -> None:
    rng = np.random.default_rng(101)
    a, b = rng.uniform(0.6, 2.0, 15), rng.uniform(-2.0, 2.0, 15)
    true, x = _simulate(102, 2000, a, b)
    cal = calibrate(x, "2pl")
    assert cal.converged
    assert _rmse(cal.items.a, true.a) < 0.12
    assert _rmse(cal.items.b, true.b) < 0.12
    assert np.corrcoef(cal.items.a, true.a)[0, 1] > 0.95
    z = np.concatenate([(cal.table["a"] - a) / cal.table["se_a"], (cal.table["b"] - b) / cal.table["se_b"]])
    assert 0.6 < np.std(z) < 1.6
    assert (cal.table["c"] == 0).all()
    assert cal.table["se_c"].isna().all()


def test_1pl_recovers_the_common_slope() -> None:
    rng = np.random.default_rng(201)
    b = rng.uniform(-1.5, 1.5, 12)
    true, x = _simulate(202, 1500, np.full(12, 1.4), b)
    cal = calibrate(x, "1pl", priors=Priors.flat())
    assert np.ptp(cal.items.a) == 0
    assert cal.items.a[0] == pytest.approx(1.4, abs=0.1)
    assert _rmse(cal.items.b, true.b) < 0.12


def test_3pl_recovers_simulated_parameters_with_priors() -> None:
    rng = np.random.default_rng(301)
    a, b, c = rng.uniform(1.0, 2.2, 12), rng.uniform(-1.5, 1.5, 12), rng.uniform(0.1, 0.3, 12)
    true, x = _simulate(302, 4000, a, b, c)
    cal = calibrate(x, "3pl")
    assert _rmse(cal.items.b, true.b) < 0.25
    assert _rmse(cal.items.c, true.c) < 0.08
    assert _rmse(cal.items.a, true.a) < 0.35
    assert cal.table["se_c"].notna().all()


def test_em_reaches_the_maximum_of_the_marginal_posterior() -> None:
    """Direct quasi-Newton maximisation from another start finds the same point."""
    rng = np.random.default_rng(401)
    _, x = _simulate(402, 400, rng.uniform(0.7, 1.8, 5), rng.uniform(-1, 1, 5))
    priors = Priors()
    cal = calibrate(x, "2pl", priors=priors, tol=1e-7)

    def negative(v: np.ndarray) -> float:
        items = ItemParams.from_arrays(np.exp(v[:5]), v[5:])
        return -marginal_log_posterior(x, items, "2pl", priors)

    direct = optimize.minimize(negative, np.zeros(10), method="BFGS", options={"gtol": 1e-8})
    np.testing.assert_allclose(np.exp(direct.x[:5]), cal.items.a, atol=2e-3)
    np.testing.assert_allclose(direct.x[5:], cal.items.b, atol=2e-3)
    assert -direct.fun <= marginal_log_posterior(x, cal.items, "2pl", priors) + 1e-6


def test_missing_and_fractional_responses_are_accepted() -> None:
    rng = np.random.default_rng(501)
    _, x = _simulate(502, 600, rng.uniform(0.8, 1.6, 8), rng.uniform(-1, 1, 8))
    x[:300, :2] = np.nan
    x[300:, 6:] = 0.5 * x[300:, 6:] + 0.25
    frame = pd.DataFrame(x, columns=[f"q{k}" for k in range(8)])
    cal = calibrate(frame, "2pl")
    assert cal.table["item_id"].tolist() == list(frame.columns)
    assert cal.table["n"].tolist() == [300, 300, 600, 600, 600, 600, 600, 600]
    assert np.isfinite(cal.table[["a", "b", "se_a", "se_b"]].to_numpy()).all()


def test_invalid_input_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        calibrate(np.array([[1.0, 2.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="no response"):
        calibrate(np.array([[1.0, np.nan], [0.0, np.nan]]))
    with pytest.raises(ValueError, match="model"):
        calibrate(np.array([[1.0, 0.0], [0.0, 1.0]]), model="4pl")  # type: ignore[arg-type]


def test_shuffle_repeats_aggregate_before_calibration() -> None:
    rng = np.random.default_rng(601)
    _, x = _simulate(602, 60, rng.uniform(0.8, 1.6, 10), rng.uniform(-1, 1, 10))
    tidy = pd.DataFrame(
        [
            {"respondent": f"m{r}", "shuffle": s, "item_id": f"q{j}", "correct": int(x[r, j])}
            for r in range(60)
            for s in range(3)
            for j in range(10)
        ]
    )
    wide = aggregate_shuffles(tidy)
    assert wide.shape == (60, 10)
    cal = calibrate(wide, "2pl", standard_errors=False)
    assert len(cal.table) == 10
    assert cal.table["se_a"].isna().all()


def test_lord_wingersky_hand_worked() -> None:
    # Two items, P = 0.5 and 0.2: Pr(S=0) = .4, Pr(S=1) = .5, Pr(S=2) = .1.
    dist = summed_score_distribution(np.array([[0.5, 0.2]]))
    np.testing.assert_allclose(dist, [[0.4, 0.5, 0.1]])


def test_sx2_accepts_the_true_model_and_flags_a_misfitting_item() -> None:
    rng = np.random.default_rng(701)
    true, x = _simulate(702, 3000, rng.uniform(0.8, 2.0, 12), rng.uniform(-1.5, 1.5, 12))
    fit = sx2(x, true, n_params=2)
    assert (fit["sx2_p"] < 0.01).sum() <= 1
    bad = x.copy()
    bad[:, 0] = (rng.random(3000) < 0.5).astype(float)  # unrelated to ability
    flagged = sx2(bad, true, n_params=2)
    assert flagged["sx2_p"].iloc[0] < 1e-6
    assert (flagged["sx2_df"] >= 1).all()
