r"""Power of the clustered paired t under the alternative: a Monte-Carlo of the test's own statistic.

The alternative of :mod:`enade_bench.metrics.power` for a pair tested with the clustered
paired t on :math:`G-1` df (shuffles or samples per question, or shared texts): McNemar's
alternative there, with the observed differences' sizes and clusters.  Let :math:`d_i` be
the observed question differences in :math:`G` clusters, :math:`q` the share of questions with
:math:`d_i \ne 0` and :math:`\bar s` the mean of their :math:`|d_i|` (the size of a
disagreement; :math:`\bar s = 1` with binary records).  One draw of the alternative at
:math:`\delta`:

1. :math:`G` clusters drawn with replacement from the observed ones, each with its
   questions' :math:`d_i` (the cluster bootstrap [1]_: sizes, which questions disagree,
   how much, and how they go together within a cluster);
2. each drawn cluster's differences times a random sign :math:`\varepsilon_g = \pm 1`
   (the cluster sign change [2]_: no difference, and the observed within-cluster
   products :math:`d_i d_j`, so the observed design effect);
3. more questions disagree where :math:`\delta` needs it: the share becomes
   :math:`\psi(\delta) = \min\{1, \max(q, \delta/\bar s)\}`, a question with
   :math:`d_i = 0` disagreeing with probability :math:`(\psi - q)/(1 - q)`, by a size
   drawn from the observed :math:`|d_i| \ne 0`, with a random sign;
4. past :math:`\delta > \bar s` (every question disagrees) the sizes grow toward 1,
   :math:`|d| \mapsto 1 - (1 - |d|)(1-\delta)/(1-\bar s)`;
5. each negative difference turns positive with probability
   :math:`f = \delta / E|d'|`, :math:`E|d'| = \psi\bar s` (or :math:`\delta` past
   :math:`\bar s`), so that :math:`E\,d' = \delta`.

With binary records this is McNemar's alternative (:math:`P(d' = 1) =
\psi(1+f)/2 = (\psi+\delta)/2`).  The power is the share of draws in which the pair's
own test rejects: :math:`|\bar d'| > t_{G-1,\,1-\alpha_i/2}\,\widehat{SE}_{CR1}` with
the draw's :func:`~enade_bench.metrics.clustered.cluster_se` (a draw whose SE is 0, up to
rounding, has no test and does not reject).  It is a Monte-Carlo of the test's own
statistic [3]_ [4]_ and not the noncentral t: the noncentral t is exact for normal differences, and these
are a mixture with an atom at 0 (most questions agree) that is one-sided past
:math:`\delta = q\bar s`; its sample SD falls as its mean rises, and at 8 and 28
questions the t test had 0.89 and 0.90 power at the noncentral t's "80 %" MDD (with the
observed design effect, the previous version of :mod:`enade_bench.metrics.power`).  The clustered t's
distribution under such a mixture, with unequal clusters, has no closed form; the
simulation is exact up to its Monte-Carlo error.  :data:`DRAWS` draws from the fixed
:data:`SEED`, the same for every :math:`\delta` (common random numbers), make the power
a deterministic step function of :math:`\delta` and the MDD a deterministic function
of the data; the Monte-Carlo SE of a power near 0.8 is 0.009.

Like Lachin's McNemar power [5]_, which holds the discordance fixed, the alternative holds the
observed sizes of the differences and turns them in one model's favour; where those are
small (close models scored over many shuffles) a difference up to their mean size is
realised as most questions favouring one model a little, which the t sees easily, so the
MDD can be below :math:`(t_{G-1,\,1-\alpha_i/2} + z_{1-\beta})\widehat{SE}`.

:func:`clustered_mdd` searches from the normal-theory guess
:math:`(z_{1-\alpha_i/2} + z_{1-\beta})\widehat{SE}`, in steps of 1.5 times (at most 1/16),
for the first :math:`\delta` whose power reaches :math:`1-\beta`, then interpolates to
0.1 %; ``inf`` where no :math:`\delta < 1` reaches it.

References
----------
.. [1] C. A. Field and A. H. Welsh, "Bootstrapping clustered data", Journal of the Royal
   Statistical Society B 69(3), 369–390, 2007.
.. [2] I. A. Canay, J. P. Romano and A. M. Shaikh, "Randomization tests under an
   approximate symmetry assumption", Econometrica 85(3), 1013–1030, 2017.
.. [3] B. F. Arnold, D. R. Hogan, J. M. Colford and A. E. Hubbard, "Simulation methods
   to estimate design power: an overview for applied research", BMC Medical Research
   Methodology 11:94, 2011.
.. [4] S. Landau and D. Stahl, "Sample size and power calculations for medical studies
   by simulation when closed form expressions are not available", Statistical Methods
   in Medical Research 22(3), 324–345, 2013.
.. [5] J. M. Lachin, "Power and sample size evaluation for the McNemar test with
   application to matched case-control studies", Statistics in Medicine 11(9),
   1239–1251, 1992.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from enade_bench.metrics.clustered import cluster_labels, cluster_se
from enade_bench.metrics.paired import SE_ZERO

__all__ = ["DRAWS", "SEED", "ClusteredAlternative", "clustered_mdd"]

#: Monte-Carlo draws of a clustered pair's power (SE 0.009 near 0.8).
DRAWS = 2000
#: Their seed: the same draws for every pair and every delta.
SEED = 20080914
#: Question slots per block of draws (memory: about 24 bytes a slot).
_BLOCK = 1 << 20


@dataclass(frozen=True)
class _Block:
    """Some draws of the alternative, as uniforms and sizes per question slot (module docstring)."""

    size: npt.NDArray[np.float64]  # |d| of the slot's question, or the size it takes if it disagrees
    active: npt.NDArray[np.float32]  # disagrees when < the step-3 probability (-1: always)
    positive: npt.NDArray[np.float32]  # positive when < f (-1: always, after the cluster's sign)
    cluster: npt.NDArray[np.intp]  # each slot's drawn cluster (draw x G + g)
    sizes: npt.NDArray[np.float64]  # questions per drawn cluster, draws x G
    n: npt.NDArray[np.float64]  # questions per draw


class ClusteredAlternative:
    r"""The alternative of a clustered pair (module docstring), drawn once for every :math:`\delta`.

    Parameters
    ----------
    d
        The observed question differences.
    clusters
        Each question's cluster (``None``: each question its own).
    draws, seed
        Monte-Carlo draws and their seed.
    """

    def __init__(self, d: npt.ArrayLike, clusters: Sequence[object] | None = None, draws: int = DRAWS,
                 seed: int = SEED) -> None:  # fmt: skip
        x = np.asarray(d, dtype=float)
        # clusters numbered in order of appearance, whatever their names: the same draws for the same data
        _, first, labels = np.unique(cluster_labels(clusters, x.size), return_index=True, return_inverse=True)
        labels = np.argsort(np.argsort(first))[labels]
        order = np.argsort(labels, kind="stable")
        x, labels = x[order], labels[order]
        self.groups = int(labels.max()) + 1 if x.size else 0
        pool = np.abs(x[x != 0])
        self.share = pool.size / x.size if x.size else 0.0
        self.mean_size = float(pool.mean()) if pool.size else 0.0
        self.draws = draws
        self._blocks: list[_Block] = []
        if not self.usable:
            return
        sizes = np.bincount(labels, minlength=self.groups)
        starts = np.cumsum(sizes) - sizes
        rng = np.random.default_rng(seed)
        per_block = max(1, _BLOCK // x.size)
        for done in range(0, draws, per_block):
            boot = rng.integers(self.groups, size=(min(per_block, draws - done), self.groups))
            self._blocks.append(_draw(x, sizes, starts, pool, boot, rng))

    @property
    def usable(self) -> bool:
        """Two clusters and a question on which the models disagree."""
        return self.groups >= 2 and self.share > 0

    def power(self, delta: float, alpha: float) -> float:
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
        delta, q, s = min(abs(delta), 1.0), self.share, self.mean_size
        psi = min(1.0, max(q, delta / s))
        new = (psi - q) / (1 - q) if q < 1 else 0.0
        grow = (1 - delta) / (1 - s) if delta > s else 1.0  # step 4: s < delta <= 1
        switch = delta / (psi * s) if delta <= s else 1.0
        g = self.groups
        crit = float(stats.t.ppf(1 - alpha / 2, g - 1)) ** 2
        rejected = 0
        for b in self._blocks:
            size = b.size if grow == 1.0 else 1 - (1 - b.size) * grow
            value = size * ((b.positive < switch) * 2.0 - 1.0) * (b.active < new)
            sums = value if b.cluster.size == b.sizes.size else np.bincount(b.cluster, value, b.sizes.size)
            sums = sums.reshape(b.sizes.shape)
            mean = sums.sum(axis=1) / b.n
            var = g / (g - 1) * np.sum((sums - b.sizes * mean[:, None]) ** 2, axis=1) / b.n**2
            rejected += int(np.count_nonzero((mean * mean > crit * var) & (var > SE_ZERO**2)))
        return rejected / self.draws


def _draw(x: npt.NDArray[np.float64], sizes: npt.NDArray[np.intp], starts: npt.NDArray[np.intp],
          pool: npt.NDArray[np.float64], boot: npt.NDArray[np.int64], rng: np.random.Generator) -> _Block:  # fmt: skip
    """One block of draws: steps 1–3 and 5's uniforms for the clusters ``boot`` (draws x G)."""
    count = sizes[boot].reshape(-1)
    cluster = np.repeat(np.arange(count.size), count)
    value = x[np.repeat(starts[boot.reshape(-1)] - np.cumsum(count) + count, count) + np.arange(cluster.size)]
    flip = (rng.random(count.size) < 0.5)[cluster]  # step 2
    zero = value == 0
    uniform = rng.random((3, value.size), dtype=np.float32)
    negative = ((value < 0) ^ flip) | (zero & (uniform[0] < 0.5))  # step 3's random sign
    size = np.abs(value)
    size[zero] = pool[rng.integers(pool.size, size=int(np.count_nonzero(zero)))]
    active, positive = uniform[1], uniform[2]
    active[~zero] = -1.0
    positive[~negative] = -1.0
    per_draw = count.reshape(boot.shape).astype(float)
    return _Block(size, active, positive, cluster, per_draw, per_draw.sum(axis=1))


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


