r"""Many comparisons at once: adjusted p-values and the detectable difference.

A table of :math:`m` models has :math:`m(m-1)/2` pairs per strategy, and a study several
strategies; at :math:`\alpha = 0.05` some pair "differs" by chance alone.  The p-values
of one table are adjusted together:

* **Holm** (1979), controlling the family-wise error rate: with the p-values sorted,
  :math:`\tilde p_{(k)} = \max_{j \le k} \min\{1, (m-j+1)\,p_{(j)}\}`;
* **Benjamini–Hochberg** (1995), controlling the false discovery rate:
  :math:`\tilde p_{(k)} = \min_{j \ge k} \min\{1, m\,p_{(j)}/j\}`.

statsmodels' ``multipletests`` (``holm``, ``fdr_bh``) gives the same values (tested).

The adjusted decisions become letters in :mod:`enade_bench.metrics.letters` (two models
share a letter exactly when their pair is not significant).

References
----------
.. [1] S. Holm, "A simple sequentially rejective multiple test procedure", Scandinavian
   Journal of Statistics 6(2), 65–70, 1979.
.. [2] Y. Benjamini and Y. Hochberg, "Controlling the false discovery rate", JRSS B
   57(1), 289–300, 1995.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

__all__ = ["adjust_pvalues", "benjamini_hochberg", "bonferroni", "holm"]


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


def bonferroni(pvalues: npt.ArrayLike) -> npt.NDArray[np.float64]:
    r"""Bonferroni adjusted p-values :math:`\min\{1, m\,p_i\}` (Dunn 1961).

    Examples
    --------
    >>> bonferroni([0.01, 0.04, 0.03]).round(3).tolist()
    [0.03, 0.12, 0.09]
    """
    p = np.asarray(pvalues, dtype=float)
    return np.asarray(np.minimum(1.0, p.size * p), dtype=float)


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
    "bonferroni": bonferroni,
    "bh": benjamini_hochberg,
}


def adjust_pvalues(pvalues: npt.ArrayLike, method: str) -> npt.NDArray[np.float64]:
    """``holm``, ``bonferroni`` or ``bh`` adjusted p-values; NaN p-values stay NaN and are not counted."""
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.size, math.nan)
    ok = ~np.isnan(p)
    if ok.any():
        out[ok] = ADJUSTMENTS[method](p[ok])
    return out
