r"""Many comparisons at once: adjusted p-values, the detectable difference, rank groups.

A table of :math:`m` models has :math:`m(m-1)/2` pairs per strategy, and a study several
strategies; at :math:`\alpha = 0.05` some pair "differs" by chance alone.  The p-values
of one table are adjusted together:

* **Holm** (1979), controlling the family-wise error rate: with the p-values sorted,
  :math:`\tilde p_{(k)} = \max_{j \le k} \min\{1, (m-j+1)\,p_{(j)}\}`;
* **Benjamini–Hochberg** (1995), controlling the false discovery rate:
  :math:`\tilde p_{(k)} = \min_{j \ge k} \min\{1, m\,p_{(j)}/j\}`.

statsmodels' ``multipletests`` (``holm``, ``fdr_bh``) gives the same values (tested).

The **minimum detectable difference** at power :math:`1-\beta` for a two-sided test at
:math:`\alpha` with the standard error the pair actually has is
:math:`(z_{1-\alpha/2} + z_{1-\beta})\,\widehat{SE}(\bar d)` (the normal approximation;
Miller 2024, §5): a true difference smaller than this is likely to go unseen with this
many questions.

**Rank groups**: the best model (highest mean) opens group 1; every model whose adjusted
p-value against it is at least :math:`\alpha` (it cannot be told apart from the best)
joins group 1.  The best of the models left opens group 2, and so on.  A table shows the
groups instead of bolding one winner.

References
----------
.. [1] S. Holm, "A simple sequentially rejective multiple test procedure", Scandinavian
   Journal of Statistics 6(2), 65–70, 1979.
.. [2] Y. Benjamini and Y. Hochberg, "Controlling the false discovery rate", JRSS B
   57(1), 289–300, 1995.
.. [3] E. Miller, "Adding Error Bars to Evals", arXiv:2411.00640, 2024.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

__all__ = ["adjust_pvalues", "benjamini_hochberg", "holm", "minimum_detectable_difference", "rank_groups"]


def holm(pvalues: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Holm's step-down adjusted p-values (same order as given).

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03]).round(3).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(pvalues, dtype=float)
    m = p.size
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = stepped
    return out


def benjamini_hochberg(pvalues: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Benjamini–Hochberg adjusted p-values (q-values; same order as given).

    Examples
    --------
    >>> benjamini_hochberg([0.01, 0.04, 0.03]).round(3).tolist()
    [0.03, 0.04, 0.04]
    """
    p = np.asarray(pvalues, dtype=float)
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = m * p[order] / np.arange(1, m + 1)
    stepped = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    out = np.empty(m)
    out[order] = stepped
    return out


ADJUSTMENTS: dict[str, Callable[[npt.ArrayLike], npt.NDArray[np.float64]]] = {
    "holm": holm,
    "bh": benjamini_hochberg,
}


def adjust_pvalues(pvalues: npt.ArrayLike, method: str) -> npt.NDArray[np.float64]:
    """``holm`` or ``bh`` adjusted p-values; NaN p-values stay NaN and are not counted."""
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.size, math.nan)
    ok = ~np.isnan(p)
    if ok.any():
        out[ok] = ADJUSTMENTS[method](p[ok])
    return out


def minimum_detectable_difference(se: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """Smallest true difference found with probability ``power`` by a two-sided test at ``alpha``.

    Examples
    --------
    >>> round(minimum_detectable_difference(0.02), 4)
    0.056
    """
    z = NormalDist()
    return (z.inv_cdf(1 - alpha / 2) + z.inv_cdf(power)) * se


def rank_groups(
    means: Mapping[str, float], adjusted: Mapping[tuple[str, str], float], alpha: float = 0.05
) -> dict[str, int]:
    """Group number of each model: 1 for the best and those it cannot be told apart from.

    Parameters
    ----------
    means
        Each model's mean score.
    adjusted
        Adjusted p-value of each pair (either order of the two names).
    alpha
        A pair with adjusted p below ``alpha`` differs.

    Examples
    --------
    >>> rank_groups({"a": 0.8, "b": 0.78, "c": 0.5}, {("a", "b"): 0.6, ("a", "c"): 0.001, ("b", "c"): 0.01})
    {'a': 1, 'b': 1, 'c': 2}
    """

    def p(x: str, y: str) -> float:
        value = adjusted.get((x, y), adjusted.get((y, x), math.nan))
        return 1.0 if math.isnan(value) else value

    left: Sequence[str] = sorted(means, key=lambda k: (-means[k], k))
    groups: dict[str, int] = {}
    group = 0
    while left:
        group += 1
        best = left[0]
        members = [m for m in left if m == best or p(best, m) >= alpha]
        for m in members:
            groups[m] = group
        left = [m for m in left if m not in groups]
    return groups
