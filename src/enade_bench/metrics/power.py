r"""The minimum detectable difference of a pair, computed under the alternative.

The smallest true difference :math:`\delta` that a pair's own test, at its own level
:math:`\alpha_i`, detects with probability :math:`1-\beta` (80 %) at this many
questions.  A true difference that large forces the two models to disagree on at least
a share :math:`|\delta|` of the questions, and so a larger standard error than the one
observed between two close models: the power is computed under the alternative's own
spread, not with the observed standard error (which overstates the power at small
sizes: 8 questions gave 2.5 % power at the old "80 %" MDD).  The alternative is defined
for :math:`\delta \ge 0`; :math:`\delta < 0` swaps the models, with the same power.

**Single records (McNemar's score test).**  With :math:`\hat w = \min(b, c)/n` the
observed share of questions that the weaker model (the one with fewer wins) wins, the
alternative keeps it: :math:`p_{01} = \min\{\hat w, (1-|\delta|)/2\}`,
:math:`p_{10} = p_{01} + |\delta|`, :math:`\psi = p_{10} + p_{01}`.  (It once set
:math:`p_{01} = (\max(\hat\psi, |\delta|) - |\delta|)/2`, which is 0 at every difference above
the observed discordance: the weaker model never winning a question, the alternative of the
largest power, so the smallest MDD: with 2 wins each of 28 questions the exact test's MDD is
34.8 points, not 18.8: ``python -c "from enade_bench.metrics.power import exact_mdd;
print(exact_mdd(28, 2 / 28, 0.05), exact_mdd(28, 0, 0.05))"``.)  The power is exact: the discordant count is
:math:`k \sim \mathrm{Binomial}(n, \psi)`, given :math:`k` the count for A is
:math:`b \sim \mathrm{Binomial}(k, p_{10}/\psi)`, and the test rejects when
:math:`|2b-k| > z_{1-\alpha_i/2}\sqrt k`
(:func:`~enade_bench.metrics.paired.mcnemar_score_test`), so

.. math::

    \mathrm{power}(\delta) = \sum_{k=0}^{n} \binom{n}{k}\psi^k(1-\psi)^{n-k}\,
        P\bigl(|2b-k| > z_{1-\alpha_i/2}\sqrt k \bigm| k\bigr).

**Single records, at most 100 questions (the exact unconditional score test).**  The same
alternative, and the power the trinomial probability of the tables the test rejects at
:math:`\alpha_i` (its p-values of every table,
:func:`~enade_bench.metrics.paired_exact.exact_pvalues`): exact, and the power of the test the
pair shows (:func:`exact_mdd`).  At 8 questions, the weaker model winning none, its MDD at
:math:`\alpha = 0.05` is 69.7 points where the score test's was 58.4 (a test whose size was 0.070).

**Clustered pairs (paired t on** :math:`G-1` **df).**  Not McNemar's alternative, which
turns disagreements toward one model and so narrows the spread (its MDD had 0.11–0.60
power at 8–28 questions under an independent generator): one model's accuracy, or its
logit, moved by a constant, each question keeping its observed residual and its cluster,
the spread's own uncertainty averaged over, and the power a seeded Monte-Carlo of the
pair's own clustered t; the MDD is the larger of the two shifts', and at least the difference
with power 0.50 at the variance's 90 % upper limit
(:mod:`enade_bench.metrics.power_clustered`).

The MDD is the smallest :math:`\delta` in :math:`(0, 1]` with power :math:`\ge 1-\beta`
(McNemar: a grid, then bisection, so the power at the MDD is :math:`1-\beta`); where no
:math:`\delta < 1` reaches it the pair is **not reachable at this size** (``inf``, shown
so; NaN is kept for a pair without a test).  The tests check the power at the MDD by
simulating the pair's own test at 8, 28 and 180 questions, clustered ones in clusters.

References
----------
.. [1] M. W. Fagerland, S. Lydersen and P. Laake, "The McNemar test for binary
   matched-pairs data: mid-p and asymptotic are better than exact conditional", BMC
   Medical Research Methodology 13:91, 2013.
.. [2] J. M. Lachin, "Power and sample size evaluation for the McNemar test with
   application to matched case-control studies", Statistics in Medicine 11(9),
   1239–1251, 1992 (power under the alternative's own variance).
.. [3] E. Miller, "Adding Error Bars to Evals", arXiv:2411.00640, 2024, §5.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from enade_bench.metrics.paired import EXACT, MCNEMAR, PAIRED_T, SE_ZERO, PairedDifference
from enade_bench.metrics.paired_exact import exact_pvalues, table_probabilities
from enade_bench.metrics.power_clustered import clustered_mdd, clustered_mdd_range

__all__ = [
    "NOT_REACHABLE",
    "exact_mdd",
    "exact_power",
    "mcnemar_mdd",
    "mcnemar_power",
    "pair_mdd",
    "pair_mdd_range",
    "records_of",
]

#: How an MDD that no difference up to 100 points reaches reads in tables.
NOT_REACHABLE = "not reachable at this size"


def _alternative(delta: float, weaker: float) -> tuple[float, float]:
    """:math:`(p_{10}, p_{01})` of the single-record alternative (module docstring)."""
    p01 = min(weaker, (1 - abs(delta)) / 2)
    return p01 + abs(delta), p01


def mcnemar_power(delta: float, n: int, weaker: float, alpha: float) -> float:
    r"""Exact power of McNemar's score test at ``alpha`` for a true difference ``delta``.

    Parameters
    ----------
    delta
        True difference of accuracies :math:`p_{10} - p_{01}`.
    n
        Questions compared.
    weaker
        Observed share of questions the weaker model wins, :math:`\hat w = \min(b, c)/n`,
        which the alternative keeps (module docstring).
    alpha
        The test's two-sided level :math:`\alpha_i`.

    Returns
    -------
    float

    Examples
    --------
    >>> round(mcnemar_power(0.5, 8, 0.0, 0.05), 4)  # rejects when b >= 4 of 8, c = 0
    0.6367
    """
    from scipy import stats  # noqa: PLC0415 (slow import)

    p10, p01 = _alternative(delta, weaker)
    psi = p10 + p01
    if psi <= 0:
        return 0.0
    share = p10 / psi
    k = np.arange(1, n + 1)
    z = NormalDist().inv_cdf(1 - alpha / 2)
    upper = np.floor((k + z * np.sqrt(k)) / 2)  # reject when b > (k + z sqrt k) / 2
    lower = np.ceil((k - z * np.sqrt(k)) / 2)  # ... or b < (k - z sqrt k) / 2
    given = stats.binom.sf(upper, k, share) + stats.binom.cdf(lower - 1, k, share)
    return float(np.sum(stats.binom.pmf(k, n, psi) * given))


def exact_power(delta: float, n: int, weaker: float, alpha: float) -> float:
    r"""Exact power of the exact unconditional score test at ``alpha`` for a true difference ``delta``.

    :math:`\sum_{(b,c):\,p(b,c) < \alpha} P(b, c)` in the trinomial of :math:`n` questions
    with :math:`p_{01} = \min\{\hat w, (1-|\delta|)/2\}`, :math:`p_{10} = p_{01} + |\delta|` (module
    docstring; parameters as :func:`mcnemar_power`).

    Examples
    --------
    >>> round(exact_power(0.5, 8, 0.0, 0.05), 4)  # rejects 5 of 8 for A and none for B, or more
    0.3633
    """
    p10, p01 = _alternative(delta, weaker)
    reject = exact_pvalues(n) < alpha
    if p10 + p01 <= 0 or not np.any(reject):
        return 0.0
    return float(table_probabilities(n, p10, p01)[reject].sum())


def exact_mdd(n: int, weaker: float, alpha: float, power: float = 0.8) -> float:
    """Minimum detectable difference of the exact unconditional score test, under the alternative.

    Parameters and result as :func:`mcnemar_mdd`.

    Examples
    --------
    >>> round(exact_mdd(8, 0.0, 0.05), 3), round(exact_mdd(8, 0.125, 0.05), 3)
    (0.697, 0.945)

    The power depends on ``alpha`` only through the tables it rejects, :math:`p < \alpha`, the same
    for every ``alpha`` up to the next table's p-value: the MDD is computed once per rejection
    region (at that p-value, which rejects the same tables) and kept, so a comparison's pairs at
    their many Holm levels share it.
    """
    if n < 1:
        return math.nan
    p = exact_pvalues(n)
    above = p[p >= alpha]
    return _region_mdd(n, weaker, float(above.min()) if above.size else math.inf, power)


@lru_cache(maxsize=65536)
def _region_mdd(n: int, weaker: float, alpha: float, power: float) -> float:
    """:func:`exact_mdd` at ``alpha``, a table's p-value (or ``inf``) that bounds one rejection region."""
    if not np.any(exact_pvalues(n) < alpha):
        return math.inf
    return _smallest(lambda d: exact_power(d, n, weaker, alpha), power)


