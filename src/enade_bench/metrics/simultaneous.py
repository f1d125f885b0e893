r"""Each pair's interval at the level its adjusted decision used: one inference per pair.

After a multiplicity adjustment a pair is declared different when its adjusted p-value
is below :math:`\alpha`.  Showing the *unadjusted* :math:`1-\alpha` interval beside that
decision lets the two disagree (an interval that excludes 0 for a pair that shares a
letter).  Here each pair gets the level :math:`\alpha_i` such that

.. math::

    \tilde p_i < \alpha \iff p_i < \alpha_i ,

and its interval is computed at :math:`1-\alpha_i` by the pair's own test procedure
(whose :math:`1-\alpha_i` interval excludes 0 exactly when :math:`p_i < \alpha_i`,
:mod:`enade_bench.metrics.paired`).  The interval then excludes 0 exactly when the pair
does not share a letter.

* **Holm** (step-down, :math:`K` comparable pairs of the family, :math:`r` rejected): the
  :math:`j`-th smallest p-value is tested at :math:`\alpha/(K-j+1)` while the steps
  reject; the first pair that is not rejected and every later one are at
  :math:`\alpha/(K-r)`.  For the pairs that are not rejected these are the
  **simultaneous** intervals compatible with Holm's procedure (Strassburger & Bretz 2008,
  Guilbaud 2008: the Bonferroni intervals over the :math:`K-r` hypotheses left).  For a
  rejected pair the simultaneous compatible statement is its sign only (a limit at 0);
  the interval shown is the one at the level Holm rejected it at, :math:`\alpha/(K-j+1)`.
  When all :math:`K` are rejected every pair is at its step's level.
* **Bonferroni** (:math:`\alpha_i = \alpha/K`): simultaneous :math:`1-\alpha` intervals for
  the whole family (Dunn 1961); what the rank sets use (:mod:`enade_bench.metrics.ranks`).
* **Benjamini–Hochberg** with :math:`R` discoveries: every pair at
  :math:`R\alpha/K` (:math:`\alpha/K` when :math:`R = 0`), the false-coverage-rate
  intervals of Benjamini & Yekutieli (2005): the selected pairs' intervals miss their
  difference in at most a share :math:`\alpha` of them on average.

Why: a reader checks "the interval excludes 0" and "the letters differ" against each
other; both must be one inference.  The level of each pair is written beside its interval
(``ci_level`` in ``pairs.csv``) and the unadjusted interval stays available under its own
name.

References
----------
.. [1] K. Strassburger and F. Bretz, "Compatible simultaneous lower confidence bounds for
   the Holm procedure and other Bonferroni-based closed tests", Statistics in Medicine
   27(24), 4914–4927, 2008.
.. [2] G. Guilbaud, "Simultaneous confidence regions corresponding to Holm's step-down
   procedure and other closed-testing procedures", Biometrical Journal 50(5), 678–692, 2008.
.. [3] O. J. Dunn, "Multiple comparisons among means", JASA 56(293), 52–64, 1961.
.. [4] Y. Benjamini and D. Yekutieli, "False discovery rate-adjusted multiple confidence
   intervals for selected parameters", JASA 100(469), 71–81, 2005.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from enade_bench.metrics.multiplicity import adjust_pvalues

__all__ = ["INTERVAL_NAMES", "decision_levels", "family_mdd"]

#: How each adjustment's intervals read in tables and notes.
INTERVAL_NAMES = {
    "holm": "Holm-compatible (each pair at the level Holm tested it: alpha/(K-j+1) while rejecting, "
    "alpha/(K-r) after; Strassburger & Bretz 2008)",
    "bonferroni": "Bonferroni simultaneous (alpha/K)",
    "bh": "false-coverage-rate adjusted (R alpha/K; Benjamini & Yekutieli 2005)",
}


def decision_levels(pvalues: npt.ArrayLike, alpha: float, method: str) -> npt.NDArray[np.float64]:
    """Each p-value's level :math:`\\alpha_i`: ``adjusted p < alpha`` exactly when ``p < alpha_i``.

    Parameters
    ----------
    pvalues
        The raw p-values of one family (NaN: not comparable, outside the family, level NaN).
    alpha
        The family's level.
    method
        ``holm``, ``bonferroni`` or ``bh``.

    Returns
    -------
    ndarray
        One level per p-value, in the order given.

    Examples
    --------
    >>> decision_levels([0.001, 0.02, 0.3], 0.05, "holm").round(4).tolist()
    [0.0167, 0.025, 0.05]
    >>> decision_levels([0.001, 0.02, 0.3], 0.05, "bonferroni").round(4).tolist()
    [0.0167, 0.0167, 0.0167]
    """
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.size, math.nan)
    ok = np.flatnonzero(~np.isnan(p))
    k = ok.size
    if k == 0:
        return out
    if method == "bonferroni":
        out[ok] = alpha / k
    elif method == "bh":
        discoveries = int(np.sum(adjust_pvalues(p[ok], "bh") < alpha))
        out[ok] = max(discoveries, 1) * alpha / k
    elif method == "holm":
        order = ok[np.argsort(p[ok], kind="stable")]
        rejected = 0
        for step, index in enumerate(order):
            level = alpha / (k - step)
            if p[index] < level and rejected == step:
                out[index] = level
                rejected += 1
            else:
                out[index] = alpha / (k - rejected)
    else:
        raise ValueError(f"unknown adjustment {method!r}")
    return out


def family_mdd(se: float, level: float, power: float = 0.8) -> float:
    r"""Minimum detectable difference of a pair tested at ``level`` (two-sided) with ``power``.

    :math:`(z_{1-\text{level}/2} + z_{\text{power}})\,\widehat{SE}`; with ``level`` the
    family's Bonferroni level :math:`\alpha/K` it is the difference the pair's letters can
    be expected to show (Holm's first step tests at :math:`\alpha/K` too).

    Examples
    --------
    >>> round(family_mdd(0.02, 0.05 / 10), 4)
    0.073
    """
    z = NormalDist()
    return (z.inv_cdf(1 - level / 2) + z.inv_cdf(power)) * se
