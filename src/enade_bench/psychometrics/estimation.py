"""Ability (θ) estimation with fixed item parameters: EAP, MAP, ML and WLE.

All estimators are vectorised over respondents; missing responses (``NaN``,
item not administered) are skipped. Each returns its standard error.

Conventions for the patterns where an estimator has no interior solution
(documented in docs/psychometrics.md):

* all-correct / all-wrong: EAP and MAP are finite (the prior keeps them
  finite); ML is ``+inf`` / ``-inf`` with SE ``NaN`` (as R mirt reports); WLE
  is searched within ``[-lim, lim]`` and may sit on the bound.
* a mixed pattern whose ML (or WLE) lies beyond the search range (possible in
  the 3PL with few correct answers on high-``c`` items) gets the bound.
* no administered item: EAP and MAP return the prior mean and SD; ML and WLE
  return ``NaN``.

References
----------
Bock, R. D., & Mislevy, R. J. (1982). Adaptive EAP estimation of ability in a
microcomputer environment. *Applied Psychological Measurement*, 6(4), 431-444.

Warm, T. A. (1989). Weighted likelihood estimation of ability in item response
theory. *Psychometrika*, 54(3), 427-450.

Chalmers, R. P. (2012). mirt: A multidimensional item response theory package
for the R environment. *Journal of Statistical Software*, 48(6), 1-29.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from enade_bench.psychometrics.irt import (
    EPS,
    FloatArray,
    ItemParams,
    as_response_matrix,
    prob,
    prob_derivatives,
)
from enade_bench.psychometrics.rootfind import illinois

Method = Literal["eap", "map", "ml", "wle"]
METHODS: tuple[Method, ...] = ("eap", "map", "ml", "wle")


@dataclass(frozen=True)
class Quadrature:
    """Equally spaced quadrature and normal prior for θ.

    Parameters
    ----------
    npts : int
        Number of quadrature points (EAP); at least 2.
    lim : float
        Points span ``[-lim, lim]``; MAP, ML and WLE search the same range.
    prior_mean, prior_sd : float
        Normal prior :math:`N(\\mu, \\sigma^2)` (EAP and MAP).
    """

    npts: int = 121
    lim: float = 6.0
    prior_mean: float = 0.0
    prior_sd: float = 1.0

    def __post_init__(self) -> None:
        if self.npts < 2:
            raise ValueError(f"npts must be at least 2; got {self.npts}")
        if not (np.isfinite(self.lim) and self.lim > 0):
            raise ValueError(f"lim must be positive; got {self.lim}")
        if not (np.isfinite(self.prior_sd) and self.prior_sd > 0):
            raise ValueError(f"prior_sd must be positive; got {self.prior_sd}")

    def nodes(self) -> FloatArray:
        """The quadrature points ``linspace(-lim, lim, npts)``."""
        return np.linspace(-self.lim, self.lim, self.npts)

    def weights(self) -> FloatArray:
        """Normal prior density at the nodes, normalised to sum to 1."""
        z = (self.nodes() - self.prior_mean) / self.prior_sd
        w = np.exp(-0.5 * z**2)
        normalised: FloatArray = w / w.sum()
        return normalised


#: R mirt's ``fscores`` defaults: N(0, 1), 121 points on [-6, 6].
MIRT = Quadrature(npts=121, lim=6.0)
#: INEP's ENEM scoring: N(0, 1), 40 points on [-4, 4].
INEP = Quadrature(npts=40, lim=4.0)
PRESETS: dict[str, Quadrature] = {"mirt": MIRT, "inep": INEP}


@dataclass(frozen=True)
class ThetaEstimates:
    """Ability estimates for ``n`` respondents.

    Attributes
    ----------
    theta, se : ndarray
        Shape ``(n,)``.
    n_items, n_correct : ndarray of int
        Administered items and correct answers per respondent.
    method : str
        ``"eap"``, ``"map"``, ``"ml"`` or ``"wle"``.
    quadrature : Quadrature
        Prior and range used.
    """

    theta: FloatArray
    se: FloatArray
    n_items: NDArray[np.int64]
    n_correct: NDArray[np.int64]
    method: Method
    quadrature: Quadrature


def _split(x: FloatArray) -> tuple[FloatArray, FloatArray, NDArray[np.bool_]]:
    """Correct indicator, wrong indicator (both 0 where missing) and mask."""
    administered = ~np.isnan(x)
    correct = np.where(administered, np.nan_to_num(x), 0.0)
    wrong = np.where(administered, 1.0 - np.nan_to_num(x), 0.0)
    return correct, wrong, administered


def grid_log_likelihood(x: FloatArray, items: ItemParams, grid: FloatArray) -> FloatArray:
    r"""Log-likelihood of every pattern at every grid point, shape ``(n, G)``.

    :math:`\ell_{nq} = \sum_j x_{nj}\log P_j(\theta_q) + (1-x_{nj})\log(1-P_j(\theta_q))`,
    skipping missing responses; computed as two matrix products.
    """
    correct, wrong, _ = _split(x)
    p = np.clip(prob(grid, items), EPS, 1.0 - EPS)
    ll: FloatArray = correct @ np.log(p).T + wrong @ np.log1p(-p).T
    return ll


def eap(responses: ArrayLike, items: ItemParams, quadrature: Quadrature = MIRT) -> ThetaEstimates:
    r"""Expected a posteriori (EAP) ability and posterior SD.

    .. math::
        \hat\theta = \frac{\sum_q \theta_q L(\theta_q) W_q}{\sum_q L(\theta_q) W_q},
        \qquad
        SE = \sqrt{\frac{\sum_q (\theta_q - \hat\theta)^2 L(\theta_q) W_q}{\sum_q L(\theta_q) W_q}}

    with equally spaced nodes :math:`\theta_q` and normalised normal-density
    weights :math:`W_q` (as R mirt's ``fscores(method = "EAP")``).

    Parameters
    ----------
    responses : array_like
        Shape ``(n, J)``: 1, 0 or NaN (not administered).
    items : ItemParams
        The ``J`` items.
    quadrature : Quadrature
        :data:`MIRT` (default) or :data:`INEP` or any other setting.

    Returns
    -------
    ThetaEstimates

    References
    ----------
    Bock & Mislevy (1982); Chalmers (2012).
    """
    x = as_response_matrix(responses, len(items))
    nodes = quadrature.nodes()
    log_post = grid_log_likelihood(x, items, nodes) + np.log(quadrature.weights())
    log_post -= log_post.max(axis=1, keepdims=True)
    post = np.exp(log_post)
    post /= post.sum(axis=1, keepdims=True)
    theta = post @ nodes
    var = post @ nodes**2 - theta**2
    centred = np.maximum(var, 0.0)
    return _result(x, theta, np.sqrt(centred), "eap", quadrature)


def _result(
    x: FloatArray, theta: FloatArray, se: FloatArray, method: Method, quad: Quadrature
) -> ThetaEstimates:
    administered = ~np.isnan(x)
    return ThetaEstimates(
        theta=np.asarray(theta, dtype=np.float64),
        se=np.asarray(se, dtype=np.float64),
        n_items=administered.sum(axis=1).astype(np.int64),
        n_correct=np.where(administered, np.nan_to_num(x), 0.0).sum(axis=1).round().astype(np.int64),
        method=method,
        quadrature=quad,
    )


def _score_terms(
    theta: FloatArray, correct: FloatArray, mask: FloatArray, items: ItemParams
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Per-respondent score ``sum (x - P) P'/(PQ)``, information and Warm's ``J``.

    ``correct`` is the 0/1 response with 0 where missing; ``mask`` is 1.0 where administered.
    """
    p, dp, d2p = prob_derivatives(theta, items)
    p = np.clip(p, EPS, 1.0 - EPS)
    r = mask * dp / (p * (1.0 - p))
    score = ((correct - p) * r).sum(axis=-1)
    info = (dp * r).sum(axis=-1)
    warm_j = (d2p * r).sum(axis=-1)
    return score, info, warm_j


def _grid_terms(
    x: FloatArray, items: ItemParams, grid: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """:func:`_score_terms` at every grid point, shape ``(n, G)``, as matrix products."""
    correct, _, administered = _split(x)
    mask = administered.astype(np.float64)
    p, dp, d2p = prob_derivatives(grid, items)
    p = np.clip(p, EPS, 1.0 - EPS)
    pq = p * (1.0 - p)
    r = dp / pq
    score: FloatArray = correct @ r.T - mask @ (p * r).T
    info: FloatArray = mask @ (dp * r).T
    warm_j: FloatArray = mask @ (d2p * r).T
    return score, info, warm_j


def prior_term(
    theta: FloatArray, info: FloatArray, warm_j: FloatArray, method: Method, quadrature: Quadrature
) -> FloatArray:
    """The :math:`r_0(\\theta)` term of the estimating equation (:func:`modal`)."""
    if method == "ml":
        return np.zeros_like(theta)
    if method == "map":
        return -(theta - quadrature.prior_mean) / quadrature.prior_sd**2
    if method == "wle":
        with np.errstate(divide="ignore", invalid="ignore"):
            out: FloatArray = np.where(info > 0, warm_j / (2.0 * info), 0.0)
        return out
    raise ValueError(f"r0 is defined for map, ml and wle; got {method!r}")


def modal(
    responses: ArrayLike,
    items: ItemParams,
    method: Method = "map",
    quadrature: Quadrature = MIRT,
    grid_points: int = 241,
    tol: float = 1e-10,
) -> ThetaEstimates:
    r"""MAP, ML or WLE ability: the root of the estimating equation :math:`g(\theta) = 0` in ``[-lim, lim]``.

    .. math::
        g(\theta) = \sum_j (x_j - P_j) \frac{P_j'}{P_j(1 - P_j)} + r_0(\theta),
        \qquad r_0 = \begin{cases}
            0 & \text{ML} \\
            -(\theta - \mu)/\sigma^2 & \text{MAP, } N(\mu, \sigma^2) \text{ prior} \\
            J(\theta) / (2 I(\theta)) & \text{WLE, } J = \sum_j P_j' P_j'' / (P_j Q_j)
        \end{cases}

    The estimating function is evaluated on a fine grid; among its downward
    sign changes the one with the largest objective (log-likelihood, plus the
    log prior for MAP, plus :math:`\tfrac12\log I` for WLE) is kept and refined
    by the Illinois method (regula falsi) to ``tol``. Standard errors:

    .. math::
        SE_{ML} = SE_{WLE} = 1/\sqrt{I(\hat\theta)}, \qquad
        SE_{MAP} = 1/\sqrt{I(\hat\theta) + 1/\sigma^2}

    (expected Fisher / posterior information).

    Parameters
    ----------
    responses : array_like
        Shape ``(n, J)``: 1, 0 or NaN.
    items : ItemParams
        The items.
    method : {"map", "ml", "wle"}
        Estimator.
    quadrature : Quadrature
        Prior (MAP) and search range ``[-lim, lim]``.

    References
    ----------
    Baker & Kim (2004), ch. 7; Warm (1989), eq. 8; Snijders (2001), section 3 (same :math:`r_0`
    notation).
    """
    if method not in ("map", "ml", "wle"):
        raise ValueError(f"method must be map, ml or wle; got {method!r}")
    x = as_response_matrix(responses, len(items))
    grid = np.linspace(-quadrature.lim, quadrature.lim, grid_points)
    score, info_grid, warm_grid = _grid_terms(x, items, grid)
    g = score + prior_term(np.broadcast_to(grid, score.shape), info_grid, warm_grid, method, quadrature)
    obj = grid_log_likelihood(x, items, grid)
    if method == "map":
        obj = obj - 0.5 * ((grid - quadrature.prior_mean) / quadrature.prior_sd) ** 2
    elif method == "wle":
        obj = obj + 0.5 * np.log(np.maximum(info_grid, 1e-300))
    down = (g[:, :-1] > 0) & (g[:, 1:] <= 0)
    cand = np.where(down, np.maximum(obj[:, :-1], obj[:, 1:]), -np.inf)
    has_root = down.any(axis=1)
    k = cand.argmax(axis=1)
    rows = np.arange(x.shape[0])
    correct, wrong, administered = _split(x)
    mask = administered.astype(np.float64)

    def g_at(t: FloatArray) -> tuple[FloatArray, FloatArray]:
        score_t, info_t, warm_t = _score_terms(t, correct, mask, items)
        return score_t + prior_term(t, info_t, warm_t, method, quadrature), info_t

    theta = illinois(g_at, grid[k], grid[k + 1], g[rows, k], g[rows, k + 1], tol)
    # No downward crossing: g keeps one sign, the solution is on a bound.
    theta = np.where(has_root, theta, np.where(g[:, 0] > 0, quadrature.lim, -quadrature.lim))
    _, info = g_at(theta)
    extra = 1.0 / quadrature.prior_sd**2 if method == "map" else 0.0
    with np.errstate(divide="ignore"):
        se = 1.0 / np.sqrt(info + extra)
    n_items = administered.sum(axis=1)
    if method == "ml":
        all_right = (n_items > 0) & (wrong.sum(axis=1) == 0)
        all_wrong = (n_items > 0) & (correct.sum(axis=1) == 0)
        theta = np.where(all_right, np.inf, np.where(all_wrong, -np.inf, theta))
        se = np.where(all_right | all_wrong, np.nan, se)
    empty = n_items == 0
    if method == "map":
        theta = np.where(empty, quadrature.prior_mean, theta)
        se = np.where(empty, quadrature.prior_sd, se)
    else:
        theta = np.where(empty, np.nan, theta)
        se = np.where(empty, np.nan, se)
    return _result(x, theta, se, method, quadrature)


def estimate_theta(
    responses: ArrayLike, items: ItemParams, method: Method = "eap", quadrature: Quadrature | str = MIRT
) -> ThetaEstimates:
    """Estimate θ and its SE with ``method`` (``eap``, ``map``, ``ml``, ``wle``).

    ``quadrature`` may be a :class:`Quadrature` or a preset name
    (``"mirt"``, ``"inep"``). See :func:`eap` and :func:`modal`.
    """
    quad = PRESETS[quadrature] if isinstance(quadrature, str) else quadrature
    if method == "eap":
        return eap(responses, items, quad)
    return modal(responses, items, method, quad)
