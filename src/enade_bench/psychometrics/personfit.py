"""Person-fit statistics: l_z and Snijders' corrected l_z*.

A pattern whose administered items are all correct or all wrong is *not
assessable*: its l_z and l_z* are ``NaN`` (and :func:`assessable` is False),
never a number. So is a pattern with no administered item.

References
----------
Drasgow, F., Levine, M. V., & Williams, E. A. (1985). Appropriateness
measurement with polychotomous item response models and standardized indices.
*British Journal of Mathematical and Statistical Psychology*, 38(1), 67-86.

Snijders, T. A. B. (2001). Asymptotic null distribution of person fit
statistics with estimated person parameter. *Psychometrika*, 66(3), 331-342.

Magis, D., Raîche, G., & Béland, S. (2012). A didactic presentation of
Snijders's l_z* index of person fit with emphasis on response model
selection and ability estimation. *Journal of Educational and Behavioral
Statistics*, 37(1), 57-81.

Tendeiro, J. N., Meijer, R. R., & Niessen, A. S. M. (2016). PerFit: An R
package for person-fit analysis in IRT. *Journal of Statistical Software*,
74(5), 1-27.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from enade_bench.psychometrics.estimation import (
    MIRT,
    Method,
    Quadrature,
    ThetaEstimates,
    estimate_theta,
    prior_term,
)
from enade_bench.psychometrics.irt import (
    EPS,
    FloatArray,
    ItemParams,
    as_response_matrix,
    prob,
    prob_derivatives,
)


class NoCorrectionError(ValueError):
    """l_z* was asked for an estimator without an estimating equation (EAP)."""


def assessable(responses: ArrayLike, n_items: int | None = None) -> NDArray[np.bool_]:
    """True where a pattern has at least one correct and one wrong administered answer."""
    x = np.asarray(responses, dtype=np.float64)
    x = as_response_matrix(x, x.shape[-1] if n_items is None else n_items)
    administered = ~np.isnan(x)
    n_right = np.where(administered, np.nan_to_num(x), 0.0).sum(axis=1)
    out: NDArray[np.bool_] = (n_right > 0) & (n_right < administered.sum(axis=1))
    return out


def _pieces(
    responses: ArrayLike, theta: ArrayLike, items: ItemParams
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, NDArray[np.bool_]]:
    """Responses, P, P', log-odds weight, mask and the assessable flag."""
    x = as_response_matrix(responses, len(items))
    t = np.asarray(theta, dtype=np.float64).reshape(-1)
    if t.size != x.shape[0]:
        raise ValueError(f"theta has {t.size} values for {x.shape[0]} response patterns")
    ok = assessable(x) & np.isfinite(t)
    p, dp, _ = prob_derivatives(np.where(ok, t, 0.0), items)
    p = np.clip(p, EPS, 1.0 - EPS)
    mask = ~np.isnan(x)
    return np.nan_to_num(x), p, dp, np.log(p / (1.0 - p)), mask.astype(np.float64), ok


def lz(responses: ArrayLike, theta: ArrayLike, items: ItemParams) -> FloatArray:
    r"""Standardised log-likelihood person-fit statistic :math:`l_z`.

    .. math::
        l_0 = \sum_j x_j \log P_j + (1 - x_j)\log(1 - P_j), \quad
        E(l_0) = \sum_j P_j \log P_j + (1 - P_j)\log(1 - P_j),

        \operatorname{Var}(l_0) = \sum_j P_j(1 - P_j)\left[\log\frac{P_j}{1 - P_j}\right]^2,
        \qquad l_z = \frac{l_0 - E(l_0)}{\sqrt{\operatorname{Var}(l_0)}}

    evaluated at the supplied θ, over the administered items. Equal to R
    PerFit's ``lz`` (``IRT.PModel = "3PL"``, ``Ability`` supplied). Small
    (negative) values signal misfit.

    Parameters
    ----------
    responses : array_like
        Shape ``(n, J)``: 1, 0 or NaN.
    theta : array_like
        Shape ``(n,)``.
    items : ItemParams
        The items.

    Returns
    -------
    ndarray
        Shape ``(n,)``; ``NaN`` where not assessable (all correct, all wrong,
        nothing administered) or θ is not finite.

    References
    ----------
    Drasgow, Levine & Williams (1985); Tendeiro, Meijer & Niessen (2016).
    """
    x, p, _, w, mask, ok = _pieces(responses, theta, items)
    l0_minus_e = (mask * (x - p) * w).sum(axis=1)
    var = (mask * p * (1.0 - p) * w**2).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = np.where(ok, l0_minus_e / np.sqrt(var), np.nan)
    return out


