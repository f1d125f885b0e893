r"""The sign-flip (randomisation) test on per-text sums of differences, and the interval that inverts it.

For a pair whose questions mix one binary record with repeated ones (shuffles or samples),
neither the exact unconditional test (one binary record per question, independent questions)
nor the clustered t keeps its size: on binary
differences the t's actual size is 0.082 at 8 questions (issue 63).  Let :math:`u_g` be the sum of
the differences :math:`d_i = a_i - b_i` over text :math:`g` (a question its own text when none is
declared), :math:`n_g` its questions, :math:`G` the texts and :math:`n = \sum n_g`.  Under the null
that the two models are exchangeable on each text (the two scores' joint distribution the same
with A and B swapped; with one binary record this is :math:`p_{10} = p_{01}`, the null of the
exact test), each :math:`u_g` is symmetric about 0 and independent of the others, so flipping the
signs of any set :math:`A` of texts gives a sum as likely as the one observed (Fisher 1935;
Pitman 1937).  With :math:`U_A = \sum_{g \in A} u_g` and :math:`N_A = \sum_{g \in A} n_g`, the
flipped sum exceeds the observed one exactly when :math:`U_A \le 0`, so over the :math:`R`
patterns (every :math:`A`, the empty one being the observed sum)

.. math::

    P_U(\delta_0) = \frac{\#\{A : U_A - \delta_0 N_A \le 0\}}{R}, \qquad
    P_L(\delta_0) = \frac{\#\{A : U_A - \delta_0 N_A \ge 0\}}{R}

are the one-sided p-values of :math:`\delta = \delta_0` (the sums :math:`u_g - n_g\delta_0`
flipped), :math:`p = \min\{1, 2\min(P_U(0), P_L(0))\}`, and, because :math:`U_A - \delta_0 N_A
\le 0` is :math:`m_A = U_A/N_A \le \delta_0`, :math:`P_U` is a step function that rises at the
subset means :math:`m_A`: the :math:`1-\alpha` interval, every :math:`\delta_0` with both tails at
least :math:`\alpha/2`, runs from the :math:`j`-th smallest subset mean to the :math:`j`-th largest
(Hartigan 1969), :math:`j` the fewest means with :math:`2(e + j)/R \ge \alpha` (:math:`e` the
empty patterns).  Test and interval are one computation: :math:`p < \alpha` exactly when the
interval excludes 0, and a limit at a tie is the tie (sums within :data:`TIE` of 0 are 0).
Texts alike in sum and size are exchangeable: flipping :math:`j` of a class of :math:`c` such texts
is one outcome of weight :math:`\binom{c}{j}`, so the enumeration runs over
:math:`\prod_k (c_k + 1)` outcomes, not :math:`2^G` (one binary record per question has at most
three classes of one question each besides the repeated ones).

Its size is at most :math:`\alpha` at every :math:`n` and every distribution of the
:math:`|u_g|` (given them, the signs are uniform over the :math:`2^G` patterns), which the tests
check by enumeration; the price is power: with one binary record per question and no texts it
is the exact conditional (sign) test.  Every pattern is enumerated (exact) up to
:data:`ENUMERATE` outcomes of the classes; above, :data:`DRAWS` seeded random patterns beside
the observed one, a Monte-Carlo test whose p-value :math:`(1 + \#)/(1 + R')` is itself of size at most :math:`\alpha` (Phipson & Smyth
2010), its Monte-Carlo error said in the pair's reason.  The smallest p-value is :math:`2/2^G`:
with :math:`2^{1-G} \ge \alpha` (5 texts or fewer at :math:`\alpha = 0.05`) no data reject, and
the pair is **not testable at this size**.

References
----------
.. [1] R. A. Fisher, *The Design of Experiments*, Oliver and Boyd, 1935, §21.
.. [2] E. J. G. Pitman, "Significance tests which may be applied to samples from any
   populations", Supplement to JRSS 4(1), 119–130, 1937.
.. [3] J. A. Hartigan, "Using subsample values as typical values", JASA 64(328), 1303–1317, 1969.
.. [4] B. Phipson and G. K. Smyth, "Permutation p-values should never be zero", Statistical
   Applications in Genetics and Molecular Biology 9(1), 39, 2010.
.. [5] I. A. Canay, J. P. Romano and A. M. Shaikh, "Randomization tests under an approximate
   symmetry assumption", Econometrica 85(3), 1013–1030, 2017 (sign changes of cluster sums).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from enade_bench.metrics.clustered import cluster_labels

__all__ = ["DRAWS", "ENUMERATE", "SEED", "SignFlip", "patterns", "signflip_interval", "signflip_pvalue"]

#: Outcomes up to which every sign pattern is enumerated (:math:`\prod_k (c_k + 1)`, module docstring).
ENUMERATE = 2**20
#: Random sign patterns above :data:`ENUMERATE` outcomes (the observed one besides), and their seed.
DRAWS = 2**16 - 1
SEED = 19350101
#: Subset sums within this of 0 are 0 (the differences are multiples of one over the records).
TIE = 1e-9

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class SignFlip:
    """A sign-flip test of :math:`\\delta = 0`: its p-value and how it was computed.

    Attributes
    ----------
    p_value
        Two-sided p-value.
    texts, patterns
        :math:`G` and the sign patterns counted (:math:`2^G`, or the observed one and :data:`DRAWS`).
    exact
        Every pattern enumerated (else Monte-Carlo, whose standard error is ``mc_se``).
    smallest_p
        The smallest p-value this many texts can give, :math:`2/R` (the test cannot reject below it).
    """

    p_value: float
    texts: int
    patterns: int
    exact: bool
    smallest_p: float

    @property
    def mc_se(self) -> float:
        r"""Monte-Carlo standard error of ``p_value``, twice a tail's binomial one,
        :math:`\sqrt{p(2-p)/R}` (0 when exact)."""
        return 0.0 if self.exact else math.sqrt(self.p_value * (2 - self.p_value) / self.patterns)


def patterns(groups: int, draws: int = DRAWS, seed: int = SEED) -> npt.NDArray[np.bool_]:
    """Random sign patterns as flipped sets :math:`A` (rows × texts): the observed one (no flip)
    and ``draws`` drawn from ``seed``."""
    drawn = np.random.default_rng(seed).random((draws, groups)) < 0.5
    return np.vstack([np.zeros((1, groups), dtype=bool), drawn])


@lru_cache(maxsize=4)
def _flipped(
    d: tuple[float, ...], clusters: tuple[str, ...] | None
) -> tuple[FloatArray, FloatArray, FloatArray, int]:
    """Each outcome's :math:`U_A`, :math:`N_A` and weight (patterns it stands for; the empty one
    first), and the texts: every class of alike texts enumerated up to :data:`ENUMERATE` outcomes,
    else :func:`patterns` (weight 1 each)."""
    x = np.asarray(d, dtype=float)
    labels = cluster_labels(clusters, x.size)
    sums, sizes = np.bincount(labels, x), np.bincount(labels).astype(float)
    sums[np.abs(sums) <= TIE] = 0.0
    classes, counts = np.unique(np.c_[np.round(sums, 9), sizes], axis=0, return_counts=True)
    if math.prod(int(c) + 1 for c in counts) <= ENUMERATE:
        u, n, w = np.zeros(1), np.zeros(1), np.ones(1)
        for (total, size), c in zip(classes, counts, strict=True):
            j = np.arange(int(c) + 1)
            u, n = (u[:, None] + j * total).ravel(), (n[:, None] + j * size).ravel()
            w = (w[:, None] * np.array([math.comb(int(c), int(k)) for k in j], dtype=float)).ravel()
    else:
        flips = patterns(sums.size).astype(float)
        u, n, w = flips @ sums, flips @ sizes, np.ones(len(flips))
    u[np.abs(u) <= TIE] = 0.0
    return u, n, w, sums.size


def _key(
    d: npt.ArrayLike, clusters: Sequence[object] | None
) -> tuple[tuple[float, ...], tuple[str, ...] | None]:
    values = tuple(np.asarray(d, dtype=float).tolist())
    return values, None if clusters is None else tuple(str(c) for c in clusters)


@lru_cache(maxsize=1024)
def _interval(
    d: tuple[float, ...], clusters: tuple[str, ...] | None, confidence: float
) -> tuple[float, float]:
    u, n, w, _ = _flipped(d, clusters)
    total, empty = w.sum(), w[n == 0].sum()
    order = np.argsort(u[n > 0] / n[n > 0], kind="stable")
    means, weights = (u[n > 0] / n[n > 0])[order], w[n > 0][order]
    # the fewest means with both tails accepted, in the test's own arithmetic (p >= alpha)
    if 2 * empty / total >= 1 - confidence:
        return -1.0, 1.0
    low = int(np.argmax(2 * (empty + np.cumsum(weights)) / total >= 1 - confidence))
    high = int(np.argmax(2 * (empty + np.cumsum(weights[::-1])) / total >= 1 - confidence))
    return float(means[low]), float(means[means.size - 1 - high])


def signflip_interval(
    d: npt.ArrayLike, clusters: Sequence[object] | None, confidence: float
) -> tuple[float, float]:
    r"""The :math:`1-\alpha` interval that inverts the sign-flip test: the :math:`j`-th smallest and
    largest subset means (module docstring); :math:`[-1, 1]` where no data reject.

    Examples
    --------
    >>> signflip_interval([1.0, 1.0, 1.0, 1.0, 1.0, 1.0], None, 0.95)  # 6 of 6: p = 2/64 < 0.05
    (1.0, 1.0)
    """
    return _interval(*_key(d, clusters), confidence)


def signflip_pvalue(d: npt.ArrayLike, clusters: Sequence[object] | None = None) -> SignFlip:
    r"""The sign-flip test of :math:`\delta = 0` on the texts' sums of ``d`` (module docstring).

    Parameters
    ----------
    d
        Each question's difference :math:`a_i - b_i`.
    clusters
        Each question's text (``None``: each question its own).

    Returns
    -------
    SignFlip

    Examples
    --------
    Eight binary differences, 5 for A and 0 for B: the sign test's :math:`2/2^5`.

    >>> r = signflip_pvalue([1, 1, 1, 1, 1, 0, 0, 0])
    >>> r.p_value, r.exact, r.texts
    (0.0625, True, 8)
    """
    u, _, w, groups = _flipped(*_key(d, clusters))
    total = w.sum()
    upper = w[u <= 0].sum() / total  # the flipped sum at least the observed one
    lower = w[u >= 0].sum() / total
    exact = total == 2.0**groups
    return SignFlip(float(min(1.0, 2 * min(upper, lower))), groups, int(total), bool(exact), 2 / total)
