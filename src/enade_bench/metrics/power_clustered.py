r"""Power of the clustered paired t under alternatives that keep the observed heterogeneity.

The alternative of :mod:`enade_bench.metrics.power` for a pair tested with the clustered
paired t on :math:`G-1` df (shuffles or samples per question, or shared texts).  Let
:math:`d_i = a_i - b_i` be the observed question differences in :math:`G` clusters,
:math:`e_i = d_i - \bar d` their residuals (the observed difference removed) and
:math:`u_g = \sum_{i \in g} e_i` a cluster's residual sum.  One model is moved by a
constant and each question keeps its own residual, so the spread of the differences and
their text structure stay as observed (disagreements are not moved toward one model):

* **location shift** (one model's accuracy plus a constant):
  :math:`d'_i = e_i + \delta`;
* **logit shift** (one model's logit plus a constant :math:`c` on every question):
  :math:`d'_i = e_i + \Delta_i(c)`,
  :math:`\Delta_i(c) = \operatorname{expit}(\ell_i + c/2) - \operatorname{expit}(\ell_i - c/2)`,
  with :math:`\ell_i` the logit of the question's pooled score
  :math:`m_i = (a_i + b_i)/2` shrunk away from 0 and 1 by half a record
  (:math:`\tilde m_i = (2 r_i m_i + 1/2)/(2r_i + 1)`, :math:`r_i` the question's records per
  model, as the comparison counted them, else :func:`~enade_bench.metrics.power.records_of`) and
  :math:`c` the constant with :math:`\frac1n\sum_i \Delta_i(c) = \delta`: easy and hard
  questions move little, middle ones more, which adds the shift's own heterogeneity.

**The spread is estimated.**  At 8–28 questions the observed residuals understate the
between-question variance more often than not (with 5 texts its estimate has 4 df), so
the power is averaged over that uncertainty (an assurance, O'Hagan, Stevens & Campbell
2005 [1]_): each draw scales the residuals by :math:`k = \sqrt{\nu / \chi^2_\nu}` (the
scaled-inverse-:math:`\chi^2` posterior of the variance under a flat prior on
:math:`\log\sigma`), with :math:`\nu` the effective df of the cluster-level variance,
moment-matched to the observed kurtosis of the :math:`u_g` as in Bonett (2006) [2]_,
:math:`\operatorname{Var}\ln s^2 \approx \{\hat\kappa - (G-3)/G\}/(G-1) = 2/\nu`, so
:math:`\nu = \min\{G-1,\ 2(G-1)/(\hat\kappa - (G-3)/G)\}`,
:math:`\hat\kappa = G\sum u_g^4 / (\sum u_g^2)^2` (never more than the normal theory's
:math:`G-1`).

One draw of a data set: :math:`G` clusters drawn with replacement from the observed ones
(the cluster bootstrap [3]_: sizes and residual sums), each residual sum times a random
sign (the cluster sign change [4]_: no difference, the observed within-cluster products)
and times :math:`k\sqrt{G/(G-1)}` (the resampled sums' variance is
:math:`\frac1G\sum u_g^2`; the factor makes it the unbiased :math:`s^2 = \frac1{G-1}\sum
u_g^2` the posterior is centred on), plus the shift's sum over the cluster
(:math:`n_g\delta` or :math:`\sum_{i\in g}\Delta_i(c)`).  The clustered t needs only the
cluster sums, so a draw costs :math:`G` numbers, not one per question.  The power is the
share of draws in which the pair's own test rejects,
:math:`|\bar d'| > t_{G-1,\,1-\alpha_i/2}\,\widehat{SE}_{CR1}` (a draw whose SE is 0, up
to rounding, has no test and does not reject): a Monte-Carlo of the test's own statistic
[5]_, not the noncentral t, which is exact only for normal differences.  :data:`DRAWS`
draws from the fixed :data:`SEED`, the same for every :math:`\delta` and both shifts
(common random numbers), make the power a deterministic function of :math:`\delta` and
the MDD one of the data; the Monte-Carlo SE of a power near 0.8 is 0.009.

:func:`clustered_mdd` is the larger of the two shifts' MDDs, each the first :math:`\delta`
whose power reaches :math:`1-\beta`, searched from the normal-theory guess
:math:`(z_{1-\alpha_i/2} + z_{1-\beta})\widehat{SE}` in steps of 1.5 times (at most 1/16)
and interpolated to 0.1 %; ``inf`` where no :math:`\delta < 1` reaches it with either.
**Its floor** (issue 63): the assurance is an expected power, and a data set whose spread came
out small gets an MDD at which its true power is far under it (issue 63's referee: at 28
questions only 82 % of data sets had power 0.50 or more at theirs).  So the MDD is at least the :math:`\delta` whose power is 0.50 with the spread
fixed at the variance's 90 % upper limit, :math:`s^2\nu/\chi^2_{\nu,0.1}` (:data:`FLOOR`):
where :math:`s^2` is :math:`\sigma^2\chi^2_\nu/\nu`, the true variance lies under that limit
in 90 % of data sets, and in those the power at the MDD is at least 0.50.  It binds with few
texts (8 questions in 5 texts: 30.2 points where the shifts give 26.0) and seldom from 13 on.
The residuals are kept whole at every :math:`\delta`, also where accuracies near 0 or 1
would bound them: that overstates the spread of large shifts, so a large MDD errs long.
``bench/clustered_mdd_power.py`` checks the MDD against an independent generator (its
table and what it does not reach: docs/comparisons.md).

References
----------
.. [1] A. O'Hagan, J. W. Stevens and M. J. Campbell, "Assurance in clinical trial
   design", Pharmaceutical Statistics 4(3), 187–201, 2005.
.. [2] D. G. Bonett, "Approximate confidence interval for standard deviation of nonnormal
   distributions", Computational Statistics & Data Analysis 50(3), 775–782, 2006.
.. [3] C. A. Field and A. H. Welsh, "Bootstrapping clustered data", Journal of the Royal
   Statistical Society B 69(3), 369–390, 2007.
.. [4] I. A. Canay, J. P. Romano and A. M. Shaikh, "Randomization tests under an
   approximate symmetry assumption", Econometrica 85(3), 1013–1030, 2017.
.. [5] B. F. Arnold, D. R. Hogan, J. M. Colford and A. E. Hubbard, "Simulation methods
   to estimate design power: an overview for applied research", BMC Medical Research
   Methodology 11:94, 2011.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from enade_bench.metrics.clustered import cluster_labels, cluster_se
from enade_bench.metrics.paired import SE_ZERO

__all__ = [
    "DRAWS",
    "SEED",
    "SHIFTS",
    "ClusteredAlternative",
    "clustered_mdd",
    "clustered_mdd_range",
    "shift_mdds",
]

#: Monte-Carlo draws of a clustered pair's power (SE 0.009 near 0.8).
DRAWS = 2000
#: Their seed: the same draws for every pair and every delta.
SEED = 20080914
#: The two alternatives (module docstring).
SHIFTS = ("location", "logit")
#: The MDD's floor: power at least 0.50 where the variance is at its 90 % upper limit, the one at which the
#: observed variance is the 10 % quantile of its sampling distribution (module docstring).
FLOOR = (0.5, 0.1)


class ClusteredAlternative:
    r"""The alternatives of a clustered pair (module docstring), drawn once for every :math:`\delta`.

    Parameters
    ----------
    d
        The observed question differences.
    clusters
        Each question's cluster (``None``: each question its own).
    bases, records
        Each question's pooled score :math:`(a_i + b_i)/2` and its records per model (one
        number for every question, or one per question),
        for the logit shift (``None``: every question at 1/2, where it is the location shift).
    draws, seed
        Monte-Carlo draws and their seed.
    spread
        A fixed factor :math:`k` on the residual sums instead of the posterior's draws (the
        MDD's range, :func:`clustered_mdd_range`); ``None``: the posterior.
    """

    def __init__(
        self,
        d: npt.ArrayLike,
        clusters: Sequence[object] | None = None,
        bases: npt.ArrayLike | None = None,
        records: int | Sequence[int] = 1,
        draws: int = DRAWS,
        seed: int = SEED,
        spread: float | None = None,
    ) -> None:
        from scipy.special import logit  # noqa: PLC0415 (slow import)

        x = np.asarray(d, dtype=float)
        # clusters numbered in order of appearance, whatever their names: the same draws for the same data
        _, first, labels = np.unique(cluster_labels(clusters, x.size), return_index=True, return_inverse=True)
        self._labels = np.argsort(np.argsort(first))[labels.reshape(-1)]
        self.groups = int(self._labels.max()) + 1 if x.size else 0
        m = np.full(x.size, 0.5) if bases is None else np.asarray(bases, dtype=float)
        r = np.asarray(records, dtype=float)
        self._logits = logit((2 * r * m + 0.5) / (2 * r + 1))
        residual = (
            np.bincount(self._labels, x - x.mean(), self.groups).astype(float) if x.size else np.zeros(0)
        )
        self.spread_df = _spread_df(residual)
        self.draws = draws
        if not self.usable:
            return
        sizes = np.bincount(self._labels, minlength=self.groups).astype(float)
        rng = np.random.default_rng(seed)
        self._boot = rng.integers(self.groups, size=(draws, self.groups))
        sign = np.where(rng.random((draws, self.groups)) < 0.5, -1.0, 1.0)
        # the unbiased variance s^2 (1/(G-1)), not the resampled one (1/G), times the posterior's nu / chi2_nu
        posterior = self.spread_df / rng.chisquare(self.spread_df, draws) if spread is None else spread**2
        scale = np.sqrt(self.groups / (self.groups - 1) * posterior) * np.ones(draws)
        self._noise = scale[:, None] * sign * residual[self._boot]
        self._sizes = sizes[self._boot]
        self._n = self._sizes.sum(axis=1)
        # the location shift adds delta to every draw's mean and leaves its variance as it is
        self._mean0, self._var0 = _mean_var(self._noise, self._sizes, self._n)

    @property
    def usable(self) -> bool:
        """Two clusters whose residual sums are not all 0."""
        return self.groups >= 2 and self.spread_df > 0

    def shift(self, delta: float, kind: str) -> npt.NDArray[np.float64]:
        r"""Each question's shift :math:`\Delta_i` for a mean difference ``delta`` (``kind`` in :data:`SHIFTS`)."""
        from scipy.optimize import brentq  # noqa: PLC0415 (slow import)
        from scipy.special import expit  # noqa: PLC0415

        delta = min(abs(delta), 1.0)
        if kind == "location" or delta == 0.0:
            return np.full(self._logits.size, delta)
        if kind != "logit":
            raise ValueError(f"shift: expected one of {SHIFTS}, got {kind!r}")

        def moved(c: float) -> npt.NDArray[np.float64]:
            return np.asarray(expit(self._logits + c / 2) - expit(self._logits - c / 2))

        if delta >= float(np.mean(moved(200.0))):
            return moved(200.0)
        return moved(float(brentq(lambda c: float(np.mean(moved(c))) - delta, 0.0, 200.0, xtol=1e-10)))

    def power(self, delta: float, alpha: float, kind: str = "location") -> float:
        r"""Share of the draws at :math:`|\delta|` in which the clustered paired t rejects at ``alpha``.

        Examples
        --------
        >>> alt = ClusteredAlternative([0.2, -0.1, 0.0, 0.3, 0.0, 0.1] * 5, draws=500)
        >>> alt.power(0.0, 0.05) < 0.1 < 0.9 < alt.power(0.2, 0.05)
        True
        """
        from scipy import stats  # noqa: PLC0415 (slow import)

        if not self.usable:
            return math.nan
        if kind == "location":
            mean, var = self._mean0 + min(abs(delta), 1.0), self._var0
        else:
            moved = np.bincount(self._labels, self.shift(delta, kind), self.groups)[self._boot]
            mean, var = _mean_var(self._noise + moved, self._sizes, self._n)
        crit = float(stats.t.ppf(1 - alpha / 2, self.groups - 1)) ** 2
        return int(np.count_nonzero((mean * mean > crit * var) & (var > SE_ZERO**2))) / self.draws


