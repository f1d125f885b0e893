r"""Machine-human DIF with the model as the unit: an exact test over models.

The shuffles (or samples) of one model are not independent respondents: a model
that does not know item :math:`j` misses it in most of its :math:`K` shuffles.
Pooling the :math:`K` patterns as :math:`K` respondents (the ``pattern`` unit of
:func:`~enade_bench.psychometrics.dif.machine_human_dif`) then reads one model's
idiosyncrasy as 30 independent pieces of evidence and flags items by the dozen
(``docs/psychometrics_cat_dif.md``, simulation of
``bench/dif_simulation.py``).

Here each model :math:`m` is collapsed to its count of correct answers to item
:math:`j`, :math:`Y_{mj}` of :math:`K_{mj}` shuffles, and its human expectation,
the mean over its patterns of the matched human probability :math:`\pi_{mkj}`
(:func:`~enade_bench.psychometrics.dif.expected_human`),
:math:`\bar\pi_{mj}`. Under the null of no DIF the model's probability of
answering item :math:`j` correctly is a random draw :math:`p_{mj}` around the
human prediction, :math:`E[p_{mj}] = \bar\pi_{mj}`, with a model-specific
intra-model (between-shuffle) correlation :math:`\rho_m`, so that

.. math:: Y_{mj} \sim \operatorname{BetaBinomial}\bigl(K_{mj},\;
          \alpha = \bar\pi_{mj}(1-\rho_m)/\rho_m,\;
          \beta = (1-\bar\pi_{mj})(1-\rho_m)/\rho_m\bigr),
          \qquad \operatorname{Var} Y_{mj} = K\bar\pi(1-\bar\pi)\,[1 + (K-1)\rho_m]

(Williams 1975; Crowder 1978): :math:`\rho_m = 0` is the binomial (independent
shuffles), :math:`\rho_m \to 1` one Bernoulli answer copied :math:`K` times. The
design effect :math:`1 + (K-1)\rho_m` is what pooling ignores. :math:`\rho_m` is
estimated per model by maximum likelihood over all the model's items
(:func:`intra_model_correlation`): the replicates of a model's dispersion are its
items, so even one model has :math:`J - 1` degrees of freedom for it.

Test of item :math:`j`: :math:`T_j = \sum_m Y_{mj}`, whose null distribution is the
convolution of the models' beta-binomials (computed exactly); the p-value is the
doubled smaller tail, :math:`p = \min\{1, 2\min[P(T \le t), P(T \ge t)]\}`
(conservative for a discrete statistic). With one model the smallest possible
p-value is about :math:`2\min(\bar\pi, 1-\bar\pi)` when :math:`\rho \approx 1`:
one model is one respondent, whatever the number of shuffles. Effect size: the
common log-odds shift :math:`\delta_j` of the means,
:math:`\operatorname{logit} E[p_{mj}] = \operatorname{logit}\bar\pi_{mj} + \delta_j`,
by maximum likelihood with the :math:`\rho_m` fixed, and its Wald interval
from the observed information.

References
----------
Williams, D. A. (1975). The analysis of binary responses from toxicological
experiments involving reproduction and teratogenicity. *Biometrics*, 31(4), 949-952.

Crowder, M. J. (1978). Beta-binomial anova for proportions. *Journal of the Royal
Statistical Society C*, 27(1), 34-37.

Agresti, A. (2013). *Categorical Data Analysis* (3rd ed.), sec. 4.7 and 14.3
(overdispersion, beta-binomial; clusters as the unit). Wiley.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize, stats

from enade_bench.psychometrics.irt import EPS, FloatArray, logistic

_RHO_MIN, _RHO_MAX = 1e-6, 1.0 - 1e-6
_BOUND = 30.0


@dataclass(frozen=True)
class ModelCounts:
    """Each model's answers to each item, collapsed over its shuffles.

    Attributes
    ----------
    models : list of str
        The models (clusters), in order of first appearance.
    correct, answered : ndarray of int
        Shape ``(M, J)``: correct answers and answered shuffles per model and item.
    expected : ndarray
        Shape ``(M, J)``: mean matched human probability :math:`\\bar\\pi_{mj}`
        (NaN where the model answered no shuffle of the item).
    """

    models: list[str]
    correct: np.ndarray
    answered: np.ndarray
    expected: FloatArray


def model_counts(x: FloatArray, pi: FloatArray, models: list[str]) -> ModelCounts:
    """Collapse the ``(n, J)`` patterns ``x`` (1/0/NaN) and their ``pi`` to per-model counts."""
    names = list(dict.fromkeys(models))
    index = {name: i for i, name in enumerate(names)}
    rows = np.array([index[m] for m in models])
    ok = ~np.isnan(x)
    shape = (len(names), x.shape[1])
    correct, answered, pi_sum = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    np.add.at(correct, rows, np.where(ok, x, 0.0))
    np.add.at(answered, rows, ok.astype(float))
    np.add.at(pi_sum, rows, np.where(ok, pi, 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = np.where(answered > 0, pi_sum / answered, np.nan)
    return ModelCounts(names, correct.astype(np.int64), answered.astype(np.int64), expected)


def _logpmf(y: np.ndarray, k: np.ndarray, mean: np.ndarray, rho: float | np.ndarray) -> np.ndarray:
    """Beta-binomial log-probabilities with the given mean and intra-model correlation."""
    m = np.clip(mean, EPS, 1.0 - EPS)
    r = np.clip(rho, _RHO_MIN, _RHO_MAX)
    scale = (1.0 - r) / r
    out: np.ndarray = stats.betabinom.logpmf(y, k, m * scale, (1.0 - m) * scale)
    return out


def intra_model_correlation(correct: np.ndarray, answered: np.ndarray, expected: FloatArray) -> float:
    r"""ML estimate of one model's :math:`\rho` over its items (beta-binomial, means fixed).

    Parameters
    ----------
    correct, answered : ndarray of int
        Shape ``(J,)``: the model's correct and answered shuffles per item.
    expected : ndarray
        Shape ``(J,)``: the null mean :math:`\bar\pi_{j}` of each item.

    Returns
    -------
    float
        :math:`\hat\rho \in [10^{-6}, 1 - 10^{-6}]`; ``0.0`` when every item was answered
        once (no shuffle replicates, :math:`\rho` not identified and irrelevant).
    """
    ok = (answered > 0) & np.isfinite(expected)
    y, k, mu = correct[ok], answered[ok], expected[ok]
    if not (k > 1).any():
        return 0.0

    def nll(logit_rho: float) -> float:
        return -float(_logpmf(y, k, mu, float(logistic(np.array(logit_rho)))).sum())

    lo, hi = np.log(_RHO_MIN / (1 - _RHO_MIN)), np.log(_RHO_MAX / (1 - _RHO_MAX))
    res = optimize.minimize_scalar(nll, bounds=(lo, hi), method="bounded", options={"xatol": 1e-6})
    return float(logistic(np.array(res.x)))


def _null_pmf(answered: np.ndarray, expected: FloatArray, rho: FloatArray) -> FloatArray:
    """Exact null distribution of :math:`T = \\sum_m Y_m` (convolution over the models)."""
    pmf = np.ones(1)
    for k, mu, r in zip(answered, expected, rho, strict=True):
        own = np.exp(_logpmf(np.arange(k + 1), np.full(k + 1, k), np.full(k + 1, mu), r))
        pmf = np.convolve(pmf, own / own.sum())
    return pmf


@dataclass(frozen=True)
class ClusteredItemTest:
    """The model-unit test of one item (see the module docstring)."""

    delta: float
    delta_low: float
    delta_high: float
    g2: float
    p: float


def clustered_item_test(
    correct: np.ndarray, answered: np.ndarray, expected: FloatArray, rho: FloatArray
) -> ClusteredItemTest:
    r"""Exact test of :math:`\delta_j = 0` for one item over the models that answered it.

    Parameters
    ----------
    correct, answered : ndarray of int
        Shape ``(M,)``: each model's correct and answered shuffles of the item.
    expected : ndarray
        Shape ``(M,)``: each model's :math:`\bar\pi_{mj}`.
    rho : ndarray
        Shape ``(M,)``: each model's intra-model correlation.

    Returns
    -------
    ClusteredItemTest
        ``delta`` (±inf when every answer is right / wrong), its Wald 95 % interval,
        ``g2`` (the beta-binomial likelihood-ratio statistic, for reference) and the
        exact p-value of :math:`T = \sum_m Y_m`.
    """
    keep = answered > 0
    y, k, mu, r = correct[keep], answered[keep], expected[keep], np.asarray(rho, dtype=float)[keep]
    pmf = _null_pmf(k, mu, r)
    t = int(y.sum())
    p = float(min(1.0, 2.0 * min(pmf[: t + 1].sum(), pmf[t:].sum())))
    logit_mu = np.log(np.clip(mu, EPS, 1 - EPS)) - np.log1p(-np.clip(mu, EPS, 1 - EPS))

    def loglik(d: float) -> float:
        return float(_logpmf(y, k, logistic(logit_mu + d), r).sum())

    ll0 = loglik(0.0)
    if t in (0, int(k.sum())):
        return ClusteredItemTest(np.inf if t else -np.inf, np.nan, np.nan, np.nan, p)
    res = optimize.minimize_scalar(
        lambda d: -loglik(d), bounds=(-_BOUND, _BOUND), method="bounded", options={"xatol": 1e-8}
    )
    d, h = float(res.x), 1e-3
    info = -(loglik(d + h) - 2 * loglik(d) + loglik(d - h)) / h**2
    se = 1.0 / np.sqrt(info) if info > 0 else np.nan
    g2 = max(2.0 * (loglik(d) - ll0), 0.0)
    return ClusteredItemTest(d, d - 1.959964 * se, d + 1.959964 * se, g2, p)


def model_unit_tests(
    x: FloatArray, pi: FloatArray, models: list[str], min_n: int, drop: np.ndarray | None = None
) -> tuple[pd.DataFrame, dict[str, float]]:
    """Every item's model-unit test (:func:`clustered_item_test`) and each model's ρ.

    Parameters
    ----------
    x, pi : ndarray
        Shape ``(n, J)``: the patterns (1/0/NaN) and their matched human probabilities.
    models : list of str
        The model of each pattern.
    min_n : int
        Items answered by fewer patterns are not tested (NaN).
    drop : ndarray of bool, optional
        Items left out of the estimation of ρ (purification).

    Returns
    -------
    tuple of (DataFrame, dict)
        One row per item, ``models, delta, delta_low, delta_high, g2, p``; ρ per model.
    """
    counts = model_counts(x, pi, models)
    keep = np.ones(x.shape[1], bool) if drop is None else ~np.asarray(drop, dtype=bool)
    rho = np.array(
        [
            intra_model_correlation(
                counts.correct[m, keep], counts.answered[m, keep], counts.expected[m, keep]
            )
            for m in range(len(counts.models))
        ]
    )
    rows = []
    for j in range(x.shape[1]):
        answered = counts.answered[:, j]
        row = {
            "models": int((answered > 0).sum()),
            "delta": np.nan,
            "delta_low": np.nan,
            "delta_high": np.nan,
            "g2": np.nan,
            "p": np.nan,
        }
        if answered.sum() >= max(min_n, 1):
            r = clustered_item_test(counts.correct[:, j], answered, counts.expected[:, j], rho)
            row.update(delta=r.delta, delta_low=r.delta_low, delta_high=r.delta_high, g2=r.g2, p=r.p)
        rows.append(row)
    return pd.DataFrame(rows), dict(zip(counts.models, rho.tolist(), strict=True))
