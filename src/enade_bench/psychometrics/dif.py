r"""Machine-human differential item functioning (DIF) against the human 3PL.

The reference group is not a sample but the 3PL model calibrated on millions
of students: for a human of ability :math:`\theta` the probability of a
correct answer to item :math:`j` is :math:`P_j(\theta)`. The focal group is
the machines: every model × shuffle response pattern of a study (a 0/1/NaN
matrix). For each item we fit the logistic regression with the human
prediction as offset

.. math:: \operatorname{logit} \Pr(y_{ij} = 1) = \operatorname{logit} \pi_{ij} + \delta_j

and test :math:`H_0: \delta_j = 0` with the likelihood-ratio statistic

.. math:: G^2_j = 2\,[\ell_j(\hat\delta_j) - \ell_j(0)] \sim \chi^2_1, \qquad
          \ell_j(\delta) = \sum_i y_{ij}\log p_{ij}(\delta) + (1-y_{ij})\log(1 - p_{ij}(\delta)).

This is the logistic-regression DIF test of Swaminathan & Rogers (1990) for
uniform DIF with the reference group's curve known exactly (their matching
variable enters through :math:`\pi_{ij}`), i.e. a one-parameter offset GLM
(McCullagh & Nelder 1989, sec. 4.4). :math:`\hat\delta_j` is the effect size
on the log-odds scale (the scale of the Mantel-Haenszel log odds ratio,
Holland & Thayer 1988): :math:`\delta > 0` means *easier for machines* than for
humans of the same ability. A second effect size on the probability scale is
:math:`\bar y_j - \bar\pi_j` (observed minus expected share correct).

Matching. ``theta`` given: :math:`\pi_{ij} = P_j(\theta_i)`. ``theta=None``
(recommended): :math:`\pi_{ij}` is the human posterior predictive probability
given the respondent's answers to the *other* items,

.. math:: \pi_{ij} = \frac{\sum_q P_j(\theta_q)\,L_{i,-j}(\theta_q)\,W_q}{\sum_q L_{i,-j}(\theta_q)\,W_q},

on the EAP quadrature (:data:`~enade_bench.psychometrics.estimation.MIRT`),
which leaves the studied item out of the matching (as the rest score in
Mantel-Haenszel DIF) and carries the uncertainty of θ instead of plugging in
a point estimate. Under :math:`H_0` (the machines answer like 3PL humans) the
test is then calibrated; see the simulation in ``tests/psychometrics/test_dif.py``
and ``docs/psychometrics_cat_dif.md`` for its power and false-positive rate.

The prior of that posterior is the machines' own normal ability distribution,
estimated by marginal maximum likelihood with the items fixed
(:func:`group_prior`), and flagged items are purged from the matching in a
second pass (purification).

Unit of evidence (``DifOptions.unit``). ``"pattern"``: the test above, every
model × shuffle pattern one respondent. The patterns of one model over shuffles
are not independent, so with few models this is liberal for "machines in
general" (with one model and 30 shuffles it flags items by the dozen,
``bench/dif_simulation.py``). ``"model"`` (the ENEM
study's and ``irt dif``'s default): each model's shuffles are collapsed to its
count of correct answers per item and tested exactly against a beta-binomial
null with the model's own between-shuffle correlation
(:mod:`~enade_bench.psychometrics.dif_clustered`), so the model is the unit.

Multiple testing: Benjamini & Hochberg (1995) q-values over the items tested
(:func:`enade_bench.metrics.multiplicity.benjamini_hochberg`).

References
----------
Swaminathan, H., & Rogers, H. J. (1990). Detecting differential item
functioning using logistic regression procedures. *Journal of Educational
Measurement*, 27(4), 361-370.

Holland, P. W., & Thayer, D. T. (1988). Differential item performance and the
Mantel-Haenszel procedure. In H. Wainer & H. I. Braun (Eds.), *Test
Validity* (pp. 129-145). Erlbaum.

Bock, R. D., & Aitkin, M. (1981). Marginal maximum likelihood estimation of
item parameters: application of an EM algorithm. *Psychometrika*, 46(4),
443-459.

Candell, G. L., & Drasgow, F. (1988). An iterative procedure for linking
metrics and assessing item bias in item response theory. *Applied
Psychological Measurement*, 12(3), 253-260.

Clauser, B., Mazor, K., & Hambleton, R. K. (1993). The effects of
purification of the matching criterion on the identification of DIF using
the Mantel-Haenszel procedure. *Applied Measurement in Education*, 6(4),
269-279.

Benjamini, Y., & Hochberg, Y. (1995). Controlling the false discovery rate.
*Journal of the Royal Statistical Society B*, 57(1), 289-300.

McCullagh, P., & Nelder, J. A. (1989). *Generalized Linear Models* (2nd ed.).
Chapman & Hall.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats

from enade_bench.metrics.multiplicity import adjust_pvalues
from enade_bench.psychometrics.dif_clustered import model_unit_tests
from enade_bench.psychometrics.estimation import MIRT, Quadrature, grid_log_likelihood
from enade_bench.psychometrics.irt import EPS, FloatArray, ItemParams, as_response_matrix, prob

EASIER = "easier for machines"
HARDER = "harder for machines"
_BOUND = 30.0


DifUnit = Literal["model", "pattern"]


@dataclass(frozen=True)
class DifOptions:
    """Settings of :func:`machine_human_dif`.

    Attributes
    ----------
    alpha : float
        False discovery rate for ``flagged`` (Benjamini-Hochberg).
    min_n : int
        Items answered by fewer patterns are not tested (p, q = NaN).
    unit : {"pattern", "model"}
        The unit of evidence (module docstring): ``"model"`` needs ``models``.
    estimate_prior : bool
        Replace the N(0, 1) prior by the machines' own normal distribution,
        :func:`group_prior` (default; a wrong prior biases the predictive
        probabilities and inflates the false-positive rate).
    purify : bool
        Two-stage purification: items flagged in a first pass are left out
        of the matching (and of the prior and of ρ) and every item is tested again
        (Candell & Drasgow 1988; Clauser, Mazor & Hambleton 1993).
    quadrature : Quadrature
        Grid (and, without ``estimate_prior``, prior) of the posterior predictive.
    """

    alpha: float = 0.05
    min_n: int = 10
    unit: DifUnit = "pattern"
    estimate_prior: bool = True
    purify: bool = True
    quadrature: Quadrature = field(default=MIRT)

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must be in (0, 1); got {self.alpha}")
        if self.unit not in ("model", "pattern"):
            raise ValueError(f"unit must be 'model' or 'pattern'; got {self.unit!r}")


@dataclass(frozen=True)
class DifResult:
    """Per-item machine-human DIF.

    Attributes
    ----------
    table : DataFrame
        One row per item: ``item_id, n, observed, expected, difference``
        (observed minus expected share correct), ``delta`` (log-odds shift,
        ±inf when every answer is right/wrong), ``delta_low, delta_high``
        (Wald 95 % interval), ``g2`` (LR statistic), ``p``, ``q``
        (Benjamini-Hochberg), ``flagged`` (``q <= alpha``) and ``direction``;
        with the model unit also ``models`` (models that answered the item).
    alpha : float
        The false discovery rate used for ``flagged``.
    matching : str
        ``"posterior predictive (leave item out)"`` or ``"theta"``.
    prior_mean, prior_sd : float
        The ability distribution used in the matching (estimated for the
        machines by default).
    unit : {"pattern", "model"}
        The unit of evidence of the test.
    rho : dict
        Model unit: each model's estimated intra-model (between-shuffle) correlation.
    """

    table: pd.DataFrame
    alpha: float
    matching: str
    prior_mean: float
    prior_sd: float
    unit: DifUnit = "pattern"
    rho: dict[str, float] = field(default_factory=dict)

    def flagged(self) -> pd.DataFrame:
        """The flagged items, largest |δ| first."""
        out = self.table[self.table["flagged"]]
        return out.reindex(out["delta"].abs().sort_values(ascending=False).index)


def group_prior(
    responses: ArrayLike, items: ItemParams, quadrature: Quadrature = MIRT, iterations: int = 200
) -> Quadrature:
    r"""The machines' own normal ability distribution, by marginal ML with the items fixed.

    EM on the quadrature grid (Bock & Aitkin 1981 with the item parameters
    held at the human calibration): with prior :math:`N(\mu, \sigma^2)`,
    :math:`\mu \leftarrow \bar m`, :math:`\sigma^2 \leftarrow
    \overline{v + (m - \mu)^2}` from the posterior means :math:`m_i` and
    variances :math:`v_i`, until the change is below 1e-6.

    Returns
    -------
    Quadrature
        ``quadrature`` with the estimated ``prior_mean`` and ``prior_sd``.
    """
    x = as_response_matrix(responses, len(items))
    nodes = quadrature.nodes()
    ll = grid_log_likelihood(x, items, nodes)
    mu, sd = quadrature.prior_mean, quadrature.prior_sd
    for _ in range(iterations):
        log_post = ll - 0.5 * ((nodes - mu) / sd) ** 2
        w = np.exp(log_post - log_post.max(axis=1, keepdims=True))
        w /= w.sum(axis=1, keepdims=True)
        m = w @ nodes
        v = np.maximum(w @ nodes**2 - m**2, 0.0)
        new_mu = float(m.mean())
        new_sd = float(np.sqrt(np.mean(v + (m - new_mu) ** 2)))
        new_sd = max(new_sd, 0.05)
        done = abs(new_mu - mu) < 1e-6 and abs(new_sd - sd) < 1e-6
        mu, sd = new_mu, new_sd
        if done:
            break
    return Quadrature(npts=quadrature.npts, lim=quadrature.lim, prior_mean=mu, prior_sd=sd)


def expected_human(
    responses: ArrayLike,
    items: ItemParams,
    theta: ArrayLike | None = None,
    quadrature: Quadrature = MIRT,
    exclude: ArrayLike | None = None,
) -> FloatArray:
    r"""The human 3PL probability :math:`\pi_{ij}` of each cell (see the module docstring).

    ``exclude`` (bool, shape ``(J,)``) leaves items out of every
    respondent's matching (purification); each item is always left out of
    its own.

    Returns
    -------
    ndarray
        Shape ``(n, J)``; defined also where the response is NaN.
    """
    x = as_response_matrix(responses, len(items))
    if theta is not None:
        t = np.asarray(theta, dtype=np.float64).reshape(-1)
        if t.size != x.shape[0]:
            raise ValueError(f"theta has {t.size} values for {x.shape[0]} respondents")
        out: FloatArray = prob(t, items)
        return out
    drop = np.zeros(len(items), bool) if exclude is None else np.asarray(exclude, dtype=bool)
    nodes = quadrature.nodes()
    p = np.clip(prob(nodes, items), EPS, 1.0 - EPS)  # (G, J)
    matched = np.where(drop[None, :], np.nan, x)
    log_prior = -0.5 * ((nodes - quadrature.prior_mean) / quadrature.prior_sd) ** 2
    log_all = grid_log_likelihood(matched, items, nodes) + log_prior
    pi = np.empty(x.shape)
    for j in range(len(items)):
        xj = matched[:, j]
        own = np.where(
            np.isnan(xj)[:, None], 0.0, np.where(xj[:, None] == 1.0, np.log(p[:, j]), np.log1p(-p[:, j]))
        )
        log_post = log_all - own
        w = np.exp(log_post - log_post.max(axis=1, keepdims=True))
        pi[:, j] = (w @ p[:, j]) / w.sum(axis=1)
    return pi


def _fit_shift(y: FloatArray, offset: FloatArray) -> tuple[float, float, float]:
    """MLE of δ in ``logit p = offset + δ``, its SE and the LR statistic."""
    n, s = y.size, float(y.sum())

    def loglik(d: float) -> float:
        eta = offset + d
        return float(np.sum(y * -np.logaddexp(0.0, -eta) + (1 - y) * -np.logaddexp(0.0, eta)))

    ll0 = loglik(0.0)
    if s in (0.0, float(n)):
        return (np.inf if s else -np.inf), np.nan, -2.0 * ll0
    lo, hi = -_BOUND, _BOUND
    d = 0.0
    for _ in range(100):  # Newton, safeguarded by bisection on the monotone score
        p = 0.5 * (1.0 + np.tanh(0.5 * (offset + d)))
        score = s - float(p.sum())
        if score > 0:
            lo = d
        else:
            hi = d
        info = float((p * (1 - p)).sum())
        step = score / info if info > 0 else 0.0
        new = d + step
        if not lo < new < hi:
            new = 0.5 * (lo + hi)
        if abs(new - d) < 1e-12:
            d = new
            break
        d = new
    p = 0.5 * (1.0 + np.tanh(0.5 * (offset + d)))
    info = float((p * (1 - p)).sum())
    return d, 1.0 / np.sqrt(info), max(2.0 * (loglik(d) - ll0), 0.0)


def machine_human_dif(
    responses: ArrayLike,
    theta: ArrayLike | None,
    items: ItemParams,
    item_ids: Sequence[str] | None = None,
    models: Sequence[str] | None = None,
    options: DifOptions | None = None,
) -> DifResult:
    """Test every item for a machine-human difference at equal ability.

    Parameters
    ----------
    responses : array_like
        Shape ``(n, J)``: 1, 0 or NaN; rows are machine response patterns
        (all models and shuffles), columns the items of ``items``.
    theta : array_like or None
        Shape ``(n,)``: the ability to match on, or ``None`` for the
        leave-item-out posterior predictive (recommended, see module docstring).
    items : ItemParams
        The human 3PL parameters.
    item_ids : sequence of str, optional
        Labels for the table (default ``items.item_ids``).
    models : sequence of str, optional
        Shape ``(n,)``: the model of each pattern (needed by ``unit="model"``).
    options : DifOptions, optional
        Level, minimum ``n``, unit, prior and purification (:class:`DifOptions`).

    Returns
    -------
    DifResult
    """
    opt = options or DifOptions()
    x = as_response_matrix(responses, len(items))
    ids = list(items.item_ids) if item_ids is None else [str(i) for i in item_ids]
    if len(ids) != len(items):
        raise ValueError(f"{len(ids)} item ids for {len(items)} items")
    labels = None if models is None else [str(m) for m in models]
    if opt.unit == "model" and (labels is None or len(labels) != x.shape[0]):
        raise ValueError(f"unit='model' needs one model label per pattern ({x.shape[0]})")
    base = opt.quadrature
    quad = base if theta is not None or not opt.estimate_prior else group_prior(x, items, base)
    pi = np.clip(expected_human(x, items, theta, quad), EPS, 1.0 - EPS)
    table, rho = _table(x, pi, ids, labels, opt, None)
    if theta is None and opt.purify and table["flagged"].any():
        drop = table["flagged"].to_numpy(bool)
        if opt.estimate_prior:
            quad = group_prior(np.where(drop[None, :], np.nan, x), items, base)
        pi = np.clip(expected_human(x, items, None, quad, exclude=drop), EPS, 1.0 - EPS)
        table, rho = _table(x, pi, ids, labels, opt, drop)
    matching = "theta" if theta is not None else "posterior predictive (leave item out)"
    return DifResult(table, opt.alpha, matching, quad.prior_mean, quad.prior_sd, opt.unit, rho)


def _table(
    x: FloatArray,
    pi: FloatArray,
    ids: list[str],
    models: list[str] | None,
    opt: DifOptions,
    drop: np.ndarray | None,
) -> tuple[pd.DataFrame, dict[str, float]]:
    """The per-item table of one pass, by the unit of ``opt``."""
    if opt.unit == "pattern" or models is None:
        return _dif_table(x, pi, ids, opt.alpha, opt.min_n), {}
    columns, rho = model_unit_tests(x, pi, models, opt.min_n, drop)
    table = _dif_table(x, pi, ids, opt.alpha, opt.min_n, tested=False)
    table[list(columns.columns)] = columns.to_numpy()
    table["models"] = table["models"].astype(int)
    return _adjust(table, opt.alpha), rho


def _dif_table(
    x: FloatArray, pi: FloatArray, ids: list[str], alpha: float, min_n: int, tested: bool = True
) -> pd.DataFrame:
    """Observed and expected shares per item, and (``tested``) the pattern-unit G² test."""
    rows = []
    for j, item in enumerate(ids):
        ok = ~np.isnan(x[:, j])
        y, pj = x[ok, j], pi[ok, j]
        row: dict[str, object] = {"item_id": item, "n": int(ok.sum())}
        row["observed"] = float(y.mean()) if y.size else np.nan
        row["expected"] = float(pj.mean()) if y.size else np.nan
        row["difference"] = row["observed"] - row["expected"]  # type: ignore[operator]
        if tested and y.size >= max(min_n, 1):
            d, se, g2 = _fit_shift(y, np.log(pj) - np.log1p(-pj))
            row.update(
                delta=d,
                delta_low=d - 1.959964 * se,
                delta_high=d + 1.959964 * se,
                g2=g2,
                p=float(stats.chi2.sf(g2, 1)),
            )
        else:
            row.update(delta=np.nan, delta_low=np.nan, delta_high=np.nan, g2=np.nan, p=np.nan)
        rows.append(row)
    return _adjust(pd.DataFrame(rows), alpha)


def _adjust(table: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """Benjamini-Hochberg q over the tested items, ``flagged`` and ``direction``."""
    table["q"] = adjust_pvalues(table["p"].to_numpy(float), "bh")
    table["flagged"] = table["q"] <= alpha
    table["direction"] = np.where(table["delta"] > 0, EASIER, np.where(table["delta"] < 0, HARDER, ""))
    return table