def _mean_var(
    sums: npt.NDArray[np.float64], sizes: npt.NDArray[np.float64], n: npt.NDArray[np.float64]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Each draw's mean and CR1 variance of the mean from its clusters' sums and sizes (draws x G)."""
    g = sums.shape[1]
    mean = sums.sum(axis=1) / n
    return mean, g / (g - 1) * np.sum((sums - sizes * mean[:, None]) ** 2, axis=1) / n**2


def _spread_df(residual: npt.NDArray[np.float64]) -> float:
    r"""Effective df :math:`\nu` of the cluster-level variance (module docstring); 0 without spread."""
    g = residual.size
    second = float(np.sum(residual**2))
    if g < 2 or not second > (g * SE_ZERO) ** 2:
        return 0.0
    kurtosis = g * float(np.sum(residual**4)) / second**2
    return min(g - 1.0, 2 * (g - 1) / max(kurtosis - (g - 3) / g, 1e-9))


def _first_crossing(power_at: Callable[[float], float], target: float, start: float) -> float:
    """The smallest delta in (0, 1) whose power reaches ``target``, searched from ``start``; ``inf`` if none."""
    hi = min(max(start, 1e-4), 0.5)
    p_hi = power_at(hi)
    if p_hi >= target:
        lo, p_lo = hi / 1.5, power_at(hi / 1.5)
        while p_lo >= target and lo > 1e-6:
            hi, p_hi = lo, p_lo
            lo, p_lo = lo / 1.5, power_at(lo / 1.5)
        if p_lo >= target:
            return lo
    else:
        while p_hi < target:
            lo, p_lo = hi, p_hi
            hi = min(lo * 1.5, lo + 1 / 16)
            if hi >= 1:
                return math.inf
            p_hi = power_at(hi)
    while hi - lo > 1e-3 * hi:
        mid = lo + (hi - lo) * min(0.9, max(0.1, (target - p_lo) / (p_hi - p_lo)))
        p = power_at(mid)
        lo, p_lo, hi, p_hi = (lo, p_lo, mid, p) if p >= target else (mid, p, hi, p_hi)
    return hi


@functools.lru_cache(maxsize=8)
def _alternative(
    d: tuple[float, ...],
    clusters: tuple[str, ...] | None,
    bases: tuple[float, ...] | None,
    records: int | tuple[int, ...],
    draws: int,
    seed: int,
    spread: float | None = None,
) -> ClusteredAlternative:
    """A pair's alternative, kept for its next MDD (a comparison asks at alpha_i, then at alpha; the
    floor and the range's upper end share the spread at the variance's 90 % upper limit)."""
    return ClusteredAlternative(d, clusters, bases, records, draws, seed, spread)


def _cached(
    d: npt.ArrayLike,
    clusters: Sequence[object] | None,
    bases: npt.ArrayLike | None,
    records: int | Sequence[int],
    draws: int = DRAWS,
    seed: int = SEED,
    spread: float | None = None,
) -> ClusteredAlternative:
    """:func:`_alternative` of these data, as hashable tuples."""
    labels = None if clusters is None else tuple(str(c) for c in clusters)
    base = None if bases is None else tuple(np.asarray(bases, dtype=float).tolist())
    counts = records if isinstance(records, int) else tuple(int(r) for r in records)
    return _alternative(tuple(np.asarray(d, dtype=float).tolist()), labels, base, counts, draws, seed, spread)


def shift_mdds(
    d: npt.ArrayLike,
    clusters: Sequence[object] | None,
    alpha: float,
    power: float = 0.8,
    bases: npt.ArrayLike | None = None,
    records: int | Sequence[int] = 1,
    draws: int = DRAWS,
    seed: int = SEED,
    spread: float | None = None,
) -> dict[str, float]:
    r"""Each shift's MDD (:data:`SHIFTS`; parameters and values as :func:`clustered_mdd`;
    ``spread`` as :class:`ClusteredAlternative`)."""
    se, _ = cluster_se(d, clusters)
    return _mdds(_cached(d, clusters, bases, records, draws, seed, spread), se, alpha, power)


def _mdds(alternative: ClusteredAlternative, se: float, alpha: float, power: float) -> dict[str, float]:
    """Each shift's MDD under ``alternative`` (NaN for each where it is not usable)."""
    if not (alternative.usable and se > SE_ZERO):
        return dict.fromkeys(SHIFTS, math.nan)
    z = NormalDist().inv_cdf
    start = (z(1 - alpha / 2) + z(power)) * se
    return {
        kind: _first_crossing(functools.partial(alternative.power, alpha=alpha, kind=kind), power, start)
        for kind in SHIFTS
    }


