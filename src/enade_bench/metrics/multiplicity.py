r"""Many comparisons at once: adjusted p-values and the detectable difference.

A table of :math:`m` models has :math:`m(m-1)/2` pairs per strategy, and a study several
strategies; at :math:`\alpha = 0.05` some pair "differs" by chance alone.  The p-values
of one table are adjusted together:

* **Holm** (1979), controlling the family-wise error rate: with the p-values sorted,
  :math:`\tilde p_{(k)} = \max_{j \le k} \min\{1, (m-j+1)\,p_{(j)}\}`
  (:func:`holm`).  The comparisons use it on the :math:`2m` **directional** hypotheses
  :math:`\delta_i \le 0` and :math:`\delta_i \ge 0` (:func:`directional_holm`): a pair is
  then declared different *in the direction of its estimate*, the error rate counted
  includes a wrong direction, and Strassburger & Bretz's (2008) simultaneous statements
  compatible with it exist (:mod:`enade_bench.metrics.simultaneous`).  With two-sided
  p-values :math:`p_i` the one-sided ones are :math:`p_i/2` and :math:`1 - p_i/2`, the
  latter never rejected, so
  :math:`\tilde p_{(k)} = \max_{j \le k} \min\{1, (2m-j+1)\,p_{(j)}/2\}`: Holm's first
  step :math:`m\,p_{(1)}`, the later ones slightly stricter than two-sided Holm;
* **Benjamini–Hochberg** (1995), controlling the false discovery rate:
  :math:`\tilde p_{(k)} = \min_{j \ge k} \min\{1, m\,p_{(j)}/j\}`.

statsmodels' ``multipletests`` (``holm``, ``fdr_bh``; ``holm`` on the :math:`2m` one-sided
p-values for :func:`directional_holm`) gives the same values (tested).

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

__all__ = ["adjust_pvalues", "benjamini_hochberg", "bonferroni", "directional_holm", "holm"]


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


def directional_holm(pvalues: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Holm over the :math:`2m` one-sided hypotheses of :math:`m` two-sided p-values (module docstring).

    The adjusted p is below :math:`\\alpha` exactly when Holm at :math:`\\alpha` rejects the
    pair's one-sided hypothesis on the side of its estimate.

    Examples
    --------
    >>> directional_holm([0.01, 0.04, 0.03]).round(4).tolist()
    [0.03, 0.08, 0.075]
    >>> directional_holm([0.001, 0.02, 0.03, 0.5]).round(4).tolist()
    [0.004, 0.07, 0.09, 1.0]
    """
    p = np.asarray(pvalues, dtype=float)
    return holm(np.concatenate([p / 2, 1 - p / 2]))[: p.size]


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
    "holm": directional_holm,
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
