r"""Two models' abilities on the same booklet: the θ difference over shuffles, its SE and test.

Each model answers one booklet :math:`K` times (option shuffles, or sampled runs); each
answer pattern has its EAP :math:`\hat\theta_{mk}`. The quantity compared is the
model's mean ability over its shuffle distribution, :math:`\mu_m = E_k\,\hat\theta_{mk}`,
on this booklet (the items are fixed, not a sample; the θ scale is INEP's). The
shuffles are the repeated measures and carry both the model's sensitivity to the
option order and the measurement error of each θ̂, so the between-shuffle variance
is the honest variance of a mean over shuffles; the per-pattern SEs of θ̂ are not
added again.

Two designs (``pairing``):

* ``"independent"`` (Welch): the two models' runs are independent samples.
  :math:`\hat d = \bar\theta_A - \bar\theta_B`,
  :math:`\widehat{SE}^2 = s_A^2/K_A + s_B^2/K_B`, Welch–Satterthwaite degrees of
  freedom (Welch 1947). Right when nothing ties run :math:`k` of A to run :math:`k`
  of B: e.g. the published ENEM runs, which differ by the sampling seed at
  temperature 0.6 with the options in their original order — a shared seed does
  not couple two different models' samples.
* ``"shuffle"`` (paired): run :math:`k` of both models saw the same option order
  (this project's shuffles are a function of the experiment seed, the question
  and :math:`k`, not of the model, so one study's models share them).
  :math:`d_k = \hat\theta_{Ak} - \hat\theta_{Bk}`, :math:`\hat d = \bar d`,
  :math:`\widehat{SE}^2 = s_d^2/K`, :math:`K - 1` degrees of freedom. The pairing
  removes what the order does to both models alike (e.g. a key moved to the
  letter both prefer).

With strata (e.g. the years of one area, each its own booklet), the difference is
the mean over the :math:`S` strata both models answered,
:math:`\hat d = S^{-1}\sum_s \hat d_s`, :math:`\widehat{SE}^2 = S^{-2}\sum_s
\widehat{SE}_s^2`, and the degrees of freedom are Satterthwaite's over every
variance component. Test: :math:`t = \hat d/\widehat{SE}` against Student's t;
interval :math:`\hat d \pm t_{df,\,0.975}\widehat{SE}`. Many pairs: Holm or
Benjamini–Hochberg over the pairs of one table
(:func:`enade_bench.metrics.multiplicity.adjust_pvalues`).

References
----------
Welch, B. L. (1947). The generalization of "Student's" problem when several different
population variances are involved. *Biometrika*, 34(1/2), 28-35.

Satterthwaite, F. E. (1946). An approximate distribution of estimates of variance
components. *Biometrics Bulletin*, 2(6), 110-114.

Holm, S. (1979). A simple sequentially rejective multiple test procedure.
*Scandinavian Journal of Statistics*, 6(2), 65-70.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations
from typing import Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from enade_bench.metrics.multiplicity import adjust_pvalues

Pairing = Literal["independent", "shuffle"]


@dataclass(frozen=True)
class ThetaSample:
    """One model's θ per answer pattern.

    Attributes
    ----------
    name : str
        The model.
    theta : ndarray
        One θ̂ per pattern.
    shuffle : ndarray
        The shuffle (run) index of each pattern (default ``0..K-1``).
    stratum : ndarray
        The stratum of each pattern, e.g. the year's booklet (default: one stratum).
    """

    name: str
    theta: np.ndarray
    shuffle: np.ndarray = field(default_factory=lambda: np.empty(0))
    stratum: np.ndarray = field(default_factory=lambda: np.empty(0))

    @classmethod
    def of(
        cls, name: str, theta: ArrayLike, shuffle: ArrayLike | None = None, stratum: ArrayLike | None = None
    ) -> ThetaSample:
        """Build a sample, with the default shuffle indices and the single stratum."""
        t = np.asarray(theta, dtype=float).reshape(-1)
        k = np.arange(t.size) if shuffle is None else np.asarray(shuffle).reshape(-1)
        s = np.zeros(t.size, dtype=int) if stratum is None else np.asarray(stratum).reshape(-1)
        if not k.size == s.size == t.size:
            raise ValueError(f"{name}: theta, shuffle and stratum differ in length")
        return cls(name, t, k, s)


@dataclass(frozen=True)
class ThetaDifference:
    """Model A minus model B in mean θ (see the module docstring).

    Attributes
    ----------
    model_a, model_b : str
        The two models.
    n_a, n_b : int
        Patterns used (paired: the shared shuffles, so ``n_a == n_b``).
    strata : int
        Strata both models answered.
    mean_a, mean_b, diff : float
        Mean θ of each (mean over strata of the stratum means) and ``mean_a - mean_b``.
    se, df : float
        Standard error of ``diff`` and its degrees of freedom.
    ci_low, ci_high : float
        The interval.
    t, p_value : float
        The t statistic and its two-sided p-value.
    pairing : str
        ``"independent"`` or ``"shuffle"``.
    p_adjusted : float
        Set by :func:`theta_pairs` (Holm or BH over the pairs); NaN otherwise.
    """

    model_a: str
    model_b: str
    n_a: int
    n_b: int
    strata: int
    mean_a: float
    mean_b: float
    diff: float
    se: float
    df: float
    ci_low: float
    ci_high: float
    t: float
    p_value: float
    pairing: str
    p_adjusted: float = math.nan


@dataclass(frozen=True)
class _Stratum:
    diff: float
    mean_a: float
    mean_b: float
    components: list[tuple[float, int]]  # (variance, degrees of freedom) of each variance term
    n_a: int
    n_b: int


def _stratum(a: np.ndarray, ka: np.ndarray, b: np.ndarray, kb: np.ndarray, pairing: Pairing) -> _Stratum:
    """One stratum's difference and the variance components of its SE."""
    if pairing == "shuffle":
        if np.unique(ka).size != ka.size or np.unique(kb).size != kb.size:
            raise ValueError("pairing by shuffle needs one pattern per shuffle index")
        common = np.intersect1d(ka, kb)
        xa = np.array([a[ka == k][0] for k in common])
        xb = np.array([b[kb == k][0] for k in common])
        d = xa - xb
        var = float(np.var(d, ddof=1)) / d.size if d.size > 1 else math.nan
        mean = float(d.mean()) if d.size else math.nan
        return _Stratum(mean, float(xa.mean()), float(xb.mean()), [(var, d.size - 1)], d.size, d.size)
    va = float(np.var(a, ddof=1)) / a.size if a.size > 1 else math.nan
    vb = float(np.var(b, ddof=1)) / b.size if b.size > 1 else math.nan
    comps = [(va, a.size - 1), (vb, b.size - 1)]
    return _Stratum(float(a.mean() - b.mean()), float(a.mean()), float(b.mean()), comps, a.size, b.size)


