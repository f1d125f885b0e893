r"""Two models on the same questions: the paired difference, its interval and its test.

The unit is the question.  For question :math:`i` let :math:`a_i, b_i` be the two
models' scores (mean correctness over the question's shuffles or samples) and
:math:`d_i = a_i - b_i`.  The difference of accuracies is :math:`\bar d`; pairing
removes the variance the two models share through the questions' difficulty
(Miller 2024, §4).  Its standard error is cluster-robust over the stimulus clusters
(:func:`~enade_bench.metrics.clustered.cluster_se`), and

* with **one binary record per question and no clusters** and at most
  :data:`~enade_bench.metrics.paired_exact.SWITCH_N` (100) questions, the **score-ordered
  exact unconditional test** (Suissa & Shuster 1991) with the exact unconditional
  interval that inverts it (Tang, Tang & Chan 2005),
  :mod:`enade_bench.metrics.paired_exact`: McNemar's score statistic
  :math:`z = (b - c)/\sqrt{b + c}` (:math:`b = n_{10}`, :math:`c = n_{01}`), its tail
  probability maximised over the discordance, so the test's actual size is at most
  :math:`\alpha` at every :math:`n` (0.029 at 8 questions, 0.049 at 28);
* with one record per question, no clusters and **more than 100 questions**, McNemar's
  (1947) test in its score form, :math:`p = 2\{1 - \Phi(|z|)\}` (no continuity
  correction; statsmodels' ``mcnemar(exact=False, correction=False)`` gives the same
  p-value), the score test of :math:`H_0: \delta = 0` in the multinomial model of the
  pairs, :math:`T(0)` of :mod:`enade_bench.metrics.paired_score`, with Tango's (1998)
  interval, the inversion of the same statistic.  Its actual size exceeds
  :math:`\alpha` slightly at every :math:`n` (0.053 at 101 questions, 0.054 at 183, by
  exact enumeration over the discordance); Fagerland, Lydersen & Laake (2013) recommend
  it only "if small but frequent violations of the nominal level is acceptable".  With
  :math:`b = c = 0` the test gives :math:`p = 1` and the interval is
  :math:`\pm z^2/(n + z^2)`.  Both are **one statement**: :math:`p < \alpha` exactly when
  the :math:`1-\alpha` interval excludes 0, by construction;
* where **some questions have one binary record and the others repeated records** (a mixed
  pair), the **sign-flip test** on the texts' sums of differences
  with the interval that inverts it (:mod:`enade_bench.metrics.paired_signflip`): its size is at
  most :math:`\alpha` at every :math:`n`, where the clustered t's on binary differences is 0.082 at
  8 questions (0.057 at 20); with too few texts to reject at any data (:math:`2^{1-G} \ge
  \alpha`) the reason says "not testable at this size";
* where **every question has repeated records** (shuffles or samples), or one record each in
  shared texts, the **clustered paired t test**:
  :math:`t = \bar d / \widehat{SE}(\bar d)` on :math:`G-1` degrees of freedom (Cameron &
  Miller 2015, §VI: with few clusters the normal reference rejects too often; its actual size
  0.049–0.054 by simulation, issue 63).  Its error rate is checked by simulation in the tests
  (questions of varying difficulty, 30 shuffles each, clusters of 2–4).

**One inference per pair**: the interval agrees with the test, so that :math:`p < \alpha`
exactly when the :math:`1-\alpha` interval excludes 0 (at any level: the comparison
computes each pair's interval at the level its adjusted decision used,
:mod:`enade_bench.metrics.simultaneous`).

* With the clustered paired t test it is :math:`\bar d \pm t_{G-1,\,1-\alpha/2}\,\widehat{SE}`;
  with the sign-flip test, the subset means' order statistics.

A clustered pair with **no discordant question** (every difference 0) has no standard
error and no interval (NaN) and :math:`p = 1`, said in ``test``; a pair of **fewer than two questions** is not
comparable (no interval, no p).

References
----------
.. [1] Q. McNemar, "Note on the sampling error of the difference between correlated
   proportions or percentages", Psychometrika 12(2), 153–157, 1947.
.. [2] E. Miller, "Adding Error Bars to Evals", arXiv:2411.00640, 2024.
.. [3] A. C. Cameron and D. L. Miller, "A Practitioner's Guide to Cluster-Robust
   Inference", Journal of Human Resources 50(2), 317–372, 2015.
.. [4] M. W. Fagerland, S. Lydersen and P. Laake, "The McNemar test for binary
   matched-pairs data: mid-p and asymptotic are better than exact conditional", BMC
   Medical Research Methodology 13:91, 2013.
.. [5] T. Tango, "Equivalence test and confidence interval for the difference in
   proportions for the paired-sample design", Statistics in Medicine 17(8), 891–908, 1998.
.. [6] M. W. Fagerland, S. Lydersen and P. Laake, "Recommended tests and confidence
   intervals for paired binomial proportions", Statistics in Medicine 33(16), 2850–2875, 2014.
.. [7] S. Suissa and J. J. Shuster, "The 2 x 2 matched-pairs trial: exact unconditional
   design and analysis", Biometrics 47(2), 361–372, 1991.
.. [8] M.-L. Tang, N.-S. Tang and I. S. F. Chan, "Confidence interval construction for
   proportion difference in small-sample paired studies", Statistics in Medicine 24(23),
   3565–3579, 2005.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from enade_bench.metrics.clustered import cluster_labels, cluster_se, t_quantile
from enade_bench.metrics.paired_exact import SWITCH_N, exact_interval, exact_pvalue
from enade_bench.metrics.paired_score import tango_interval
from enade_bench.metrics.paired_signflip import signflip_interval, signflip_pvalue

__all__ = [
    "EXACT",
    "MCNEMAR",
    "NOT_COMPARABLE",
    "NOT_TESTABLE",
    "NO_DISCORDANT",
    "PAIRED_T",
    "SCORE_TEST_NOTE",
    "SE_ZERO",
    "SIGN_FLIP",
    "PairedDifference",
    "mcnemar_score_test",
    "pair_interval",
    "paired_difference",
]

MCNEMAR = "McNemar score"
EXACT = "exact unconditional score"
PAIRED_T = "clustered paired t"
SIGN_FLIP = "sign-flip on text sums"
#: How a pair reads whose test cannot reject at any data of its size and level.
NOT_TESTABLE = "not testable at this size"
NO_DISCORDANT = "no discordant questions"
NOT_COMPARABLE = "not comparable"
#: The table's note where a pair uses McNemar's score test (more than SWITCH_N questions).
SCORE_TEST_NOTE = (
    f"pairs of more than {SWITCH_N} questions with one record each use McNemar's score test with Tango's "
    "interval, whose actual size at alpha = 0.05 is 0.053 at 101 questions and 0.054 at 183 (exact enumeration "
    f"over the discordance); up to {SWITCH_N} questions the exact unconditional test keeps its size at most alpha"
)
#: A standard error at or below this is 0 up to floating-point rounding: questions whose
#: differences are all equal (say 2/30 each, computed as ``a - b`` with rounding) have none.
SE_ZERO = 1e-12


@dataclass(frozen=True)
class PairedDifference:
    r"""Model A minus model B on the questions both answered.

    Attributes
    ----------
    n_questions, n_clusters
        Questions compared and their clusters (``G``).
    mean_a, mean_b, diff
        The two accuracies (mean question scores) and ``mean_a - mean_b``.
    se, ci_low, ci_high
        Clustered standard error of ``diff`` and its interval.
    statistic, p_value
        The test's statistic (McNemar: :math:`z = (b-c)/\sqrt{b+c}`; t otherwise) and
        its two-sided p-value.
    test, reason
        Which test ran, and why that one.
    a_only, b_only
        Questions with a higher score for A (for B): with one record each, the
        discordant counts :math:`n_{10}` and :math:`n_{01}`.
    differences, clusters, bases
        With the clustered paired t or the sign-flip test: each question's difference :math:`d_i`, its
        cluster's index and its pooled score :math:`(a_i + b_i)/2`, from which the power
        under the alternative draws (:mod:`enade_bench.metrics.power_clustered`); empty
        otherwise.
    records
        With the clustered paired t or the sign-flip test: each question's records per model (the fewer of the
        two), as the caller counted them; empty where it did not (the MDD then infers them
        from the scores, :func:`~enade_bench.metrics.power.records_of`).
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
    differences: tuple[float, ...] = field(default=(), repr=False)
    clusters: tuple[int, ...] = field(default=(), repr=False)
    bases: tuple[float, ...] = field(default=(), repr=False)
    records: tuple[int, ...] = field(default=(), repr=False)