def lz_star(
    responses: ArrayLike,
    theta: ArrayLike,
    items: ItemParams,
    method: Method,
    quadrature: Quadrature = MIRT,
) -> FloatArray:
    r"""Snijders' (2001) corrected :math:`l_z^*` at an estimated θ.

    With :math:`w_j = \log[P_j/(1-P_j)]`, :math:`r_j = P_j'/[P_j(1-P_j)]` and
    the estimator's :math:`r_0` (0 for ML, :math:`-(\theta-\mu)/\sigma^2` for
    MAP with a :math:`N(\mu,\sigma^2)` prior, :math:`J/(2I)` for WLE):

    .. math::
        W = \sum_j (x_j - P_j) w_j, \quad
        c = \frac{\sum_j P_j' w_j}{\sum_j P_j' r_j}, \quad
        \tilde w_j = w_j - c\,r_j,

        l_z^* = \frac{W + c\,r_0(\hat\theta)}{\sqrt{\sum_j P_j(1-P_j)\tilde w_j^2}}

    all at :math:`\hat\theta`; asymptotically N(0, 1) under the model.

    Parameters
    ----------
    responses : array_like
        Shape ``(n, J)``: 1, 0 or NaN.
    theta : array_like
        Shape ``(n,)``: estimates obtained with ``method``.
    items : ItemParams
        The items.
    method : {"ml", "map", "wle"}
        The estimator that produced ``theta``; it fixes :math:`r_0`.
    quadrature : Quadrature
        The MAP prior.

    Raises
    ------
    NoCorrectionError
        For ``method="eap"``: EAP solves no estimating equation, so Snijders'
        correction is not defined for it; using the ML term would be silently
        wrong. Use :func:`lz` (conservative at high θ) or a MAP/ML/WLE θ.

    References
    ----------
    Snijders (2001), eqs. 9-12; Magis, Raîche & Béland (2012), table 1.
    """
    if method == "eap":
        raise NoCorrectionError(
            "l_z* has no correction for EAP ability estimates (Snijders 2001 needs an "
            "estimating equation: ML, MAP or WLE); report l_z or re-estimate theta"
        )
    x, p, dp, w, mask, ok = _pieces(responses, theta, items)
    t = np.where(ok, np.asarray(theta, dtype=np.float64).reshape(-1), 0.0)
    pq = p * (1.0 - p)
    r = dp / pq
    info = (mask * dp * r).sum(axis=1)
    _, _, d2p = prob_derivatives(t, items)
    warm_j = (mask * d2p * r).sum(axis=1)
    r0 = prior_term(t, info, warm_j, method, quadrature)
    big_w = (mask * (x - p) * w).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        c = (mask * dp * w).sum(axis=1) / (mask * dp * r).sum(axis=1)
        w_tilde = w - c[:, None] * r
        tau = np.sqrt((mask * pq * w_tilde**2).sum(axis=1))
        out: FloatArray = np.where(ok, (big_w + c * r0) / tau, np.nan)
    return out


def person_fit(responses: ArrayLike, estimates: ThetaEstimates, items: ItemParams) -> pd.DataFrame:
    """l_z and, where defined, l_z* for a set of θ estimates.

    Returns
    -------
    DataFrame
        Columns ``lz``, ``lz_star`` (``NaN`` for EAP, see :func:`lz_star`) and
        ``assessable``.
    """
    x = as_response_matrix(responses, len(items))
    star = (
        np.full(x.shape[0], np.nan)
        if estimates.method == "eap"
        else lz_star(x, estimates.theta, items, estimates.method, estimates.quadrature)
    )
    return pd.DataFrame({"lz": lz(x, estimates.theta, items), "lz_star": star, "assessable": assessable(x)})


