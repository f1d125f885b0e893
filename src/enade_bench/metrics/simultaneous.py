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
  reject, so :math:`\alpha_i` is that level for a rejected pair and :math:`\alpha/(K-r)`
  for the others.  The statements shown are the **simultaneous confidence statements
  compatible with Holm's procedure** (Strassburger & Bretz 2008, §3; Guilbaud 2008),
  which hold jointly with probability :math:`\ge 1-\alpha` (:func:`holm_statements`):

  - when :math:`0 < r < K`, a rejected pair gets a bound at 0 in the direction of its
    effect, :math:`\delta_i > 0` or :math:`\delta_i < 0`, and nothing more (the Bonferroni
    :math:`\alpha/K` interval is shown beside it for the magnitude, labelled so: it is
    not part of Holm's statement);
  - a pair that is not rejected gets its interval at :math:`\alpha/(K-r)` (Bonferroni
    over the :math:`K-r` hypotheses left), which holds 0;
  - when all :math:`K` are rejected, every pair gets its interval at :math:`\alpha/K`
    cut at 0 on the side of its effect (Strassburger & Bretz's
    :math:`L_i = \max\{0, \hat\delta_i - c_{\alpha/K}\}`), which excludes 0.

  Holm's own step levels :math:`\alpha/(K-j+1)` give no simultaneous intervals for the
  rejected pairs: shown as intervals they covered jointly in only 85–93 % of simulated
  exams with several rejections (issue 43); ``bench/holm_coverage.py`` checks the
  statements above.
* **Bonferroni** (:math:`\alpha_i = \alpha/K`): simultaneous :math:`1-\alpha` intervals for
  the whole family (Dunn 1961); what the rank sets use (:mod:`enade_bench.metrics.ranks`).
* **Benjamini–Hochberg** with :math:`R` discoveries: every pair at
  :math:`R\alpha/K` (:math:`\alpha/K` when :math:`R = 0`), the false-coverage-rate
  intervals of Benjamini & Yekutieli (2005): the selected pairs' intervals miss their
  difference in at most a share :math:`\alpha` of them on average.

Why: a reader checks "the interval excludes 0" and "the letters differ" against each
other; both must be one inference.  ``alpha_i`` (the decision level) and the shown
interval's confidence level (``ci_level``) are written beside it in ``pairs.csv``, and
the unadjusted interval stays available under its own name.

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
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from enade_bench.metrics.multiplicity import adjust_pvalues

__all__ = ["ABOVE", "BELOW", "CUT", "INTERVAL", "INTERVAL_NAMES", "SIMULTANEOUS", "Statement", "decision_levels",
           "holds_zero", "holm_statements", "shown_statements"]  # fmt: skip

#: How each adjustment's statements read in tables and notes.
INTERVAL_NAMES = {
    "holm": "Holm simultaneous (Strassburger & Bretz 2008): a rejected pair '> 0' or '< 0', the others "
    "at alpha/(K-r); all rejected: alpha/K cut at 0",
    "bonferroni": "Bonferroni simultaneous (alpha/K)",
    "bh": "false-coverage-rate adjusted (R alpha/K; Benjamini & Yekutieli 2005), not simultaneous",
}
#: The adjustments whose shown statements hold jointly at ``1 - alpha``.
SIMULTANEOUS = frozenset({"holm", "bonferroni"})

#: ``Statement.kind``: an interval; a bound at 0 above or below; an interval cut at 0.
INTERVAL, ABOVE, BELOW, CUT = "interval", "> 0", "< 0", "interval cut at 0"


@dataclass(frozen=True)
class Statement:
    r"""What a pair's row says about its difference :math:`\delta_i`.

    Attributes
    ----------
    kind
        ``interval``, ``> 0``, ``< 0`` (a bound at 0 in the effect's direction) or
        ``interval cut at 0`` (Holm with every pair rejected).
    low, high
        The statement as limits: ``(0, inf)`` for ``> 0``, ``(-inf, 0)`` for ``< 0``.
    confidence
        The confidence level of the interval ``low``–``high`` on its own (``1 - level``);
        NaN for a bound, which holds only jointly.
    alpha_i
        The decision level: the pair is rejected exactly when ``p < alpha_i``.
    different
        The decision (the statement excludes 0 exactly then).
    """

    kind: str
    low: float
    high: float
    confidence: float
    alpha_i: float
    different: bool

    @property
    def holds_zero(self) -> bool:
        """The statement allows :math:`\\delta_i = 0`: exactly when the pair is not ``different``."""
        return holds_zero(self.kind, self.low, self.high)


def holds_zero(kind: str, low: float, high: float) -> bool:
    """Whether a statement (``kind``, ``low``, ``high``; a row of ``pairs.csv``) allows a difference of 0.

    A bound (``> 0``, ``< 0``) and an interval cut at 0 exclude it; an interval holds it when
    ``low <= 0 <= high``.
    """
    return kind == INTERVAL and low <= 0 <= high


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


def holm_statements(
    pvalues: npt.ArrayLike, estimates: npt.ArrayLike, alpha: float,
    interval_at: Callable[[int, float], tuple[float, float]],
) -> list[Statement | None]:  # fmt: skip
    """Strassburger & Bretz's (2008) simultaneous statements compatible with Holm's procedure.

    Parameters
    ----------
    pvalues, estimates
        Each pair's raw p-value (NaN: outside the family, ``None`` returned) and estimate.
    alpha
        The family's level.
    interval_at
        ``interval_at(i, confidence)``: pair ``i``'s two-sided interval by its test's own
        procedure (its ``1 - a`` interval excludes 0 exactly when ``p_i < a``).

    Returns
    -------
    list
        One :class:`Statement` per pair (module docstring); jointly they hold with
        probability at least ``1 - alpha``.

    Examples
    --------
    >>> from scipy import stats
    >>> est, se = [0.30, 0.12, 0.01], 0.04
    >>> p = [2 * stats.norm.sf(abs(e) / se) for e in est]
    >>> def at(i, conf):
    ...     h = stats.norm.ppf(1 - (1 - conf) / 2) * se
    ...     return est[i] - h, est[i] + h
    >>> [s.kind for s in holm_statements(p, est, 0.05, at)]
    ['> 0', '> 0', 'interval']
    >>> round(holm_statements(p, est, 0.05, at)[2].confidence, 4)  # alpha / (K - r) = 0.05
    0.95
    """
    return shown_statements(pvalues, estimates, alpha, "holm", interval_at)


def shown_statements(
    pvalues: npt.ArrayLike, estimates: npt.ArrayLike, alpha: float, method: str,
    interval_at: Callable[[int, float], tuple[float, float]],
) -> list[Statement | None]:  # fmt: skip
    """Each pair's shown statement under ``method`` (``holm``, ``bonferroni`` or ``bh``; module docstring).

    Parameters and returns as :func:`holm_statements`; Bonferroni gives every pair its
    :math:`\alpha/K` interval, Benjamini–Hochberg its :math:`R\alpha/K` one.
    """
    p = np.asarray(pvalues, dtype=float)
    est = np.asarray(estimates, dtype=float)
    decisions = decision_levels(p, alpha, method)
    ok = ~np.isnan(p)
    k = int(ok.sum())
    rejected = ok & (p < decisions)
    r = int(rejected.sum())
    out: list[Statement | None] = []
    for i in range(p.size):
        if not ok[i]:
            out.append(None)
            continue
        different = bool(rejected[i])
        if method == "holm" and different and r < k:
            kind = ABOVE if est[i] > 0 else BELOW
            low, high = (0.0, math.inf) if kind == ABOVE else (-math.inf, 0.0)
            out.append(Statement(kind, low, high, math.nan, float(decisions[i]), True))
            continue
        if method == "holm":
            level = alpha / k if r == k else alpha / (k - r)
        else:
            level = float(decisions[i])
        low, high = interval_at(i, 1 - level)
        kind = INTERVAL
        if method == "holm" and r == k:  # all rejected: the alpha/K interval cut at 0 (S&B's max{0, L})
            kind = CUT
            low, high = (max(low, 0.0), high) if est[i] > 0 else (low, min(high, 0.0))
        elif not different:  # a tie within rounding at the level: the interval reaches 0
            low, high = min(low, 0.0), max(high, 0.0)
        out.append(Statement(kind, low, high, 1 - level, float(decisions[i]), different))
    return out
