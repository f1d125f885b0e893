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

The interval is :math:`\bar d \pm t_{G-1,\,0.975}\,\widehat{SE}` in both cases.

References
----------
.. [1] Q. McNemar, "Note on the sampling error of the difference between correlated
   proportions or percentages", Psychometrika 12(2), 153–157, 1947.
.. [2] E. Miller, "Adding Error Bars to Evals", arXiv:2411.00640, 2024.
.. [3] A. C. Cameron and D. L. Miller, "A Practitioner's Guide to Cluster-Robust
   Inference", Journal of Human Resources 50(2), 317–372, 2015.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from enade_bench.metrics.clustered import cluster_se, t_quantile

__all__ = ["MCNEMAR", "PAIRED_T", "PairedDifference", "mcnemar_exact", "paired_difference"]

MCNEMAR = "exact McNemar"
PAIRED_T = "clustered paired t"


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
    se, groups = cluster_se(d, clusters)
    mean = float(d.mean()) if n else math.nan
    half = t_quantile(confidence, groups - 1) * se if groups >= 2 and se > 0 else 0.0 if se == 0 else math.nan
    a_only, b_only = int(np.sum(d > 0)), int(np.sum(d < 0))
    common = (n, groups, float(x.mean()) if n else math.nan, float(y.mean()) if n else math.nan, mean, se,
              mean - half, mean + half)  # fmt: skip
    if single_record and clusters is None:
        return PairedDifference(*common, float(min(a_only, b_only)), mcnemar_exact(a_only, b_only), MCNEMAR,
                                "one binary record per question and model, no shared stimuli", a_only, b_only)  # fmt: skip
    reason = ("repeated records per question (shuffles or samples)" if not single_record
              else "questions share stimuli (clusters)")  # fmt: skip
    if groups < 2 or not se > 0:
        p = 1.0 if mean == 0 or math.isnan(mean) else 0.0 if se == 0 else math.nan
        return PairedDifference(*common, math.nan, p, PAIRED_T, reason, a_only, b_only)
    from scipy import stats  # noqa: PLC0415 (slow import)

    t = mean / se
    p = float(2 * stats.t.sf(abs(t), groups - 1))
    return PairedDifference(*common, t, p, PAIRED_T, reason, a_only, b_only)
