r"""The score-ordered exact unconditional test of two paired proportions, and its interval.

With one binary record per question, :math:`n` questions, :math:`b = n_{10}` (A right, B
wrong), :math:`c = n_{01}` and :math:`\delta = p_{10} - p_{01}`, McNemar's score test
(:func:`~enade_bench.metrics.paired.mcnemar_score_test`) refers
:math:`T(0) = (b-c)/\sqrt{b+c}` to the normal distribution; its actual size, maximised over
the discordance, exceeds the nominal 5 % at every :math:`n` (0.070 at 8 questions, 0.053 at
10, 0.056 at 28, 0.065 at 50, 0.057 at 100: ``bench/paired_exact_size.py``).  The exact unconditional
test (Suissa & Shuster 1991) keeps the same ordering of the tables, Tango's score statistic
:math:`T(\delta_0)` (:mod:`enade_bench.metrics.paired_score`), and takes its tail
probability at its worst over the nuisance parameter :math:`q = p_{01}`, in the trinomial
model of :math:`(b, c, n-b-c)` with :math:`p_{10} = q + \delta_0`:

.. math::

    P_U(\delta_0) = \max_{q}\ P_{\delta_0, q}\bigl(T(\delta_0) \ge t_{obs}(\delta_0)\bigr),
    \qquad
    P_L(\delta_0) = \max_{q}\ P_{\delta_0, q}\bigl(T(\delta_0) \le t_{obs}(\delta_0)\bigr),

:math:`q \in [\max(0, -\delta_0), (1-\delta_0)/2]`, each a valid p-value at every
:math:`q`, so the test never exceeds its level.  The two-sided p-value of
:math:`H_0: \delta = 0` is :math:`p = \min\{1, 2\min(P_U(0), P_L(0))\}` (under
:math:`\delta = 0` the trinomial is symmetric in :math:`b, c`, so this is also
:math:`\max_q P_q(|T(0)| \ge |t_{obs}|)`), and the :math:`1-\alpha` interval is Tang, Tang
& Chan's (2005): the smallest interval that holds every :math:`\delta_0` with
:math:`P_U(\delta_0) \ge \alpha/2` and :math:`P_L(\delta_0) \ge \alpha/2` (its outermost
crossings: that set can have holes, where the ordering of the tables changes with
:math:`\delta_0`; a limit at a tie of the ordering is resolved exactly, :func:`_limit`).  Test and
interval are the same statistic's inversion, so :math:`p < \alpha` exactly when the interval
excludes 0 (the tests check it at 8-50 questions and three levels).

The maximum over :math:`q` is taken on a grid of :data:`GRID` points (the end points
included); the tail probabilities are computed for every table at once (numpy over the
:math:`(n+1)(n+2)/2` tables), and each :math:`n`'s p-values at :math:`\delta_0 = 0` are
kept (:func:`exact_pvalues`), which the power under the alternative uses
(:mod:`enade_bench.metrics.power`).

The enumeration grows as :math:`n^2`; above :data:`SWITCH_N` questions the comparison uses
the score test with Tango's interval (:mod:`enade_bench.metrics.paired`), whose actual
size at 101 questions is 0.053 (``bench/paired_exact_size.py`` with the score test's
rejection region; docs/comparisons.md).

References
----------
.. [1] S. Suissa and J. J. Shuster, "The 2 x 2 matched-pairs trial: exact unconditional
   design and analysis", Biometrics 47(2), 361–372, 1991.
.. [2] R. L. Berger and K. Sidik, "Exact unconditional tests for a 2 x 2 matched-pairs
   design", Statistical Methods in Medical Research 12(2), 91–108, 2003.
.. [3] M.-L. Tang, N.-S. Tang and I. S. F. Chan, "Confidence interval construction for
   proportion difference in small-sample paired studies", Statistics in Medicine 24(23),
   3565–3579, 2005 (the exact unconditional interval that inverts the score test).
.. [4] M. W. Fagerland, S. Lydersen and P. Laake, "The McNemar test for binary
   matched-pairs data: mid-p and asymptotic are better than exact conditional", BMC
   Medical Research Methodology 13:91, 2013.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import numpy.typing as npt

__all__ = [
    "GRID",
    "SWITCH_N",
    "exact_interval",
    "exact_pvalue",
    "exact_pvalues",
    "score_statistics",
    "table_probabilities",
    "tables",
]

#: Up to this many questions the comparison uses the exact unconditional test; above, the score test.
SWITCH_N = 100
#: Points of the grid over the nuisance parameter :math:`q` (and of its refinement near the maximum).
GRID = 200
_REFINE = 41
#: Points of the grid over :math:`q` for every table's p-value at once (:func:`exact_pvalues`).
TABLE_GRID = 2000
#: Two statistics closer than this are the same value (ties of the ordering).
_TIE = 1e-10
#: Points of the scan for a limit's outermost crossing, and the width it is bisected to.
_SCAN = 17
_WIDTH = 1e-9

FloatArray = npt.NDArray[np.float64]


@lru_cache(maxsize=256)
def tables(n: int) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Every trinomial table of ``n`` questions: ``b``, ``c`` and :math:`\\log n!/(b!\\,c!\\,(n-b-c)!)`."""
    from scipy.special import gammaln  # noqa: PLC0415 (slow import)

    b, c = np.array([(i, j) for i in range(n + 1) for j in range(n + 1 - i)], dtype=float).reshape(-1, 2).T
    return b, c, gammaln(n + 1) - gammaln(b + 1) - gammaln(c + 1) - gammaln(n - b - c + 1)


