r"""Two models on the same questions: the paired difference, its interval and its test.

The unit is the question.  For question :math:`i` let :math:`a_i, b_i` be the two
models' scores (mean correctness over the question's shuffles or samples) and
:math:`d_i = a_i - b_i`.  The difference of accuracies is :math:`\bar d`; pairing
removes the variance the two models share through the questions' difficulty
(Miller 2024, §4).  Its standard error is cluster-robust over the stimulus clusters
(:func:`~enade_bench.metrics.clustered.cluster_se`), and

* with **one binary record per question and no clusters** the test is McNemar's exact
  test: under :math:`H_0` the discordant questions split as
  :math:`\mathrm{Binomial}(n_{10}+n_{01}, 1/2)`,
  :math:`p = \min\{1, 2\,F(\min(n_{10}, n_{01}))\}` (McNemar 1947; statsmodels'
  ``mcnemar(exact=True)`` gives the same p-value);
* otherwise the **clustered paired t test**: :math:`t = \bar d / \widehat{SE}(\bar d)`
  on :math:`G-1` degrees of freedom (Cameron & Miller 2015, §VI: with few clusters the
  normal reference rejects too often).  Its error rate is checked by simulation in the
  tests (questions of varying difficulty, 30 shuffles each, clusters of 2–4).

**One inference per pair**: the interval agrees with the test, so that :math:`p < \alpha`
exactly when the :math:`1-\alpha` interval excludes 0 (at any level: the comparison
computes each pair's interval at the level its adjusted decision used,
:mod:`enade_bench.metrics.simultaneous`).

* With McNemar's test the interval is **Tango's score interval**
  (:func:`~enade_bench.metrics.paired_score.tango_interval`; Tango 1998, recommended by
  Fagerland, Lydersen & Laake 2014), which is not capped at the share of discordant
  questions.  Tango's interval inverts the *asymptotic* score test, while the p-value is
  the exact test's, so where the two verdicts differ the interval follows the exact test
  (:func:`mcnemar_score_interval`): Tango's interval excludes 0 but the exact test does
  not reject (the exact test is the more conservative, e.g. 5 of 5 discordant questions
  for A, p = 0.0625) → the interval is widened to reach 0 (a wider interval keeps its
  coverage); Tango's interval holds 0 but the exact test rejects (only at levels below
  3e-4 for up to 300 discordant questions, e.g. 13 to 0 at 2.5e-4) → the *conditional
  exact* interval (Breslow & Day 1980, §4.4; :func:`mcnemar_interval`), the inversion of
  the exact test itself.
* With the clustered paired t test it is :math:`\bar d \pm t_{G-1,\,1-\alpha/2}\,\widehat{SE}`.

A pair with **no discordant question** (every difference 0) has no interval (NaN) and
:math:`p = 1`, said in ``test``; a pair of **fewer than two questions** is not
comparable (no interval, no p).

References
----------
.. [1] Q. McNemar, "Note on the sampling error of the difference between correlated
   proportions or percentages", Psychometrika 12(2), 153–157, 1947.
.. [2] E. Miller, "Adding Error Bars to Evals", arXiv:2411.00640, 2024.
.. [3] A. C. Cameron and D. L. Miller, "A Practitioner's Guide to Cluster-Robust
   Inference", Journal of Human Resources 50(2), 317–372, 2015.
.. [4] C. J. Clopper and E. S. Pearson, "The use of confidence or fiducial limits
   illustrated in the case of the binomial", Biometrika 26(4), 404–413, 1934.
.. [5] N. E. Breslow and N. E. Day, Statistical Methods in Cancer Research I, IARC, 1980.
.. [6] M. W. Fagerland, S. Lydersen and P. Laake, "The McNemar test for binary
   matched-pairs data: mid-p and asymptotic are better than exact conditional", BMC
   Medical Research Methodology 13:91, 2013.
.. [7] T. Tango, "Equivalence test and confidence interval for the difference in
   proportions for the paired-sample design", Statistics in Medicine 17(8), 891–908, 1998.
.. [8] M. W. Fagerland, S. Lydersen and P. Laake, "Recommended tests and confidence
   intervals for paired binomial proportions", Statistics in Medicine 33(16), 2850–2875, 2014.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from enade_bench.metrics.clustered import cluster_se, t_quantile
from enade_bench.metrics.paired_score import tango_interval

__all__ = [
    "MCNEMAR",
    "NOT_COMPARABLE",
    "NO_DISCORDANT",
    "PAIRED_T",
    "PairedDifference",
    "mcnemar_exact",
    "mcnemar_interval",
    "mcnemar_score_interval",
    "pair_interval",
    "paired_difference",
]

MCNEMAR = "exact McNemar"
PAIRED_T = "clustered paired t"
NO_DISCORDANT = "no discordant questions"
NOT_COMPARABLE = "not comparable"


@dataclass(frozen=True)
class PairedDifference:
    """Model A minus model B on the questions both answered.

    Attributes
    ----------
    n_questions, n_clusters
        Questions compared and their clusters (``G``).
    mean_a, mean_b, diff
        The two accuracies (mean question scores) and ``mean_a - mean_b``.
    se, ci_low, ci_high
        Clustered standard error of ``diff`` and its interval.
    statistic, p_value
        The test's statistic (McNemar: the smaller discordant count; t otherwise) and
        its two-sided p-value.
    test, reason
        Which test ran, and why that one.
    a_only, b_only
        Questions with a higher score for A (for B): with one record each, the
        discordant counts :math:`n_{10}` and :math:`n_{01}`.
    """

    n_questions: int
    n_clusters: int
    mean_a: float
    mean_b: float
    diff: float
    se: float
    ci_low: float
    ci_high: float
    statistic: float
    p_value: float
    test: str
    reason: str
    a_only: int
    b_only: int


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """McNemar's exact two-sided p-value from the discordant counts.

    Examples
    --------
    >>> round(mcnemar_exact(9, 2), 6)
    0.06543
    """
    from scipy import stats  # noqa: PLC0415 (slow import)

    n = a_only + b_only
    if n == 0:
        return 1.0
    return float(min(1.0, 2 * stats.binom.cdf(min(a_only, b_only), n, 0.5)))


def mcnemar_interval(a_only: int, b_only: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    r"""Conditional exact interval of the paired difference, consistent with :func:`mcnemar_exact`.

    The Clopper–Pearson interval of :math:`\pi = P(\text{A right} \mid \text{discordant})`
    from ``a_only`` of ``a_only + b_only`` discordant questions, carried to
    :math:`\bar d = (n_d/n)(2\pi - 1)` (module docstring).  At ``confidence = 1 - alpha``
    it excludes 0 exactly when ``mcnemar_exact(a_only, b_only) < alpha``.

    Parameters
    ----------
    a_only, b_only
        Discordant counts :math:`n_{10}` (A right, B wrong) and :math:`n_{01}`.
    n
        Questions compared.
    confidence
        Coverage of the interval.

    Returns
    -------
    tuple of float
        ``(low, high)``; ``(nan, nan)`` without discordant questions.

    Examples
    --------
    >>> low, high = mcnemar_interval(4, 0, 28)
    >>> round(low, 4), round(high, 4)
    (-0.0292, 0.1429)
    """
    from scipy import stats  # noqa: PLC0415 (slow import)

    nd = a_only + b_only
    if nd == 0 or n <= 0:
        return math.nan, math.nan
    tail = (1 - confidence) / 2
    low = float(stats.beta.ppf(tail, a_only, b_only + 1)) if a_only > 0 else 0.0
    high = float(stats.beta.ppf(1 - tail, a_only + 1, b_only)) if b_only > 0 else 1.0
    return nd / n * (2 * low - 1), nd / n * (2 * high - 1)


def mcnemar_score_interval(a_only: int, b_only: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Tango's score interval, made to agree with :func:`mcnemar_exact` at ``1 - confidence``.

    Parameters
    ----------
    a_only, b_only
        Discordant counts :math:`n_{10}` and :math:`n_{01}`.
    n
        Questions compared.
    confidence
        Coverage of the interval; the exact test is read at ``alpha = 1 - confidence``.

    Returns
    -------
    tuple of float
        Tango's interval when its verdict is the exact test's; widened to 0 when only
        Tango's excludes 0; the conditional exact interval when only the exact test
        rejects (module docstring).  ``(nan, nan)`` without discordant questions.

    Examples
    --------
    >>> low, high = mcnemar_score_interval(5, 0, 30)  # Tango: [3.4, 33.6] points; exact p 0.0625
    >>> round(low, 4), round(high, 4)
    (0.0, 0.3356)
    """
    if a_only + b_only == 0 or n <= 0:
        return math.nan, math.nan
    low, high = tango_interval(a_only, b_only, n, confidence)
    rejects = mcnemar_exact(a_only, b_only) < 1 - confidence
    if not rejects:
        return min(low, 0.0), max(high, 0.0)
    if low <= 0.0 <= high:
        return mcnemar_interval(a_only, b_only, n, confidence)
    return low, high