def _smallest(power_at: Callable[[float], float], target: float, top: float = 1.0) -> float:
    """The smallest delta in (0, top] with ``power_at(delta) >= target`` (grid, then bisection); NaN if none."""
    grid = np.linspace(0.0, top, 201)[1:]
    previous = 0.0
    for delta in grid:
        if power_at(float(delta)) >= target:
            low, high = previous, float(delta)
            for _ in range(40):
                mid = (low + high) / 2
                low, high = (low, mid) if power_at(mid) >= target else (mid, high)
            return high
        previous = float(delta)
    return math.inf


def mcnemar_mdd(n: int, weaker: float, alpha: float, power: float = 0.8) -> float:
    """Minimum detectable difference of McNemar's score test, under the alternative.

    Parameters
    ----------
    n
        Questions compared.
    weaker
        Observed share of questions the weaker model wins.
    alpha
        The test's level :math:`\\alpha_i` (two-sided).
    power
        Target power.

    Returns
    -------
    float
        The MDD (difference scale, 0–1); ``inf`` when no difference reaches ``power``
        (:data:`NOT_REACHABLE`).

    Examples
    --------
    >>> round(mcnemar_mdd(8, 0.0, 0.05), 3)
    0.584
    >>> mcnemar_mdd(8, 0.0, 0.05 / 20)  # 8 of 8 for A: z^2 = 8 < z_{0.99875}^2 = 9.1
    inf
    """
    if n < 1:
        return math.nan
    return _smallest(lambda d: mcnemar_power(d, n, weaker, alpha), power)


