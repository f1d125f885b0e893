r"""The minimum detectable difference of a pair, computed under the alternative.

The smallest true difference :math:`\delta` that a pair's own test, at its own level
:math:`\alpha_i`, detects with probability :math:`1-\beta` (80 %) at this many
questions.  A true difference that large forces the two models to disagree on at least
a share :math:`|\delta|` of the questions, and so a larger standard error than the one
observed between two close models: the power is computed with the spread the
difference implies, not with the observed standard error (which overstates the power
at small sizes: 8 questions gave 2.5 % power at the old "80 %" MDD).

**Single records (McNemar's score test).**  With :math:`\hat\psi = (b+c)/n` the
observed share of discordant questions, the alternative keeps that discordance, or
raises it to what the difference needs:
:math:`\psi(\delta) = \max(\hat\psi, |\delta|)`, :math:`p_{10} = (\psi+\delta)/2`,
:math:`p_{01} = (\psi-\delta)/2`.  The power is exact: the discordant count is
:math:`k \sim \mathrm{Binomial}(n, \psi)`, given :math:`k` the count for A is
:math:`b \sim \mathrm{Binomial}(k, p_{10}/\psi)`, and the test rejects when
:math:`|2b-k| > z_{1-\alpha_i/2}\sqrt k`
(:func:`~enade_bench.metrics.paired.mcnemar_score_test`), so

.. math::

    \mathrm{power}(\delta) = \sum_{k=0}^{n} \binom{n}{k}\psi^k(1-\psi)^{n-k}\,
        P\bigl(|2b-k| > z_{1-\alpha_i/2}\sqrt k \bigm| k\bigr).

**Clustered pairs (paired t on** :math:`G-1` **df).**  With question differences
:math:`d_i`, :math:`m_1 = \overline{|d|}`, :math:`m_2 = \overline{d^2}` and the observed
design effect :math:`D^2 = \widehat{SE}^2 / \{(m_2 - \bar d^2)/n\}`, the alternative lets
more questions disagree, in the way the observed ones do, where :math:`|\delta| > m_1`:
:math:`v(\delta) = m_2\max(1, |\delta|/m_1) - \delta^2` and
:math:`SE(\delta) = D\sqrt{v(\delta)/n}` (at :math:`\delta = \bar d` it is the observed
SE).  The power is the noncentral t's, the test's own reference:
:math:`P(|T_{G-1,\,\lambda}| > t_{G-1,\,1-\alpha_i/2})`, :math:`\lambda = \delta/SE(\delta)`.

The MDD is the smallest :math:`\delta` in :math:`(0, 1]` with power :math:`\ge 1-\beta`
(a grid, then bisection: power is continuous in :math:`\delta`, so the power at the MDD is
:math:`1-\beta`); where no :math:`\delta \le 1` reaches it the pair is **not reachable at
this size** (``inf``, shown so; NaN is kept for a pair without a test).  The tests check the power at the MDD by simulating the pair's
own test at 8, 28 and 180 questions.

References
----------
.. [1] M. W. Fagerland, S. Lydersen and P. Laake, "The McNemar test for binary
   matched-pairs data: mid-p and asymptotic are better than exact conditional", BMC
   Medical Research Methodology 13:91, 2013.
.. [2] J. M. Lachin, "Power and sample size evaluation for the McNemar test with
   application to matched case-control studies", Statistics in Medicine 11(9),
   1239–1251, 1992 (power under the alternative's own variance).
.. [3] E. Miller, "Adding Error Bars to Evals", arXiv:2411.00640, 2024, §5.
.. [4] A. C. Cameron and D. L. Miller, "A Practitioner's Guide to Cluster-Robust
   Inference", Journal of Human Resources 50(2), 317–372, 2015.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from enade_bench.metrics.paired import MCNEMAR, PAIRED_T, PairedDifference

__all__ = [
    "NOT_REACHABLE",
    "Spread",
    "clustered_mdd",
    "clustered_power",
    "mcnemar_mdd",
    "mcnemar_power",
    "pair_mdd",
]

#: How an MDD that no difference up to 100 points reaches reads in tables.
NOT_REACHABLE = "not reachable at this size"


def mcnemar_power(delta: float, n: int, discordance: float, alpha: float) -> float:
    r"""Exact power of McNemar's score test at ``alpha`` for a true difference ``delta``.

    Parameters
    ----------
    delta
        True difference of accuracies :math:`p_{10} - p_{01}`.
    n
        Questions compared.
    discordance
        Observed share of discordant questions :math:`\hat\psi`; the alternative uses
        :math:`\max(\hat\psi, |\delta|)` (module docstring).
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

    psi = min(1.0, max(discordance, abs(delta)))
    if psi <= 0:
        return 0.0
    share = (psi + delta) / 2 / psi
    k = np.arange(1, n + 1)
    z = NormalDist().inv_cdf(1 - alpha / 2)
    upper = np.floor((k + z * np.sqrt(k)) / 2)  # reject when b > (k + z sqrt k) / 2
    lower = np.ceil((k - z * np.sqrt(k)) / 2)  # ... or b < (k - z sqrt k) / 2
    given = stats.binom.sf(upper, k, share) + stats.binom.cdf(lower - 1, k, share)
    return float(np.sum(stats.binom.pmf(k, n, psi) * given))


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


