"""Accuracy with the question as the unit: clustered standard errors and the design effect.

An exam's questions are the sample; the option shuffles (or sampled answers) of one
question are repeated measures of it, and questions introduced by one shared text
(a stimulus) are a cluster.  Treating every record as an independent Bernoulli trial
understates the standard error (Miller 2024, §2–3).  Here each question's score is its
mean correctness over its records, and the standard error of the mean of the question
scores is cluster-robust over the stimulus clusters (each question its own cluster
when none is declared).

References
----------
.. [1] E. Miller, "Adding Error Bars to Evals: A Statistical Approach to Language Model
   Evaluations", arXiv:2411.00640, 2024.
.. [2] A. C. Cameron and D. L. Miller, "A Practitioner's Guide to Cluster-Robust
   Inference", Journal of Human Resources 50(2), 317–372, 2015.
.. [3] E. B. Wilson, "Probable inference, the law of succession, and statistical
   inference", JASA 22(158), 209–212, 1927.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from enade_bench.metrics.accuracy import wilson_interval

__all__ = ["ClusteredMean", "cluster_labels", "cluster_se", "clustered_mean", "t_quantile"]


@dataclass(frozen=True)
class ClusteredMean:
    """A mean score with its standard error and 95 % interval.

    Attributes
    ----------
    n_questions, n_records, n_clusters
        Questions (the unit), records (question × shuffle/sample) and clusters
        (stimuli; ``n_clusters == n_questions`` when none is declared).
    mean
        Mean of the question scores (each question weighs the same).
    se
        Cluster-robust standard error of ``mean`` (Wilson method: the binomial SE).
    naive_se
        The standard error if every record were an independent trial,
        :math:`\\sqrt{\\hat p (1-\\hat p) / N_{records}}`.
    ci_low, ci_high
        The interval: ``mean ± t_{G-1} · se`` (clustered), or Wilson's.
    method
        ``"clustered"``, ``"wilson"`` (one record per question and no clusters) or
        ``"wilson-clusters"`` (every question scored the same; see :func:`clustered_mean`).
    """

    n_questions: int
    n_records: int
    n_clusters: int
    mean: float
    se: float
    naive_se: float
    ci_low: float
    ci_high: float
    method: str

    @property
    def design_effect(self) -> float:
        """``se / naive_se``: how much wider the honest interval is than the naive one."""
        return self.se / self.naive_se if self.naive_se > 0 else math.nan


def t_quantile(confidence: float, df: int) -> float:
    """Two-sided Student-t critical value (the normal one when ``df`` is infinite or large)."""
    from scipy import stats  # noqa: PLC0415 (scipy.stats is slow to import; only intervals need it)

    q = 1 - (1 - confidence) / 2
    return float(stats.t.ppf(q, df)) if df < 10**6 else float(stats.norm.ppf(q))


def cluster_labels(clusters: Sequence[object] | None, n: int) -> npt.NDArray[np.intp]:
    """Each value's cluster as an index ``0..G-1`` (``None``: each value its own cluster).

    Examples
    --------
    >>> cluster_labels(["t2", "t1", "t2"], 3).tolist()
    [1, 0, 1]
    """
    if clusters is None:
        return np.arange(n)
    return np.unique(np.asarray([str(c) for c in clusters]), return_inverse=True)[1].reshape(-1)


def cluster_se(values: npt.ArrayLike, clusters: Sequence[object] | None = None) -> tuple[float, int]:
    r"""Cluster-robust standard error of the mean of ``values``, and the number of clusters.

    .. math::

        \widehat{V}(\bar y) = \frac{G}{G-1}\,\frac{1}{n^2}\sum_{g=1}^{G}
            \Bigl(\sum_{i \in g} (y_i - \bar y)\Bigr)^2

    the CR1 sandwich of an intercept-only regression (Cameron & Miller 2015, eq. 11, with
    the small-sample factor :math:`G/(G-1)`; with one regressor statsmodels'
    ``OLS(y, 1).fit(cov_type="cluster")`` applies the same factor).  With each value its
    own cluster it is :math:`s/\sqrt n`, the usual standard error of a mean.

    Parameters
    ----------
    values
        One value per question (a score, or a paired difference of scores).
    clusters
        The cluster of each value (``None``: each value its own cluster).

    Returns
    -------
    tuple of (float, int)
        The standard error (``nan`` with fewer than two clusters) and ``G``.

    Examples
    --------
    >>> se, g = cluster_se([1.0, 0.0, 1.0, 1.0])
    >>> round(se, 4), g
    (0.25, 4)
    """
    y = np.asarray(values, dtype=float)
    n = y.size
    labels = cluster_labels(clusters, n)
    groups = int(labels.max()) + 1 if n else 0
    if groups < 2:
        return math.nan, groups
    sums = np.bincount(labels, weights=y - y.mean(), minlength=groups)
    var = groups / (groups - 1) * float(np.sum(sums**2)) / n**2
    return math.sqrt(var), groups


def clustered_mean(
    scores: npt.ArrayLike,
    n_records: npt.ArrayLike | None = None,
    clusters: Sequence[object] | None = None,
    confidence: float = 0.95,
) -> ClusteredMean:
    """Mean of question scores with a clustered interval (Wilson for single binary records).

    Parameters
    ----------
    scores
        Each question's score: its mean correctness over its records.
    n_records
        Records per question (default: one each).
    clusters
        Each question's stimulus cluster (``None``: the question is the cluster).
    confidence
        Coverage of the interval.

    Returns
    -------
    ClusteredMean
        With one record per question and no clusters: the Wilson interval [3]_ on
        ``sum(scores)`` successes of ``n`` (exact for independent binary questions).
        Otherwise ``mean ± t_{G-1} se`` with :func:`cluster_se`, cut to [0, 1].  When every
        question has the same score (all 0 or all 1: ``se`` is 0, a t interval would be
        the single point ``[mean, mean]``), Wilson's interval on ``mean · G`` successes of
        the ``G`` clusters (method ``"wilson-clusters"``): as wide as a single-record run of
        ``G`` independent questions, the most the data can say.

    Examples
    --------
    >>> r = clustered_mean([1.0, 0.5, 0.0, 1.0], n_records=[2, 2, 2, 2])
    >>> round(r.mean, 3), round(r.se, 3), r.method
    (0.625, 0.239, 'clustered')
    """
    y = np.asarray(scores, dtype=float)
    counts = np.ones_like(y) if n_records is None else np.asarray(n_records, dtype=float)
    n, records = int(y.size), int(counts.sum())
    pooled = float(np.sum(y * counts) / records) if records else math.nan
    naive = math.sqrt(pooled * (1 - pooled) / records) if records else math.nan
    mean = float(y.mean()) if n else math.nan
    single = bool(np.all(counts == 1)) and clusters is None and bool(np.all((y == 0) | (y == 1)))
    if single:
        low, high = wilson_interval(int(y.sum()), n, confidence)
        return ClusteredMean(n, records, n, mean, naive, naive, low, high, "wilson")
    se, groups = cluster_se(y, clusters)
    if se == 0:  # every question scores the same (all 0 or all 1): no spread to estimate from
        low, high = wilson_interval(round(mean * groups), groups, confidence)
        return ClusteredMean(n, records, groups, mean, se, naive, low, high, "wilson-clusters")
    half = t_quantile(confidence, groups - 1) * se if groups >= 2 else math.nan
    low, high = max(0.0, mean - half), min(1.0, mean + half)  # a proportion's interval stays in [0, 1]
    return ClusteredMean(n, records, groups, mean, se, naive, low, high, "clustered")