def _limit_mdd(
    d: npt.ArrayLike,
    clusters: Sequence[object] | None,
    alpha: float,
    power: float,
    bases: npt.ArrayLike | None,
    records: int | Sequence[int],
    level: float,
) -> float:
    r"""The MDD (the larger shift's) with the spread fixed at the :math:`\sigma^2` whose sampling
    distribution puts the observed :math:`s^2` at its ``level`` quantile: residual sums times
    :math:`k = \sqrt{\nu/\chi^2_{\nu,\mathrm{level}}}` (:func:`clustered_mdd_range`)."""
    from scipy import stats  # noqa: PLC0415 (slow import)

    nu = _cached(d, clusters, bases, records).spread_df
    if not nu > 0:
        return math.nan
    spread = math.sqrt(nu / float(stats.chi2.ppf(level, nu)))
    return max(shift_mdds(d, clusters, alpha, power, bases, records, spread=spread).values())


def clustered_mdd_range(
    d: npt.ArrayLike,
    clusters: Sequence[object] | None,
    alpha: float,
    power: float = 0.8,
    bases: npt.ArrayLike | None = None,
    records: int | Sequence[int] = 1,
) -> tuple[float, float]:
    r"""The MDD at the 10 % and 90 % limits of its variance's sampling distribution.

    The observed cluster-level variance :math:`s^2` is :math:`\sigma^2\chi^2_\nu/\nu` (:math:`\nu`
    the effective df of :class:`ClusteredAlternative`, :math:`G-1` for normal text sums), so
    :math:`\sigma^2` lies in :math:`[s^2\nu/\chi^2_{\nu,0.9},\ s^2\nu/\chi^2_{\nu,0.1}]` with 80 %
    confidence; the range is the MDD of each limit taken as the true spread (residual sums times
    :math:`k = \sqrt{\nu/\chi^2_{\nu,q}}`, no averaging over the posterior), the larger of the two
    shifts' at each.  Parameters as :func:`clustered_mdd`; NaNs where it is NaN.

    Examples
    --------
    >>> d = [0.1, -0.2, 0.0, 0.3, 0.1, -0.1, 0.2, 0.0] * 5
    >>> [round(x, 3) for x in clustered_mdd_range(d, None, 0.05)]
    [0.062, 0.083]
    """
    return tuple(_limit_mdd(d, clusters, alpha, power, bases, records, q) for q in (0.9, 0.1))  # type: ignore[return-value]