def mcnemar_score_test(a_only: int, b_only: int) -> tuple[float, float]:
    r"""McNemar's score test from the discordant counts: :math:`(z, p)`.

    :math:`z = (b - c)/\sqrt{b + c}` and :math:`p = 2\{1 - \Phi(|z|)\}`, Tango's score
    statistic at :math:`\delta_0 = 0` (:func:`~enade_bench.metrics.paired_score.tango_statistic`),
    so :math:`p < \alpha` exactly when Tango's :math:`1-\alpha` interval excludes 0.
    ``(0, 1)`` without discordant questions.

    Parameters
    ----------
    a_only, b_only
        Discordant counts :math:`b = n_{10}` (A right, B wrong) and :math:`c = n_{01}`.

    Returns
    -------
    tuple of float
        The statistic and the two-sided p-value.

    Examples
    --------
    Fagerland, Lydersen & Laake (2014), Cavo et al. (2012): 59, 6, 16, 80.

    >>> z, p = mcnemar_score_test(6, 16)
    >>> round(z, 3), round(p, 6)
    (-2.132, 0.033006)
    """
    n = a_only + b_only
    if n == 0:
        return 0.0, 1.0
    z = (a_only - b_only) / math.sqrt(n)
    return z, 2 * NormalDist().cdf(-abs(z))