def mcnemar_mdd(n: int, discordance: float, alpha: float, power: float = 0.8) -> float:
    """Minimum detectable difference of McNemar's score test, under the alternative.

    Parameters
    ----------
    n
        Questions compared.
    discordance
        Observed share of discordant questions.
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
    >>> round(mcnemar_mdd(8, 0.25, 0.05), 3)
    0.584
    >>> mcnemar_mdd(8, 0.25, 0.05 / 20)  # 8 of 8 for A: z^2 = 8 < z_{0.99875}^2 = 9.1
    inf
    """
    if n < 1:
        return math.nan
    return _smallest(lambda d: mcnemar_power(d, n, discordance, alpha), power)


@dataclass(frozen=True)
class Spread:
    r"""The question differences :math:`d_i` of a clustered pair, as the power needs them.

    Attributes
    ----------
    n, groups
        Questions and clusters :math:`G`.
    mean, mean_abs, mean_square
        :math:`\bar d`, :math:`m_1 = \overline{|d|}`, :math:`m_2 = \overline{d^2}`.
    se
        The observed clustered standard error of :math:`\bar d` (its design effect).
    """

    n: int
    groups: int
    mean: float
    mean_abs: float
    mean_square: float
    se: float

    @classmethod
    def of(cls, d: npt.ArrayLike, se: float, groups: int) -> Spread:
        """The spread of the differences ``d``."""
        x = np.asarray(d, dtype=float)
        return cls(int(x.size), groups, float(x.mean()), float(np.mean(np.abs(x))), float(np.mean(x * x)), se)

    @property
    def usable(self) -> bool:
        """A standard error, two clusters and some spread."""
        spread = self.mean_square - self.mean**2
        return self.groups >= 2 and self.n >= 2 and self.mean_abs > 0 and spread > 0 and self.se > 0

    def se_at(self, delta: float) -> float:
        r""":math:`SE(\delta) = D\sqrt{v(\delta)/n}` (module docstring); 0 past the largest reachable difference."""
        design = self.se**2 / ((self.mean_square - self.mean**2) / self.n)
        var = self.mean_square * max(1.0, abs(delta) / self.mean_abs) - delta * delta
        return math.sqrt(design * var / self.n) if var > 0 else 0.0