def pair_interval(result: PairedDifference, confidence: float) -> tuple[float, float]:
    """The interval of a :class:`PairedDifference` at another coverage, by the same procedure.

    Examples
    --------
    >>> r = paired_difference([1, 1, 1, 1, 1, 0], [0, 0, 0, 0, 0, 0], single_record=True)
    >>> [round(x, 3) for x in pair_interval(r, 0.95)]
    [0.0, 0.97]
    """
    if result.test == MCNEMAR:
        return mcnemar_score_interval(result.a_only, result.b_only, result.n_questions, confidence)
    if result.test == PAIRED_T and result.n_clusters >= 2 and result.se > 0:
        half = t_quantile(confidence, result.n_clusters - 1) * result.se
        return result.diff - half, result.diff + half
    return math.nan, math.nan


def paired_difference(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    single_record: bool = False,
    clusters: Sequence[object] | None = None,
    confidence: float = 0.95,
) -> PairedDifference:
    """Paired difference of two models' question scores, with its interval and test.

    Parameters
    ----------
    a, b
        Question scores of models A and B, aligned (same question at the same index).
    single_record
        Each question has exactly one binary record per model (no shuffles, no samples).
    clusters
        Each question's stimulus cluster (``None``: each question its own).
    confidence
        Coverage of the interval.

    Returns
    -------
    PairedDifference

    Examples
    --------
    >>> r = paired_difference([1, 1, 1, 0, 1], [0, 1, 0, 0, 1], single_record=True)
    >>> r.diff, r.a_only, r.b_only, r.test
    (0.4, 2, 0, 'exact McNemar')
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    d = x - y
    n = int(d.size)
    a_only, b_only = int(np.sum(d > 0)), int(np.sum(d < 0))
    if n < 2:
        nan = math.nan
        means = (float(x.mean()), float(y.mean()), float(d.mean())) if n else (nan, nan, nan)
        return PairedDifference(n, n, *means, nan, nan, nan, nan, nan, NOT_COMPARABLE,
                                f"{n} question(s) in common: nothing to pair", a_only, b_only)  # fmt: skip
    se, groups = cluster_se(d, clusters)
    mean = float(d.mean())
    shared = (n, groups, float(x.mean()), float(y.mean()), mean)
    if not np.any(d != 0):
        return PairedDifference(*shared, math.nan, math.nan, math.nan, math.nan, 1.0, NO_DISCORDANT,
                                "every question scored the same for both models: no evidence either way",
                                0, 0)  # fmt: skip
    if single_record and clusters is None:
        low, high = mcnemar_score_interval(a_only, b_only, n, confidence)
        return PairedDifference(*shared, se, low, high, float(min(a_only, b_only)), mcnemar_exact(a_only, b_only),
                                MCNEMAR, "one binary record per question and model, no shared stimuli; "
                                "Tango score interval, agreeing with the exact test", a_only, b_only)  # fmt: skip
    reason = ("repeated records per question (shuffles or samples)" if not single_record
              else "questions share stimuli (clusters)")  # fmt: skip
    if groups < 2 or not se > 0:  # one cluster, or every cluster's differences cancel out
        return PairedDifference(*shared, se, math.nan, math.nan, math.nan, math.nan, PAIRED_T,
                                reason + f"; {groups} cluster(s): no standard error", a_only, b_only)  # fmt: skip
    from scipy import stats  # noqa: PLC0415 (slow import)

    half = t_quantile(confidence, groups - 1) * se
    t = mean / se
    p = float(2 * stats.t.sf(abs(t), groups - 1))
    return PairedDifference(*shared, se, mean - half, mean + half, t, p, PAIRED_T, reason, a_only, b_only)
