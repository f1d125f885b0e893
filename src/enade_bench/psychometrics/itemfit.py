"""Item fit: Orlando & Thissen's S-X² and the Lord-Wingersky recursion.

References
----------
Orlando, M., & Thissen, D. (2000). Likelihood-based item-fit indices for
dichotomous item response theory models. *Applied Psychological
Measurement*, 24(1), 50-64.

Kang, T., & Chen, T. T. (2008). Performance of the generalized S-X² item fit
index for polytomous IRT models. *Journal of Educational Measurement*, 45(4),
391-406 (collapsing of sparse score groups).

Lord, F. M., & Wingersky, M. S. (1984). Comparison of IRT true-score and
equipercentile observed-score "equatings". *Applied Psychological
Measurement*, 8(4), 453-461.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats

from enade_bench.psychometrics.estimation import Quadrature
from enade_bench.psychometrics.irt import FloatArray, ItemParams, prob


def summed_score_distribution(p: FloatArray) -> FloatArray:
    r"""Lord-Wingersky recursion: :math:`\Pr(S = k \mid \theta_q)` for each node.

    Parameters
    ----------
    p : ndarray
        Shape ``(Q, J)``: probability of a correct answer per node and item.

    Returns
    -------
    ndarray
        Shape ``(Q, J + 1)``; row ``q`` is the distribution of the number
        correct at :math:`\theta_q`.
    """
    dist = np.ones((p.shape[0], 1))
    for j in range(p.shape[1]):
        nxt = np.zeros((p.shape[0], dist.shape[1] + 1))
        nxt[:, :-1] += dist * (1.0 - p[:, j : j + 1])
        nxt[:, 1:] += dist * p[:, j : j + 1]
        dist = nxt
    return dist


def _collapse(
    counts: FloatArray, observed: FloatArray, expected: FloatArray, mincell: float
) -> list[list[int]]:
    """Merge adjacent score groups until each has ``N·E`` and ``N·(1-E)`` ≥ mincell."""
    groups: list[list[int]] = []
    current: list[int] = []
    for k in range(counts.size):
        if counts[k] == 0:
            continue
        current.append(k)
        n = counts[current].sum()
        e = float(np.dot(counts[current], expected[current]) / n)
        if n * e >= mincell and n * (1 - e) >= mincell:
            groups.append(current)
            current = []
    if current:
        if groups:
            groups[-1].extend(current)
        else:
            groups.append(current)
    return groups


def sx2(
    responses: ArrayLike,
    items: ItemParams,
    n_params: int = 2,
    quadrature: Quadrature | None = None,
    mincell: float = 1.0,
) -> pd.DataFrame:
    r"""Orlando-Thissen S-X² item-fit statistic for each item.

    For summed scores :math:`k = 1, \dots, J-1`, with :math:`N_k` respondents
    scoring :math:`k` and :math:`O_{jk}` the share of them answering item
    :math:`j` correctly, the model-implied share is

    .. math:: E_{jk} = \frac{\int P_j(\theta)\, f^{(-j)}(k-1 \mid \theta)\,\phi(\theta)\,d\theta}
                          {\int f(k \mid \theta)\,\phi(\theta)\,d\theta},

    (:math:`f` from the Lord-Wingersky recursion, :math:`f^{(-j)}` without
    item :math:`j`) and

    .. math:: S\text{-}X^2_j = \sum_k N_k \frac{(O_{jk} - E_{jk})^2}{E_{jk}(1 - E_{jk})}
              \sim \chi^2_{G - m}

    after merging adjacent score groups whose expected counts fall below
    ``mincell`` (``G`` groups left, ``m`` = ``n_params`` parameters per item).

    Only respondents with every item administered enter (the summed score
    needs a common test); fractional responses are rounded (0.5 → 1).

    Parameters
    ----------
    responses : array_like
        Respondents × items.
    items : ItemParams
        Calibrated parameters.
    n_params : int
        Free parameters per item (1, 2 or 3), for the degrees of freedom.
    quadrature : Quadrature, optional
        Latent N(0, 1) nodes (default 61 points on [-6, 6]).
    mincell : float
        Minimum expected count per cell (mirt's default 1).

    Returns
    -------
    DataFrame
        Columns ``sx2``, ``sx2_df``, ``sx2_p`` (NaN when df < 1 or too few
        complete respondents).
    """
    quad = Quadrature(61, 6.0) if quadrature is None else quadrature
    x = np.asarray(responses, dtype=np.float64)
    complete = x[~np.isnan(x).any(axis=1)]
    binary = np.floor(complete + 0.5)
    n_items = len(items)
    out = pd.DataFrame({"sx2": np.nan, "sx2_df": np.nan, "sx2_p": np.nan}, index=range(n_items))
    if binary.shape[0] < 2 or n_items < 3:
        return out
    nodes, weights = quad.nodes(), quad.weights()
    p = prob(nodes, items)
    full = weights @ summed_score_distribution(p)
    scores = binary.sum(axis=1).astype(int)
    counts = np.bincount(scores, minlength=n_items + 1).astype(float)[1:n_items]
    for j in range(n_items):
        rest = summed_score_distribution(np.delete(p, j, axis=1))
        numer = weights @ (p[:, j : j + 1] * rest[:, : n_items - 1])
        expected = numer / full[1:n_items]
        sums = np.bincount(scores, weights=binary[:, j], minlength=n_items + 1)[1:n_items]
        with np.errstate(invalid="ignore", divide="ignore"):
            observed = np.where(counts > 0, sums / counts, 0.0)
        groups = _collapse(counts, observed, expected, mincell)
        stat = 0.0
        for g in groups:
            n = counts[g].sum()
            o = float(np.dot(counts[g], observed[g]) / n)
            e = float(np.dot(counts[g], expected[g]) / n)
            stat += n * (o - e) ** 2 / (e * (1 - e))
        df = len(groups) - n_params
        if df >= 1:
            out.loc[j, ["sx2", "sx2_df", "sx2_p"]] = [stat, df, float(stats.chi2.sf(stat, df))]
    return out
