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

* **Holm** over the :math:`2K` directional hypotheses :math:`\delta_i \le 0`,
  :math:`\delta_i \ge 0` of the :math:`K` comparable pairs
  (:func:`~enade_bench.metrics.multiplicity.directional_holm`; :math:`r` pairs rejected,
  each on the side of its estimate; the other side of a pair is never rejected): the
  :math:`j`-th smallest two-sided p-value is tested at :math:`2\alpha/(2K-j+1)` while the
  steps reject, so :math:`\alpha_i` is that level for a rejected pair and
  :math:`2\alpha/(2K-r)` for the others.  The statements shown are the **simultaneous
  confidence statements compatible with Holm's procedure** (Strassburger & Bretz 2008,
  for Bonferroni-based closed tests; Guilbaud 2008), which hold jointly with
  probability :math:`\ge 1-\alpha` (:func:`shown_statements`).  With :math:`c` the
  one-sided normal (or t) quantile at :math:`\alpha/(2K-r)`, the :math:`2K-r` hypotheses
  not rejected:

  - a rejected pair gets a bound at 0 in the direction of its effect, :math:`\delta_i > 0`
    (or :math:`< 0`), and on the other side the bound of its unrejected opposite
    hypothesis, :math:`\delta_i \le \hat\delta_i + c\,\widehat{SE}_i`; the Bonferroni
    :math:`\alpha/K` interval is shown beside it for the magnitude, labelled so;
  - a pair that is not rejected gets :math:`\hat\delta_i \pm c\,\widehat{SE}_i`, the test's
    own interval at confidence :math:`1 - 2\alpha/(2K-r)`, which holds 0.

  Since at most :math:`K` of the :math:`2K` hypotheses can be rejected, the paper's
  "all rejected" case (:math:`\max\{0, \hat\delta_i - c_{\alpha/K}\}`) cannot arise.
  Two-sided Holm with two-sided intervals at its step levels, or at
  :math:`\alpha/(K-r)` beside a sign for the rejected pairs, is *not* simultaneous: a pair
  with a real difference that is not rejected has a small estimate, and its two-sided
  interval misses the difference above (joint coverage 0.80 with ten pairs four standard
  errors apart; 0.85–0.93 in the step-level display of issue 43).  ``docs/holm_coverage.py``
  checks the statements above.
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

__all__ = [
    "ABOVE",
    "BELOW",
    "ENCODING",
    "INTERVAL",
    "INTERVAL_NAMES",
    "SIMULTANEOUS",
    "Statement",
    "decision_levels",
    "holds_zero",
    "shown_statements",
]

#: How each adjustment's statements read in tables and notes.
INTERVAL_NAMES = {
    "holm": "Holm simultaneous (directional Holm, Strassburger & Bretz 2008): a rejected pair '> 0' or '< 0' "
    "(up to its 2alpha/(2K-r) limit), the others at 2alpha/(2K-r)",
    "bonferroni": "Bonferroni simultaneous (alpha/K)",
    "bh": "false-coverage-rate adjusted (R alpha/K; Benjamini & Yekutieli 2005), not simultaneous",
}
#: The adjustments whose shown statements hold jointly at ``1 - alpha``.
SIMULTANEOUS = frozenset({"holm", "bonferroni"})

#: ``Statement.kind``: an interval, or a bound at 0 above or below (with its other limit).
INTERVAL, ABOVE, BELOW = "interval", "> 0", "< 0"
#: How every statement-bearing CSV (``pairs.csv``, ``theta_pairs.csv``, the ENEM study's) writes a
#: statement; docs/comparisons.md, "Reading a statement in the CSVs".
ENCODING = (
    "statement: 'interval', '> 0' or '< 0'. interval: the closed [ci_low, ci_high]. '> 0': the difference is "
    "above 0, ci_low = 0 exactly (open: 0 itself is excluded) and ci_high its other limit; '< 0': ci_high = 0 "
    "(open), ci_low its other limit. ci_level: the confidence of the two-sided interval the limits come from, "
    "for a bound too (Holm's statements hold jointly at 1 - alpha); NaN only without a statement. Read "
    "'holds 0' as holds_zero(statement, ci_low, ci_high), or the column 'different', never as ci_low > 0."
)


