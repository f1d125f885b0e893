r"""Tango's score interval for the difference of two paired proportions.

For :math:`n` questions answered by models A and B, let :math:`b = n_{10}` (A right,
B wrong) and :math:`c = n_{01}` the discordant counts, and
:math:`\delta = p_{10} - p_{01}` the difference of accuracies, estimated by
:math:`\hat\delta = (b - c)/n`.  Tango (1998) inverts the score test of
:math:`H_0: \delta = \delta_0`:

.. math::

    T(\delta_0) = \frac{b - c - n\delta_0}
                       {\sqrt{n\,\bigl(2\tilde q + \delta_0(1 - \delta_0)\bigr)}},

where :math:`\tilde q` is the maximum likelihood estimate of :math:`p_{01}` under
:math:`H_0`, the root of :math:`2n q^2 + B q + C = 0` with
:math:`B = -b - c + (2n - b + c)\,\delta_0` and :math:`C = -c\,\delta_0(1 - \delta_0)`:

.. math::

    \tilde q = \frac{-B + \sqrt{B^2 - 8nC}}{4n}.

The :math:`1-\alpha` interval is :math:`\{\delta_0 : |T(\delta_0)| \le z_{1-\alpha/2}\}`;
:math:`T` decreases in :math:`\delta_0`, so each limit is one root.  At
:math:`\delta_0 = 0`, :math:`T = (b - c)/\sqrt{b + c}`: McNemar's (1947) asymptotic
statistic.  Unlike the conditional exact interval (Clopper–Pearson on the discordant
questions, carried through :math:`n_d/n`), the limits are not capped at the share of
discordant questions: with :math:`b = 5, c = 0, n = 30` the difference is
:math:`+16.7` points and the conditional interval's upper limit is :math:`+16.7` too,
while Tango's is above it (Newcombe 1998 calls the conditional interval "effectively
only one-sided").  Fagerland, Lydersen & Laake (2014) recommend Tango's interval for
paired proportions.

References
----------
.. [1] T. Tango, "Equivalence test and confidence interval for the difference in
   proportions for the paired-sample design", Statistics in Medicine 17(8), 891–908, 1998.
.. [2] R. G. Newcombe, "Improved confidence intervals for the difference between binomial
   proportions based on paired data", Statistics in Medicine 17(22), 2635–2650, 1998.
.. [3] M. W. Fagerland, S. Lydersen and P. Laake, "Recommended tests and confidence
   intervals for paired binomial proportions", Statistics in Medicine 33(16), 2850–2875,
   2014; worked example (Cavo et al. 2012) also in their *Statistical Analysis of
   Contingency Tables*, CRC, 2017, ch. 8.
"""

from __future__ import annotations

import math
from statistics import NormalDist

__all__ = ["tango_interval", "tango_statistic"]


def tango_statistic(b: int, c: int, n: int, delta0: float) -> float:
    r"""Tango's score statistic :math:`T(\delta_0)` (module docstring).

    Examples
    --------
    >>> round(tango_statistic(6, 16, 161, 0.0), 3)  # McNemar's asymptotic z
    -2.132
    """
    a2 = 2 * n
    big_b = -b - c + (2 * n - b + c) * delta0
    big_c = -c * delta0 * (1 - delta0)
    q = (-big_b + math.sqrt(max(0.0, big_b * big_b - 4 * a2 * big_c))) / (2 * a2)
    var = n * (2 * q + delta0 * (1 - delta0))
    num = b - c - n * delta0
    if var <= 0:
        return math.copysign(math.inf, num) if num else 0.0
    return num / math.sqrt(var)


def _root(b: int, c: int, n: int, target: float) -> float:
    """The ``delta0`` in (-1, 1) with ``T(delta0) = target`` (``T`` decreases), by bisection."""
    low, high = -1.0, 1.0
    for _ in range(200):
        mid = (low + high) / 2
        if tango_statistic(b, c, n, mid) > target:
            low = mid
        else:
            high = mid
        if high - low < 1e-13:
            break
    return (low + high) / 2


def tango_interval(b: int, c: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Tango's score interval of the paired difference :math:`(b - c)/n`.

    Parameters
    ----------
    b, c
        Discordant counts: questions only A got right (``b``), only B (``c``).
    n
        Questions compared (concordant ones included).
    confidence
        Coverage of the interval.

    Returns
    -------
    tuple of float
        ``(low, high)`` on the difference scale (``-1`` to ``1``); ``(nan, nan)`` for
        ``n = 0``.

    Examples
    --------
    Fagerland, Lydersen & Laake (2014), Cavo et al. (2012): 59, 6, 16, 80.

    >>> low, high = tango_interval(6, 16, 161)
    >>> round(low, 4), round(high, 4)
    (-0.124, -0.0054)
    """
    if n <= 0:
        return math.nan, math.nan
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    low = -1.0 if b - c == -n else _root(b, c, n, z)
    high = 1.0 if b - c == n else _root(b, c, n, -z)
    return low, high