def clustered_power(delta: float, spread: Spread, alpha: float) -> float:
    r"""Power of the clustered paired t test at ``alpha`` for a true difference ``delta``.

    Parameters
    ----------
    delta
        True difference of accuracies.
    spread
        The observed differences' :class:`Spread`.
    alpha
        The test's two-sided level.

    Returns
    -------
    float
        :math:`P(|T_{G-1,\lambda}| > t_{G-1,1-\alpha/2})` with :math:`\lambda = \delta/SE(\delta)`;
        NaN without a usable spread.
    """
    if not spread.usable:
        return math.nan
    se = spread.se_at(delta)
    if se <= 0:
        return 1.0
    return _t_power(abs(delta) / se, spread.groups - 1, alpha)


def _t_power(ncp: float, df: int, alpha: float) -> float:
    """Two-sided t test's power at noncentrality ``ncp`` (the normal's where scipy's nct gives up)."""
    from scipy import stats  # noqa: PLC0415 (slow import)

    crit = float(stats.t.ppf(1 - alpha / 2, df))
    value = float(stats.nct.sf(crit, df, ncp) + stats.nct.cdf(-crit, df, ncp))
    return value if not math.isnan(value) else float(stats.norm.sf(crit - ncp))


def clustered_mdd(spread: Spread, alpha: float, power: float = 0.8) -> float:
    r"""Minimum detectable difference of the clustered paired t test, under the alternative.

    The noncentrality :math:`\lambda^*` with power ``power`` is found first; then
    :math:`\delta/SE(\delta) = \lambda^*`, whose left side increases in :math:`\delta`
    (:math:`v(\delta)` falls while :math:`\delta \le m_1`, and
    :math:`\delta/\sqrt{v(\delta)} = \sqrt{\delta/(m_2/m_1 - \delta)}` rises after), is
    solved for :math:`\delta`.

    Parameters
    ----------
    spread
        The observed differences' :class:`Spread`.
    alpha
        The test's two-sided level :math:`\alpha_i`.
    power
        Target power.

    Returns
    -------
    float
        The MDD; NaN without a usable spread, ``inf`` when ``power`` is not reachable.

    Examples
    --------
    >>> d = [0.1, -0.2, 0.0, 0.3, 0.1, -0.1, 0.2, 0.0] * 5
    >>> round(clustered_mdd(Spread.of(d, 0.025, 40), 0.05), 3)
    0.068
    """
    from scipy import optimize  # noqa: PLC0415 (slow import)

    if not spread.usable:
        return math.nan

    def short(ncp: float) -> float:
        return _t_power(ncp, spread.groups - 1, alpha) - power

    high = 8.0
    while short(high) < 0:
        high *= 2
        if high > 1e5:
            return math.inf
    target = float(optimize.brentq(short, 0.0, high, xtol=1e-10))
    top = min(1.0, spread.mean_square / spread.mean_abs) * (1 - 1e-9)  # v(top) > 0

    def gap(delta: float) -> float:
        return delta / spread.se_at(delta) - target

    if gap(top) < 0:
        return math.inf
    return float(optimize.brentq(gap, 1e-12, top, xtol=1e-12))


def pair_mdd(result: PairedDifference, alpha: float, power: float = 0.8) -> float:
    """The MDD of a :class:`~enade_bench.metrics.paired.PairedDifference` at its test's level ``alpha``.

    McNemar's score test: :func:`mcnemar_mdd` with the pair's discordance; the clustered
    paired t: :func:`clustered_mdd` with its differences' :class:`Spread`.  NaN for a
    pair without a test or a standard error; ``inf`` where ``power`` is not reachable.
    """
    if result.test == MCNEMAR:
        return mcnemar_mdd(
            result.n_questions, (result.a_only + result.b_only) / result.n_questions, alpha, power
        )
    if result.test == PAIRED_T:
        spread = Spread(result.n_questions, result.n_clusters, result.diff, result.mean_abs, result.mean_square,
                        result.se)  # fmt: skip
        return clustered_mdd(spread, alpha, power)
    return math.nan