def theta_difference(
    a: ThetaSample, b: ThetaSample, pairing: Pairing = "independent", confidence: float = 0.95
) -> ThetaDifference:
    """Mean θ of ``a`` minus that of ``b``, with its SE, interval and t test (module docstring).

    Examples
    --------
    >>> r = theta_difference(ThetaSample.of("a", [1.0, 1.2, 0.8]), ThetaSample.of("b", [0.0, 0.2, -0.2]))
    >>> round(r.diff, 3), round(r.se, 3), round(r.df, 1)
    (1.0, 0.163, 4.0)
    >>> theta_difference(ThetaSample.of("a", [1.0, 1.2, 0.8]), ThetaSample.of("b", [0.1, 0.2, -0.2]),
    ...                  pairing="shuffle").df
    2.0
    """
    if pairing not in ("independent", "shuffle"):
        raise ValueError(f"pairing must be 'independent' or 'shuffle'; got {pairing!r}")
    strata = sorted(set(a.stratum.tolist()) & set(b.stratum.tolist()), key=str)
    parts = [_stratum(a.theta[a.stratum == s], a.shuffle[a.stratum == s], b.theta[b.stratum == s],
                      b.shuffle[b.stratum == s], pairing) for s in strata]  # fmt: skip
    n_s = len(parts)
    if not n_s:
        raise ValueError(f"{a.name} and {b.name} share no stratum")
    diff = float(np.mean([p.diff for p in parts]))
    comps = [(v / n_s**2, df) for p in parts for v, df in p.components]
    var = float(sum(v for v, _ in comps))
    denom = sum(v**2 / df for v, df in comps if df > 0)
    df = var**2 / denom if denom > 0 else math.nan
    se = math.sqrt(var) if var >= 0 else math.nan
    from scipy import stats  # noqa: PLC0415 (slow import)

    half = (
        float(stats.t.ppf(0.5 + confidence / 2, df)) * se
        if se > 0 and df > 0
        else (0.0 if se == 0 else math.nan)
    )
    if se > 0:
        t = diff / se
        pv = float(2 * stats.t.sf(abs(t), df))
    else:
        t, pv = math.nan, (1.0 if diff == 0 else 0.0 if se == 0 else math.nan)
    return ThetaDifference(a.name, b.name, sum(p.n_a for p in parts), sum(p.n_b for p in parts), n_s,
                           float(np.mean([p.mean_a for p in parts])), float(np.mean([p.mean_b for p in parts])), diff,
                           se, df, diff - half, diff + half, t, pv, pairing)  # fmt: skip


def theta_pairs(
    samples: Sequence[ThetaSample],
    pairing: Pairing = "independent",
    adjust: str = "holm",
    confidence: float = 0.95,
) -> list[ThetaDifference]:
    """Every pair of ``samples`` (higher mean θ first), p-values adjusted together (``holm`` or ``bh``)."""
    ordered = sorted(samples, key=lambda s: -float(np.mean(s.theta)))
    pairs = [theta_difference(x, y, pairing, confidence) for x, y in combinations(ordered, 2)]
    adjusted = adjust_pvalues([p.p_value for p in pairs], adjust) if pairs else np.empty(0)
    return [replace(p, p_adjusted=float(q)) for p, q in zip(pairs, adjusted, strict=True)]


def pairs_frame(pairs: Sequence[ThetaDifference]) -> pd.DataFrame:
    """The pairs as a table, one row each (the dataclass fields as columns)."""
    return pd.DataFrame([p.__dict__ for p in pairs])