def pair_interval(result: PairedDifference, confidence: float) -> tuple[float, float]:
    """The interval of a :class:`PairedDifference` at another coverage, by the same procedure.

    Examples
    --------
    >>> r = paired_difference([1, 1, 1, 1, 1, 0], [0, 0, 0, 0, 0, 0], single_record=True)
    >>> [round(x, 3) for x in pair_interval(r, 0.95)]
    [0.043, 0.996]
    """
    if result.test == MCNEMAR:
        return tango_interval(result.a_only, result.b_only, result.n_questions, confidence)
    if result.test == EXACT:
        return exact_interval(result.a_only, result.b_only, result.n_questions, confidence)
    if result.test == SIGN_FLIP:
        return signflip_interval(result.differences, result.clusters, confidence)
    if result.test == PAIRED_T and result.n_clusters >= 2 and result.se > SE_ZERO:
        half = t_quantile(confidence, result.n_clusters - 1) * result.se
        return result.diff - half, result.diff + half
    return math.nan, math.nan


def _sign_flip(
    d: tuple[float, ...], labels: tuple[int, ...], confidence: float, ones: str
) -> tuple[float, float, float, str]:
    """A mixed pair (one binary record on some questions, repeated ones on the others): the
    sign-flip test on the texts' sums (:mod:`enade_bench.metrics.paired_signflip`): its interval,
    p-value and the reason, said how."""
    r = signflip_pvalue(d, labels)
    how = (
        f"every one of the {r.patterns} sign patterns"
        if r.exact
        else f"{r.patterns} sign patterns, Monte-Carlo (SE of p {r.mc_se:.2g})"
    )
    why = (
        f"{ones} questions have one binary record, the others repeated records (shuffles or samples): the "
        f"sign-flip test on the {r.texts} texts' sums of differences, {how}, whose size is at most alpha "
        f"at every n (the clustered t's on binary differences is 0.082 at 8 questions), and its interval"
    )
    if r.smallest_p >= 1 - confidence:
        why += f"; {NOT_TESTABLE}: with {r.texts} texts its smallest p is {r.smallest_p:.3g}"
    return (*signflip_interval(d, labels, confidence), r.p_value, why)