def pair_mdd(result: PairedDifference, alpha: float, power: float = 0.8) -> float:
    """The MDD of a :class:`~enade_bench.metrics.paired.PairedDifference` at its test's level ``alpha``.

    One record per question: :func:`exact_mdd` or :func:`mcnemar_mdd` with the share of
    questions the weaker model wins; the clustered paired t: :func:`clustered_mdd` with its
    question differences, clusters, pooled scores and records per question (the pair's own
    count, else :func:`records_of` the two models' scores).  NaN for a pair without a test or a
    standard error; ``inf`` where ``power`` is not reachable.
    """
    single = {EXACT: exact_mdd, MCNEMAR: mcnemar_mdd}.get(result.test)
    if single is not None:
        return single(
            result.n_questions, min(result.a_only, result.b_only) / result.n_questions, alpha, power
        )
    if result.test == PAIRED_T and result.se > SE_ZERO and result.differences:
        d, m = np.asarray(result.differences), np.asarray(result.bases)
        return clustered_mdd(d, result.clusters, alpha, power, m, _records(result))
    return math.nan


def pair_mdd_range(result: PairedDifference, alpha: float, power: float = 0.8) -> tuple[float, float]:
    """A clustered pair's MDD at the 10 % and 90 % limits of its variance's sampling distribution
    (:func:`~enade_bench.metrics.power_clustered.clustered_mdd_range`); NaNs for other tests."""
    if result.test == PAIRED_T and result.se > SE_ZERO and result.differences:
        d, m = np.asarray(result.differences), np.asarray(result.bases)
        return clustered_mdd_range(d, result.clusters, alpha, power, m, _records(result))
    return math.nan, math.nan


def _records(result: PairedDifference) -> int | tuple[int, ...]:
    """The pair's records per question as counted, else :func:`records_of` its two models' scores."""
    d, m = np.asarray(result.differences), np.asarray(result.bases)
    return result.records or records_of(np.r_[m + d / 2, m - d / 2])


def records_of(scores: npt.ArrayLike) -> int:
    """The fewest records per question that give these question scores (each a multiple of ``1/r``); 1000 if none.

    Examples
    --------
    >>> records_of([0.0, 1 / 3, 2 / 3, 0.5]), records_of([0.1234])
    (6, 1000)
    """
    x = np.asarray(scores, dtype=float)
    for start in range(1, 1001, 50):
        r = np.arange(start, start + 50)[:, None]
        found = np.flatnonzero(np.all(np.abs(x * r - np.round(x * r)) < 1e-8, axis=1))
        if found.size:
            return int(r[found[0], 0])
    return 1000
