"""Item calibration by marginal maximum likelihood (Bock-Aitkin EM), with priors.

Written here rather than taken from a library: girth is unmaintained and its
3PL fails on NumPy 2, py-irt needs torch + pyro and Python < 3.12, and the
few dozen lines of EM below are checked against direct maximisation of the
marginal posterior and against simulated data (see docs/psychometrics.md).

Model: θ ~ N(0, 1) (fixes the scale), responses 3PL / 2PL / 1PL. The
default is the 2PL with priors: with tens of models as examinees the
lower asymptote is barely identified.

References
----------
Bock, R. D., & Aitkin, M. (1981). Marginal maximum likelihood estimation of
item parameters: Application of an EM algorithm. *Psychometrika*, 46(4),
443-459.

Mislevy, R. J. (1986). Bayes modal estimation in item response models.
*Psychometrika*, 51(2), 177-195.

Louis, T. A. (1982). Finding the observed information matrix when using the
EM algorithm. *JRSS B*, 44(2), 226-233 (Fisher's identity used for the
marginal gradient).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import optimize

from enade_bench.psychometrics.estimation import Quadrature
from enade_bench.psychometrics.irt import EPS, FloatArray, ItemParams, logistic
from enade_bench.psychometrics.itemfit import sx2

Model = Literal["1pl", "2pl", "3pl"]

#: EM quadrature: N(0, 1) on 61 points in [-6, 6] (R mirt's default for one factor).
EM_QUADRATURE = Quadrature(npts=61, lim=6.0)


@dataclass(frozen=True)
class Priors:
    r"""Prior densities on the item parameters (``None`` = flat).

    Defaults: :math:`\log a \sim N(0, 0.5^2)` (lognormal, as BILOG-MG),
    :math:`b \sim N(0, 2^2)` (keeps items everyone answers right finite),
    :math:`c \sim \text{Beta}(5, 17)` (mean 0.2, five options; BILOG-MG's
    default form for the lower asymptote).
    """

    log_a_mean: float = 0.0
    log_a_sd: float | None = 0.5
    b_mean: float = 0.0
    b_sd: float | None = 2.0
    c_alpha: float | None = 5.0
    c_beta: float | None = 17.0

    @classmethod
    def flat(cls) -> Priors:
        """No prior at all (pure marginal maximum likelihood)."""
        return cls(log_a_sd=None, b_sd=None, c_alpha=None, c_beta=None)

    def log_density(self, a: FloatArray, b: FloatArray, c: FloatArray | None) -> float:
        """Sum of the log prior densities (up to constants)."""
        total = 0.0
        if self.log_a_sd is not None:
            total += float(np.sum(-np.log(a) - 0.5 * ((np.log(a) - self.log_a_mean) / self.log_a_sd) ** 2))
        if self.b_sd is not None:
            total += float(np.sum(-0.5 * ((b - self.b_mean) / self.b_sd) ** 2))
        if c is not None and self.c_alpha is not None and self.c_beta is not None:
            total += float(np.sum((self.c_alpha - 1) * np.log(c) + (self.c_beta - 1) * np.log1p(-c)))
        return total

    def gradient(
        self, a: FloatArray, b: FloatArray, c: FloatArray | None
    ) -> tuple[FloatArray, FloatArray, FloatArray | None]:
        """Derivatives of :meth:`log_density` with respect to ``a``, ``b``, ``c``."""
        ga = np.zeros_like(a)
        if self.log_a_sd is not None:
            ga = -1.0 / a - (np.log(a) - self.log_a_mean) / (self.log_a_sd**2 * a)
        gb = np.zeros_like(b) if self.b_sd is None else -(b - self.b_mean) / self.b_sd**2
        gc = None
        if c is not None:
            gc = np.zeros_like(c)
            if self.c_alpha is not None and self.c_beta is not None:
                gc = (self.c_alpha - 1) / c - (self.c_beta - 1) / (1.0 - c)
        return ga, gb, gc


@dataclass
class Calibration:
    """Result of :func:`calibrate`.

    Attributes
    ----------
    items : ItemParams
        Estimated parameters (feed them to the scoring functions).
    table : DataFrame
        Per item: ``item_id, a, b, c, se_a, se_b, se_c, n, sx2, sx2_df, sx2_p``.
    log_likelihood : float
        Marginal log-likelihood at the estimate (without the priors).
    iterations : int
        EM cycles run.
    converged : bool
        Whether the largest parameter change fell below ``tol``.
    model : str
        ``"1pl"``, ``"2pl"`` or ``"3pl"``.
    """

    items: ItemParams
    table: pd.DataFrame
    log_likelihood: float
    iterations: int
    converged: bool
    model: Model
    priors: Priors = field(default_factory=Priors)


class _Data:
    """Response matrix split into correct/wrong weights and the quadrature."""

    def __init__(self, x: FloatArray, quad: Quadrature) -> None:
        mask = ~np.isnan(x)
        self.right = np.where(mask, np.nan_to_num(x), 0.0)
        self.wrong = np.where(mask, 1.0 - np.nan_to_num(x), 0.0)
        self.mask = mask.astype(np.float64)
        self.nodes = quad.nodes()
        self.log_w = np.log(quad.weights())

    def e_step(self, a: FloatArray, b: FloatArray, c: FloatArray) -> tuple[FloatArray, FloatArray, float]:
        """Expected counts ``r_jq`` (correct) and ``n_jq`` (administered); marginal log-likelihood."""
        p = np.clip(c + (1 - c) * logistic(a * (self.nodes[:, None] - b)), EPS, 1 - EPS)
        log_joint = self.right @ np.log(p).T + self.wrong @ np.log1p(-p).T + self.log_w
        top = log_joint.max(axis=1, keepdims=True)
        joint = np.exp(log_joint - top)
        total = joint.sum(axis=1, keepdims=True)
        post = joint / total
        loglik = float(np.sum(np.log(total) + top))
        # einsum, not BLAS: these products have a long inner dimension (respondents) and tiny
        # outputs, for which multithreaded BLAS is slow on a busy machine.
        expected_right = np.einsum("nj,nq->jq", self.right, post)
        expected_all = np.einsum("nj,nq->jq", self.mask, post)
        return expected_right, expected_all, loglik


def _expected_terms(
    a: FloatArray, b: FloatArray, c: FloatArray, nodes: FloatArray, r: FloatArray, n: FloatArray
) -> tuple[float, FloatArray, FloatArray, FloatArray]:
    """Expected complete-data log-likelihood and its gradient in (a, b, c)."""
    t = nodes[None, :]
    psi = logistic(a[:, None] * (t - b[:, None]))
    p = np.clip(c[:, None] + (1 - c[:, None]) * psi, EPS, 1 - EPS)
    value = float(np.sum(r * np.log(p) + (n - r) * np.log1p(-p)))
    dl_dp = (r - n * p) / (p * (1 - p))
    core = (1 - c[:, None]) * psi * (1 - psi)
    ga = np.sum(dl_dp * core * (t - b[:, None]), axis=1)
    gb = -np.sum(dl_dp * core, axis=1) * a
    gc = np.sum(dl_dp * (1 - psi), axis=1)
    return value, ga, gb, gc


class _Packing:
    """Map between the optimiser's unconstrained vector and (a, b, c)."""

    def __init__(self, model: Model, n_items: int) -> None:
        self.model = model
        self.j = n_items

    def unpack(self, z: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        j = self.j
        if self.model == "1pl":
            return np.full(j, np.exp(z[0])), z[1 : j + 1], np.zeros(j)
        a, b = np.exp(z[:j]), z[j : 2 * j]
        c = logistic(z[2 * j :]) if self.model == "3pl" else np.zeros(j)
        return a, b, c

    def pack(self, a: FloatArray, b: FloatArray, c: FloatArray) -> FloatArray:
        if self.model == "1pl":
            return np.concatenate([[np.log(a[0])], b])
        parts = [np.log(a), b]
        if self.model == "3pl":
            parts.append(np.log(c / (1 - c)))
        return np.concatenate(parts)

    def natural(self, a: FloatArray, b: FloatArray, c: FloatArray) -> FloatArray:
        """Parameters as reported: (a) or a's, b's, (c's)."""
        if self.model == "1pl":
            return np.concatenate([[a[0]], b])
        return np.concatenate([a, b, c] if self.model == "3pl" else [a, b])

    def from_natural(self, v: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        j = self.j
        if self.model == "1pl":
            return np.full(j, v[0]), v[1 : j + 1], np.zeros(j)
        c = v[2 * j :] if self.model == "3pl" else np.zeros(j)
        return v[:j], v[j : 2 * j], c

    def jacobian(self, v: FloatArray) -> FloatArray:
        """Diagonal of d(natural)/d(unconstrained) at natural parameters ``v``."""
        jac = np.ones_like(v)
        n_a = 1 if self.model == "1pl" else self.j
        jac[:n_a] = v[:n_a]
        if self.model == "3pl":
            c = v[2 * self.j :]
            jac[2 * self.j :] = c * (1 - c)
        return jac

    def prior_gradient(self, priors: Priors, v: FloatArray) -> FloatArray:
        """Gradient of the log prior in natural parameters (one ``a`` for the 1PL)."""
        a, b, c = self.from_natural(v)
        a_used = a[:1] if self.model == "1pl" else a
        ga, gb, gc = priors.gradient(a_used, b, c if self.model == "3pl" else None)
        parts = [ga, gb] + ([gc] if gc is not None else [])
        return np.concatenate(parts)

    def log_prior(self, priors: Priors, v: FloatArray) -> float:
        a, b, c = self.from_natural(v)
        a_used = a[:1] if self.model == "1pl" else a
        return priors.log_density(a_used, b, c if self.model == "3pl" else None)

    def natural_gradient(self, ga: FloatArray, gb: FloatArray, gc: FloatArray) -> FloatArray:
        if self.model == "1pl":
            return np.concatenate([[np.sum(ga)], gb])
        return np.concatenate([ga, gb, gc] if self.model == "3pl" else [ga, gb])


def _posterior_gradient(data: _Data, pack: _Packing, priors: Priors, v: FloatArray) -> FloatArray:
    """Gradient of the marginal log-posterior in natural parameters (Fisher's identity)."""
    a, b, c = pack.from_natural(v)
    r, n, _ = data.e_step(a, b, c)
    _, ga, gb, gc = _expected_terms(a, b, c, data.nodes, r, n)
    return pack.natural_gradient(ga, gb, gc) + pack.prior_gradient(priors, v)


def _standard_errors(data: _Data, pack: _Packing, priors: Priors, v: FloatArray) -> FloatArray:
    """SEs from the observed information: numerical Jacobian of the marginal gradient."""
    k = v.size
    hessian = np.empty((k, k))
    for i in range(k):
        h = 1e-4 * max(1.0, abs(v[i]))
        up, down = v.copy(), v.copy()
        up[i] += h
        down[i] -= h
        hessian[:, i] = (
            _posterior_gradient(data, pack, priors, up) - _posterior_gradient(data, pack, priors, down)
        ) / (2 * h)
    hessian = 0.5 * (hessian + hessian.T)
    try:
        cov = np.linalg.inv(-hessian)
    except np.linalg.LinAlgError:
        cov = np.linalg.pinv(-hessian)
    diag = np.diag(cov)
    se: FloatArray = np.where(diag > 0, np.sqrt(np.abs(diag)), np.nan)
    return se


def calibrate(
    responses: pd.DataFrame | ArrayLike,
    model: Model = "2pl",
    priors: Priors | None = None,
    quadrature: Quadrature = EM_QUADRATURE,
    max_iter: int = 500,
    tol: float = 1e-4,
    item_ids: list[str] | None = None,
    standard_errors: bool = True,
) -> Calibration:
    r"""Estimate 1PL/2PL/3PL item parameters by MML-EM with priors.

    E-step: posterior weights of each respondent on the quadrature nodes,
    giving expected counts :math:`\bar r_{jq}` (correct) and
    :math:`\bar n_{jq}` (administered). M-step: maximise

    .. math:: \sum_{j,q} \bar r_{jq}\log P_j(\theta_q) + (\bar n_{jq} - \bar r_{jq})\log(1 - P_j(\theta_q))
              + \log \pi(a, b, c)

    (all items at once, L-BFGS, analytic gradient). Stops when the largest
    change of a parameter falls below ``tol``. Standard errors come from
    the observed information of the marginal log-posterior (numerical
    Jacobian of its gradient, which Fisher's identity gives exactly).
    The 1PL has one common discrimination.

    Parameters
    ----------
    responses : DataFrame or array_like
        Respondents × items, values in [0, 1] (fractions allowed; option shuffles
        aggregated first, :func:`~enade_bench.psychometrics.tidy.aggregate_shuffles`)
        or NaN (not administered). A DataFrame's columns are the item ids.
    model : {"2pl", "1pl", "3pl"}
        Response model (default 2PL).
    priors : Priors, optional
        Default :class:`Priors` (use :meth:`Priors.flat` for plain MML).
    quadrature : Quadrature
        Latent N(0, 1) and its nodes (default 61 points on [-6, 6]).

    Returns
    -------
    Calibration

    References
    ----------
    Bock & Aitkin (1981); Mislevy (1986); Orlando & Thissen (2000) for the
    item fit (see :func:`~enade_bench.psychometrics.itemfit.sx2`).
    """
    if model not in ("1pl", "2pl", "3pl"):
        raise ValueError(f"model must be 1pl, 2pl or 3pl; got {model!r}")
    priors = Priors() if priors is None else priors
    if isinstance(responses, pd.DataFrame):
        ids = [str(c) for c in responses.columns]
        x = responses.to_numpy(dtype=np.float64)
    else:
        x = np.asarray(responses, dtype=np.float64)
        ids = item_ids if item_ids is not None else [str(i + 1) for i in range(x.shape[1])]
    if x.ndim != 2 or x.shape[1] != len(ids):
        raise ValueError("responses must be a respondents x items matrix")
    finite = x[~np.isnan(x)]
    if finite.size and ((finite < 0).any() or (finite > 1).any()):
        raise ValueError("responses must lie in [0, 1] or be NaN")
    if (np.isnan(x).all(axis=0)).any():
        raise ValueError("an item has no response at all")
    data = _Data(x, quadrature)
    j = x.shape[1]
    pack = _Packing(model, j)
    p_plus = np.clip(np.nanmean(x, axis=0), 0.02, 0.98)
    c0 = np.full(j, 0.2) if model == "3pl" else np.zeros(j)
    z = pack.pack(np.ones(j), -np.log(p_plus / (1 - p_plus)), c0)
    converged = False
    iterations = 0
    while iterations < max_iter:
        iterations += 1
        r, n, _ = data.e_step(*pack.unpack(z))

        def objective(zz: FloatArray, r: FloatArray = r, n: FloatArray = n) -> tuple[float, FloatArray]:
            a, b, c = pack.unpack(zz)
            v = pack.natural(a, b, c)
            value, ga, gb, gc = _expected_terms(a, b, c, data.nodes, r, n)
            value += pack.log_prior(priors, v)
            grad = (pack.natural_gradient(ga, gb, gc) + pack.prior_gradient(priors, v)) * pack.jacobian(v)
            return -value, -grad

        res = optimize.minimize(objective, z, jac=True, method="L-BFGS-B")
        change = np.max(np.abs(pack.natural(*pack.unpack(res.x)) - pack.natural(*pack.unpack(z))))
        z = res.x
        if change < tol:
            converged = True
            break
    a, b, c = pack.unpack(z)
    _, _, loglik = data.e_step(a, b, c)
    v = pack.natural(a, b, c)
    se = _standard_errors(data, pack, priors, v) if standard_errors else np.full(v.size, np.nan)
    se_a, se_b, se_c = pack.from_natural(se)
    if model != "3pl":
        se_c = np.full(j, np.nan)
    items = ItemParams.from_arrays(a, b, c, ids)
    n_params = {"1pl": 1, "2pl": 2, "3pl": 3}[model]
    fit = sx2(x, items, n_params=n_params, quadrature=quadrature)
    table = items.to_frame().assign(se_a=se_a, se_b=se_b, se_c=se_c, n=(~np.isnan(x)).sum(axis=0))
    for column in ("sx2", "sx2_df", "sx2_p"):
        table[column] = fit[column].to_numpy()
    return Calibration(items, table, loglik, iterations, converged, model, priors)