def paired_difference(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    single_record: bool = False,
    clusters: Sequence[object] | None = None,
    confidence: float = 0.95,
    records: npt.ArrayLike | None = None,
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
    records
        Each question's records per model (the fewer of the two models'): some questions with one
        and some with more is a mixed pair (the sign-flip test), and the MDD's logit shift reads
        them (``None``: not mixed; inferred from the scores for the shift).

    Returns
    -------
    PairedDifference

    Examples
    --------
    >>> r = paired_difference([1, 1, 1, 0, 1], [0, 1, 0, 0, 1], single_record=True)
    >>> r.diff, r.a_only, r.b_only, r.test
    (0.4, 2, 0, 'exact unconditional score')
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    d = x - y
    n = int(d.size)
    a_only, b_only = int(np.sum(d > 0)), int(np.sum(d < 0))
    if n < 2:
        nan = math.nan
        means = (float(x.mean()), float(y.mean()), float(d.mean())) if n else (nan, nan, nan)
        return PairedDifference(
            n,
            n,
            *means,
            nan,
            nan,
            nan,
            nan,
            nan,
            NOT_COMPARABLE,
            f"{n} question(s) in common: nothing to pair",
            a_only,
            b_only,
        )
    se, groups = cluster_se(d, clusters)
    mean = float(d.mean())
    shared = (n, groups, float(x.mean()), float(y.mean()), mean)
    if single_record and clusters is None:
        z, p = mcnemar_score_test(a_only, b_only)
        if n <= SWITCH_N:
            low, high = exact_interval(a_only, b_only, n, confidence)
            p, test = exact_pvalue(a_only, b_only, n), EXACT
            why = (
                f"one binary record per question and model, no shared stimuli, {n} <= {SWITCH_N} questions: "
                "the exact unconditional score test (size <= alpha) and the exact interval that inverts it"
            )
        else:
            low, high = tango_interval(a_only, b_only, n, confidence)
            test = MCNEMAR
            why = (
                f"one binary record per question and model, no shared stimuli, {n} > {SWITCH_N} questions: "
                "McNemar's score test and Tango's interval, which inverts it"
            )
        if a_only + b_only == 0:  # an SE of 0 would claim a precision the data do not have
            why += "; no discordant question: p = 1"
            se = math.nan
        return PairedDifference(*shared, se, low, high, z, p, test, why, a_only, b_only)
    if not np.any(d != 0):
        return PairedDifference(
            *shared,
            math.nan,
            math.nan,
            math.nan,
            math.nan,
            1.0,
            NO_DISCORDANT,
            "every question scored the same for both models: no evidence either way",
            0,
            0,
        )
    kept = (
        tuple(d.tolist()),
        tuple(cluster_labels(clusters, n).tolist()),
        tuple(((x + y) / 2).tolist()),
        () if records is None else tuple(np.asarray(records, dtype=int).tolist()),
    )
    ones = kept[3].count(1)
    if 0 < ones < n:  # binary differences among repeated ones: the clustered t does not keep its size there
        low, high, p_flip, why = _sign_flip(kept[0], kept[1], confidence, f"{ones} of {n}")
        return PairedDifference(*shared, se, low, high, mean, p_flip, SIGN_FLIP, why, a_only, b_only, *kept)
    reason = (
        "repeated records per question (shuffles or samples)"
        if not single_record
        else "questions share stimuli (clusters)"
    )
    if groups < 2 or not se > SE_ZERO:  # one cluster, or every cluster's differences equal their mean
        why = (
            f"{groups} cluster(s)"
            if groups < 2
            else "every cluster's differences sum to its share of the mean"
        )
        return PairedDifference(
            *shared,
            se,
            math.nan,
            math.nan,
            math.nan,
            math.nan,
            PAIRED_T,
            f"{reason}; {why}: no standard error",
            a_only,
            b_only,
        )
    from scipy import stats  # noqa: PLC0415 (slow import)

    half = t_quantile(confidence, groups - 1) * se
    t = mean / se
    p = float(2 * stats.t.sf(abs(t), groups - 1))
    return PairedDifference(
        *shared,
        se,
        mean - half,
        mean + half,
        t,
        p,
        PAIRED_T,
        reason,
        a_only,
        b_only,
        *kept,
    )