@dataclass(frozen=True)
class Cutoff:
    """A parametric-bootstrap cut-off for a person-fit statistic.

    Attributes
    ----------
    value : float
        Median over replications of the ``alpha`` quantile; patterns whose
        statistic is below it are flagged as misfitting.
    ci_low, ci_high : float
        2.5% and 97.5% percentiles of the replicated quantiles.
    alpha, statistic, method, n_boot, n_respondents :
        The settings used.
    """

    value: float
    ci_low: float
    ci_high: float
    alpha: float
    statistic: str
    method: Method
    n_boot: int
    n_respondents: int


def simulate_responses(theta: ArrayLike, items: ItemParams, rng: np.random.Generator) -> FloatArray:
    """Draw 0/1 responses from the 3PL: ``x = 1`` with probability ``P_j(θ)``."""
    p = prob(np.asarray(theta, dtype=np.float64).reshape(-1), items)
    out: FloatArray = (rng.random(p.shape) < p).astype(np.float64)
    return out


def bootstrap_cutoff(
    items: ItemParams,
    rng: np.random.Generator,
    *,
    method: Method = "eap",
    statistic: str = "lz",
    theta: ArrayLike | None = None,
    n_respondents: int = 1000,
    n_boot: int = 200,
    alpha: float = 0.05,
    quadrature: Quadrature = MIRT,
) -> Cutoff:
    r"""Parametric-bootstrap cut-off for ``lz`` or ``lz_star`` with fixed items.

    Each replication draws ``n_respondents`` abilities (resampled from
    ``theta`` when given, else from the prior :math:`N(\mu,\sigma^2)`),
    simulates responses from the 3PL, re-estimates θ with ``method``, computes
    the statistic on the assessable patterns and keeps its ``alpha`` quantile.
    The cut-off is the median of those quantiles (as PerFit's ``cutoff``).

    Parameters
    ----------
    items : ItemParams
        The fixed item parameters (one booklet).
    rng : numpy.random.Generator
        Seeded generator; the only source of randomness.
    method : {"eap", "map", "ml", "wle"}
        θ estimator used for the observed patterns.
    statistic : {"lz", "lz_star"}
        Person-fit statistic (``lz_star`` needs MAP, ML or WLE).
    theta : array_like, optional
        Estimated abilities of the observed sample, to resample from.
    n_respondents, n_boot : int
        Replication size and count.
    alpha : float
        Lower-tail level (misfit = small values).

    References
    ----------
    de la Torre, J., & Deng, W. (2008). Improving person-fit assessment by
    correcting the ability estimate and its reference distribution. *Journal
    of Educational Measurement*, 45(2), 159-177. Tendeiro et al. (2016).
    """
    if statistic not in ("lz", "lz_star"):
        raise ValueError(f"statistic must be 'lz' or 'lz_star'; got {statistic!r}")
    if statistic == "lz_star" and method == "eap":
        lz_star(np.zeros((0, len(items))), np.zeros(0), items, method)  # raises NoCorrectionError
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1); got {alpha}")
    pool = None if theta is None else np.asarray(theta, dtype=np.float64)
    if pool is not None:
        pool = pool[np.isfinite(pool)]
        if pool.size == 0:
            raise ValueError("theta holds no finite value to resample")
    quantiles = np.empty(n_boot)
    for k in range(n_boot):
        if pool is None:
            draws = rng.normal(quadrature.prior_mean, quadrature.prior_sd, n_respondents)
        else:
            draws = rng.choice(pool, size=n_respondents, replace=True)
        x = simulate_responses(draws, items, rng)
        est = estimate_theta(x, items, method, quadrature)
        if statistic == "lz":
            values = lz(x, est.theta, items)
        else:
            values = lz_star(x, est.theta, items, method, quadrature)
        values = values[np.isfinite(values)]
        quantiles[k] = np.quantile(values, alpha) if values.size else np.nan
    lo, mid, hi = np.nanquantile(quantiles, [0.025, 0.5, 0.975])
    return Cutoff(float(mid), float(lo), float(hi), alpha, statistic, method, n_boot, n_respondents)