def score_statistics(b: FloatArray, c: FloatArray, n: int, delta0: float) -> FloatArray:
    r"""Tango's :math:`T(\delta_0)` for arrays of tables (:func:`~enade_bench.metrics.paired_score.tango_statistic`)."""
    big_b = -b - c + (2 * n - b + c) * delta0
    big_c = -c * delta0 * (1 - delta0)
    q = (-big_b + np.sqrt(np.maximum(0.0, big_b * big_b - 8 * n * big_c))) / (4 * n)
    var = n * (2 * q + delta0 * (1 - delta0))
    num = b - c - n * delta0
    with np.errstate(divide="ignore", invalid="ignore"):
        t = num / np.sqrt(np.where(var > 0, var, 1.0))
        infinite = np.where(num == 0, 0.0, np.sign(num) * np.inf)
    return np.where(var > 0, t, infinite).astype(float)


def _nuisance(delta0: float, grid: int = GRID) -> FloatArray:
    """The grid over :math:`q = p_{01}`: :math:`[\\max(0, -\\delta_0), (1 - \\delta_0)/2]`."""
    return np.linspace(max(0.0, -delta0), (1 - delta0) / 2, grid)


def _pmf(
    rows: npt.NDArray[np.bool_] | npt.NDArray[np.intp], n: int, delta0: float, q: FloatArray
) -> FloatArray:
    """Trinomial probabilities of the tables ``rows`` (rows) at each ``q`` (columns).

    One matrix product: :math:`[\\log\\text{coef}, b, c, n-b-c] \\cdot
    [1, \\log p_{10}, \\log q, \\log p_{00}]^\\top`, a zero probability's log
    taken as :math:`-10^{10}` so that a zero count times it stays 0.
    """
    b, c, coef = (x[rows] for x in tables(n))
    probs = np.vstack([q + delta0, q, 1.0 - 2 * q - delta0])
    with np.errstate(divide="ignore"):
        logs = np.where(probs > 0, np.log(np.clip(probs, 1e-300, 1.0)), -1e10)
    design = np.column_stack([coef, b, c, n - b - c])
    return np.exp(design @ np.vstack([np.ones(q.size), logs]))


def table_probabilities(n: int, p10: float, p01: float) -> FloatArray:
    """Trinomial probability of every table of :func:`tables` (``n``) at :math:`(p_{10}, p_{01})`."""
    return _pmf(np.arange(tables(n)[0].size), n, p10 - p01, np.array([p01]))[:, 0]


def _tail(b: int, c: int, n: int, delta0: float, side: int) -> float:
    """:math:`P_U(\\delta_0)` (``side`` 1) or :math:`P_L(\\delta_0)` (``side`` -1) of the observed table.

    The maximum over :math:`q`: the best of :data:`GRID` points, then a finer grid of
    :data:`GRID` points between its two neighbours.
    """
    bs, cs, _ = tables(n)
    t = score_statistics(bs, cs, n, delta0)
    observed = float(score_statistics(np.array([float(b)]), np.array([float(c)]), n, delta0)[0])
    rows = t >= observed - _TIE if side > 0 else t <= observed + _TIE
    few = 2 * int(np.count_nonzero(rows)) <= rows.size  # else the complement's sum, the cheaper one

    def total(q: FloatArray) -> FloatArray:
        return _pmf(rows, n, delta0, q).sum(axis=0) if few else 1.0 - _pmf(~rows, n, delta0, q).sum(axis=0)

    q = _nuisance(delta0)
    coarse = total(q)
    k = int(np.argmax(coarse))
    fine = np.linspace(q[max(k - 1, 0)], q[min(k + 1, q.size - 1)], _REFINE)
    return min(1.0, float(max(coarse[k], total(fine).max())))