def clustered_mdd(
    d: npt.ArrayLike,
    clusters: Sequence[object] | None,
    alpha: float,
    power: float = 0.8,
    bases: npt.ArrayLike | None = None,
    records: int | Sequence[int] = 1,
    draws: int = DRAWS,
    seed: int = SEED,
) -> float:
    r"""Minimum detectable difference of the clustered paired t test: the larger of the two shifts',
    and at least its floor (module docstring).

    Parameters
    ----------
    d
        The observed question differences.
    clusters
        Each question's cluster (``None``: each question its own).
    alpha
        The test's two-sided level :math:`\alpha_i`.
    power
        Target power.
    bases, records, draws, seed
        As :class:`ClusteredAlternative`.

    Returns
    -------
    float
        The MDD; NaN without two clusters or a standard error, ``inf`` when ``power`` is
        not reachable under either shift.

    Examples
    --------
    >>> d = [0.1, -0.2, 0.0, 0.3, 0.1, -0.1, 0.2, 0.0] * 5
    >>> round(clustered_mdd(d, None, 0.05), 3)
    0.071
    """
    assured = max(shift_mdds(d, clusters, alpha, power, bases, records, draws, seed).values())
    return max(assured, _limit_mdd(d, clusters, alpha, FLOOR[0], bases, records, FLOOR[1]))