@functools.lru_cache(maxsize=2)
def _alternative(
    d: tuple[float, ...], clusters: tuple[str, ...] | None, draws: int, seed: int
) -> ClusteredAlternative:
    """A pair's alternative, kept for its next MDD (a comparison asks at alpha_i, then at alpha)."""
    return ClusteredAlternative(d, clusters, draws, seed)


def clustered_mdd(d: npt.ArrayLike, clusters: Sequence[object] | None, alpha: float, power: float = 0.8,
                  draws: int = DRAWS, seed: int = SEED) -> float:  # fmt: skip
    r"""Minimum detectable difference of the clustered paired t test, under the alternative.

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
    draws, seed
        The Monte-Carlo's draws and seed (:class:`ClusteredAlternative`).

    Returns
    -------
    float
        The MDD; NaN without two clusters, a disagreement or a standard error, ``inf`` when
        ``power`` is not reachable.

    Examples
    --------
    >>> d = [0.1, -0.2, 0.0, 0.3, 0.1, -0.1, 0.2, 0.0] * 5
    >>> round(clustered_mdd(d, None, 0.05), 3)
    0.067
    """
    se, _ = cluster_se(d, clusters)
    labels = None if clusters is None else tuple(str(c) for c in clusters)
    alternative = _alternative(tuple(np.asarray(d, dtype=float).tolist()), labels, draws, seed)
    if not (alternative.usable and se > SE_ZERO):
        return math.nan
    z = NormalDist().inv_cdf
    start = (z(1 - alpha / 2) + z(power)) * se
    return _first_crossing(lambda delta: alternative.power(delta, alpha), power, start)