@dataclass(frozen=True)
class Statement:
    r"""What a pair's row says about its difference :math:`\delta_i`.

    Attributes
    ----------
    kind
        ``interval``, or ``> 0``/``< 0``: a bound at 0 in the effect's direction (Holm,
        rejected), open at 0.
    low, high
        The statement's limits: ``(0, high]`` for ``> 0``, ``[low, 0)`` for ``< 0``.
    confidence
        The confidence level of the two-sided interval the limits come from
        (``1 - 2 alpha/(2K - r)`` for Holm; the statements hold jointly at ``1 - alpha``).
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

    A bound (``> 0``, ``< 0``) excludes it; an interval holds it when ``low <= 0 <= high``.
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
    >>> decision_levels([0.001, 0.015, 0.3], 0.05, "holm").round(4).tolist()  # 2 alpha / (2K - j + 1)
    [0.0167, 0.02, 0.025]
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
    elif method == "holm":  # directional: the 2K one-sided hypotheses, p_i / 2 at alpha / (2K - j + 1)
        order = ok[np.argsort(p[ok], kind="stable")]
        rejected = 0
        for step, index in enumerate(order):
            level = 2 * alpha / (2 * k - step)
            if p[index] < level and rejected == step:
                out[index] = level
                rejected += 1
            else:
                out[index] = 2 * alpha / (2 * k - rejected)
    else:
        raise ValueError(f"unknown adjustment {method!r}")
    return out


def shown_statements(
    pvalues: npt.ArrayLike,
    estimates: npt.ArrayLike,
    alpha: float,
    method: str,
    interval_at: Callable[[int, float], tuple[float, float]],
) -> list[Statement | None]:
    """Each pair's shown statement under ``method`` (``holm``, ``bonferroni`` or ``bh``; module docstring).

    Holm's are Strassburger & Bretz's (2008) simultaneous statements compatible with
    (directional) Holm; Bonferroni gives every pair its :math:`\\alpha/K` interval,
    Benjamini–Hochberg its :math:`R\\alpha/K` one.

    Parameters
    ----------
    pvalues, estimates
        Each pair's raw two-sided p-value (NaN: outside the family, ``None`` returned) and estimate.
    alpha
        The family's level.
    method
        ``holm``, ``bonferroni`` or ``bh``.
    interval_at
        ``interval_at(i, confidence)``: pair ``i``'s two-sided interval by its test's own
        procedure (its ``1 - a`` interval excludes 0 exactly when ``p_i < a``).

    Returns
    -------
    list
        One :class:`Statement` per pair (module docstring); Holm's hold jointly with
        probability at least ``1 - alpha``.

    Examples
    --------
    >>> from scipy import stats
    >>> est, se = [0.30, 0.12, 0.01], 0.04
    >>> p = [2 * stats.norm.sf(abs(e) / se) for e in est]
    >>> def at(i, conf):
    ...     h = stats.norm.ppf(1 - (1 - conf) / 2) * se
    ...     return est[i] - h, est[i] + h
    >>> shown = shown_statements(p, est, 0.05, "holm", at)
    >>> [s.kind for s in shown]
    ['> 0', '> 0', 'interval']
    >>> round(shown[2].confidence, 4), shown[0].low  # 1 - 2 alpha / (2K - r), K = 3, r = 2
    (0.975, 0.0)
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
        level = 2 * alpha / (2 * k - r) if method == "holm" else float(decisions[i])
        low, high = interval_at(i, 1 - level)
        kind = INTERVAL
        if method == "holm" and different:  # a bound at 0 on the estimate's side, the other limit kept
            kind = ABOVE if est[i] > 0 else BELOW
            low, high = (0.0, high) if kind == ABOVE else (low, 0.0)
        elif not different:  # a tie within rounding at the level: the interval reaches 0
            low, high = min(low, 0.0), max(high, 0.0)
        out.append(Statement(kind, low, high, 1 - level, float(decisions[i]), different))
    return out