@lru_cache(maxsize=65536)
def exact_pvalue(b: int, c: int, n: int) -> float:
    """Two-sided p-value of the exact unconditional score test of :math:`\\delta = 0`.

    Parameters
    ----------
    b, c
        Discordant counts: questions only A got right (``b``), only B (``c``).
    n
        Questions compared.

    Returns
    -------
    float
        :math:`\\min\\{1, 2\\min(P_U(0), P_L(0))\\}`.

    Examples
    --------
    Fagerland, Lydersen & Laake (2013), Bentur et al. (2009): 1, 1, 7, 12; they publish
    0.035 for the exact unconditional test.

    >>> round(exact_pvalue(1, 7, 21), 3)
    0.035
    >>> round(exact_pvalue(4, 0, 8), 4)  # the score test's p here is 0.0455
    0.0703
    """
    upper, lower = _tail(b, c, n, 0.0, 1), _tail(b, c, n, 0.0, -1)
    return min(1.0, 2 * min(upper, lower))


@lru_cache(maxsize=128)
def exact_pvalues(n: int) -> FloatArray:
    """:func:`exact_pvalue` of every table of :func:`tables` (``n``), all at once.

    The tables sorted by :math:`T(0)`; each column (a value of :math:`q`) summed from the
    top and from the bottom gives every table's two tails.
    """
    b, c, _ = tables(n)
    t = score_statistics(b, c, n, 0.0)
    order = np.argsort(t, kind="stable")
    ts = t[order]
    pmf = _pmf(order, n, 0.0, _nuisance(0.0, TABLE_GRID))
    below = np.vstack([np.zeros(pmf.shape[1]), np.cumsum(pmf, axis=0)])  # P(T < ts[k]) at row k
    above = np.vstack([np.cumsum(pmf[::-1], axis=0)[::-1], np.zeros(pmf.shape[1])])  # P(T >= ts[k])
    upper = above[np.searchsorted(ts, t - _TIE, side="left")].max(axis=1)
    lower = below[np.searchsorted(ts, t + _TIE, side="right")].max(axis=1)
    return np.minimum(1.0, 2 * np.minimum(np.minimum(upper, 1.0), np.minimum(lower, 1.0)))


def _limit(b: int, c: int, n: int, half: float, side: int) -> float:
    r"""One limit: the outermost ``delta0`` on ``side`` (-1 or 1) of the estimate whose tail on the
    other side is at least ``half`` (accepted).

    The accepted set need not be an interval (the ordering of the tables changes with
    :math:`\delta_0`, and the tail jumps where it does: (11, 2, 15) accepts 0.1222-0.1261, rejects
    0.1261-0.1288, accepts from there).  A scan of :data:`_SCAN` points from the end of the range
    toward the estimate finds the outermost accepted point, a second scan as fine between it and
    the rejected point before it (a resolution of 1/256 of the range) the outermost accepted one
    there, and Brent's method the crossing between those two, to :data:`_WIDTH`.  0 is scanned
    exactly where it lies in the range: a crossing within :data:`_WIDTH` of 0 at which 0 is
    accepted is 0 itself (a tie of the ordering, where the tail jumps), so that the limit holds 0
    exactly when the p-value does not reject.
    """
    from scipy.optimize import brentq  # noqa: PLC0415 (slow import)

    def excess(delta0: float) -> float:
        return _tail(b, c, n, delta0, -side) - half

    def first_accepted(start: float, stop: float) -> int:
        grid = np.linspace(start, stop, _SCAN)
        if min(start, stop) < 0.0 < max(start, stop):  # 0 exactly, where it lies in the range
            grid = np.sort(np.r_[grid, 0.0])[:: 1 if stop > start else -1]
        points.append(grid)
        return next((k for k, x in enumerate(grid) if excess(float(x)) >= 0), len(grid) - 1)

    points: list[FloatArray] = []
    end = float(side)
    if excess(end) >= 0:
        return end
    k = first_accepted(end, (b - c) / n)
    k = first_accepted(float(points[0][k - 1]), float(points[0][k]))
    out, inside = float(points[1][k - 1]), float(points[1][k])
    root = float(brentq(excess, out, inside, xtol=_WIDTH / 4))
    inside = next((x for x in (root, root - side * _WIDTH / 2) if excess(x) >= 0), inside)
    if abs(inside) <= _WIDTH and excess(0.0) >= 0:  # a tie at 0: 0 is accepted, so it is the limit
        return 0.0
    return inside


@lru_cache(maxsize=65536)
def exact_interval(b: int, c: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Tang, Tang & Chan's exact unconditional interval of :math:`(b - c)/n` (module docstring).

    Parameters
    ----------
    b, c
        Discordant counts.
    n
        Questions compared.
    confidence
        Coverage :math:`1 - \\alpha`.

    Returns
    -------
    tuple of float
        ``(low, high)``; ``(nan, nan)`` for ``n = 0``.

    Examples
    --------
    >>> [round(x, 3) for x in exact_interval(4, 0, 8)]  # p = 0.070: the interval holds 0
    [-0.053, 0.843]
    """
    if n <= 0:
        return math.nan, math.nan
    half = (1 - confidence) / 2
    low = -1.0 if b - c == -n else _limit(b, c, n, half, -1)
    high = 1.0 if b - c == n else _limit(b, c, n, half, 1)
    return low, high
