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
interval :math:`\hat d \pm t_{df,\,0.975}\widehat{SE}`. Many pairs: Holm,
Bonferroni or Benjamini–Hochberg over the pairs of one table
(:func:`enade_bench.metrics.multiplicity.adjust_pvalues`).

One inference per pair (:func:`adjust_theta_pairs`): the statement shown beside an adjusted p is
the adjustment's own (:func:`enade_bench.metrics.simultaneous.shown_statements`). Pair
:math:`i` is rejected when :math:`p_i < \alpha_i` (``alpha_i``, the level of its adjusted
decision); with Holm a rejected pair gets Strassburger & Bretz's bound at 0 in the
direction of its effect (``> 0``/``< 0``) and the others the t interval at
:math:`\alpha/(K-r)`, every interval being the t test's own inversion,
:math:`\hat d \pm t_{df,\,1-a/2}\widehat{SE}` (``ci_level`` :math:`= 1-a`); with
Bonferroni every pair its :math:`\alpha/K` interval, with Benjamini–Hochberg its
:math:`R\alpha/K` one. The statement excludes 0 exactly when the adjusted p is below
:math:`\alpha`; the Bonferroni :math:`\alpha/K` interval (``bonferroni_low``–
``bonferroni_high``) gives the magnitude beside a bound, and the unadjusted
:math:`1-\alpha` interval is kept as ``ci_low_unadjusted``–``ci_high_unadjusted``.

References
----------
Welch, B. L. (1947). The generalization of "Student's" problem when several different
population variances are involved. *Biometrika*, 34(1/2), 28-35.

Satterthwaite, F. E. (1946). An approximate distribution of estimates of variance
components. *Biometrics Bulletin*, 2(6), 110-114.

Holm, S. (1979). A simple sequentially rejective multiple test procedure.
*Scandinavian Journal of Statistics*, 6(2), 65-70.

Strassburger, K., & Bretz, F. (2008). Compatible simultaneous lower confidence bounds
for the Holm procedure and other Bonferroni-based closed tests. *Statistics in
Medicine*, 27(24), 4914-4927.

Benjamini, Y., & Yekutieli, D. (2005). False discovery rate-adjusted multiple confidence
intervals for selected parameters. *JASA*, 100(469), 71-81.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from enade_bench.metrics.multiplicity import adjust_pvalues
from enade_bench.metrics.simultaneous import INTERVAL, INTERVAL_NAMES, Statement, shown_statements

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
        The statement shown. From :func:`theta_difference` the unadjusted t interval; from
        :func:`adjust_theta_pairs` the adjustment's statement (module docstring), encoded as in
        every statement-bearing CSV (:data:`enade_bench.metrics.simultaneous.ENCODING`): an
        interval ``[ci_low, ci_high]``, or a bound at 0, ``> 0`` as ``ci_low = 0`` (open:
        0 itself is excluded) with its other limit in ``ci_high``, ``< 0`` mirrored; it
        excludes 0 exactly when ``different``.
    t, p_value : float
        The t statistic and its two-sided p-value.
    pairing : str
        ``"independent"`` or ``"shuffle"``.
    p_adjusted : float
        Set by :func:`adjust_theta_pairs` (Holm, Bonferroni or BH over the pairs); NaN otherwise.
    adjust : str
        The adjustment (``"none"`` from :func:`theta_difference`).
    ci_level : float
        The confidence level of the two-sided t interval the statement's limits come from,
        a bound's too (the statements of a table hold jointly at :math:`1-\alpha`); NaN
        only without a statement.
    alpha_i : float
        The level of the pair's adjusted decision: ``different`` exactly when ``p_value < alpha_i``.
    statement : str
        ``interval``, ``> 0`` or ``< 0`` (:class:`enade_bench.metrics.simultaneous.Statement`).
    bonferroni_low, bonferroni_high : float
        The Bonferroni :math:`\alpha/K` t interval (the magnitude beside a bound).
    ci_method : str
        How the shown interval is adjusted (:data:`enade_bench.metrics.simultaneous.INTERVAL_NAMES`).
    different : bool
        The decision: adjusted p (unadjusted p for one pair) below :math:`\alpha`.
    ci_low_unadjusted, ci_high_unadjusted : float
        The unadjusted :math:`1-\alpha` t interval.
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
    adjust: str = "none"
    ci_level: float = math.nan
    ci_method: str = "unadjusted"
    different: bool = False
    ci_low_unadjusted: float = math.nan
    ci_high_unadjusted: float = math.nan
    alpha_i: float = math.nan
    statement: str = "interval"
    bonferroni_low: float = math.nan
    bonferroni_high: float = math.nan


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


def t_interval(diff: float, se: float, df: float, level: float) -> tuple[float, float]:
    r"""The t test's own interval at ``level``: :math:`\hat d \pm t_{df,\,1-\text{level}/2}\widehat{SE}`.

    It excludes 0 exactly when the two-sided t test's p-value is below ``level``. With
    :math:`\widehat{SE} = 0` the interval is the point :math:`\hat d` (the test's p is 0
    or 1); with no SE or level, NaN.

    Examples
    --------
    >>> [round(v, 3) for v in t_interval(1.0, 0.163, 4.0, 0.05)]
    [0.547, 1.453]
    """
    if se == 0 and not math.isnan(level):
        return diff, diff
    if not (se > 0 and df > 0 and 0 < level < 1):
        return math.nan, math.nan
    from scipy import stats  # noqa: PLC0415 (slow import)

    half = float(stats.t.ppf(1 - level / 2, df)) * se
    return diff - half, diff + half


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
    parts = [
        _stratum(
            a.theta[a.stratum == s],
            a.shuffle[a.stratum == s],
            b.theta[b.stratum == s],
            b.shuffle[b.stratum == s],
            pairing,
        )
        for s in strata
    ]
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

    low, high = t_interval(diff, se, df, 1 - confidence)
    if se > 0:
        t = diff / se
        pv = float(2 * stats.t.sf(abs(t), df))
    else:
        t, pv = math.nan, (1.0 if diff == 0 else 0.0 if se == 0 else math.nan)
    return ThetaDifference(
        a.name,
        b.name,
        sum(p.n_a for p in parts),
        sum(p.n_b for p in parts),
        n_s,
        float(np.mean([p.mean_a for p in parts])),
        float(np.mean([p.mean_b for p in parts])),
        diff,
        se,
        df,
        low,
        high,
        t,
        pv,
        pairing,
        ci_level=confidence,
        different=bool(pv < 1 - confidence),
        ci_low_unadjusted=low,
        ci_high_unadjusted=high,
    )


def adjust_theta_pairs(
    pairs: Sequence[ThetaDifference], adjust: str = "holm", confidence: float = 0.95
) -> list[ThetaDifference]:
    """Adjust unadjusted pairs (:func:`theta_difference`) together, as one family.

    The pairs of one table, or those of a family of several tables (every area and language
    of the published runs, as ``compare`` adjusts every pair of a strategy) at once.  Each pair gets its adjusted p, its
    simultaneous statement and the Bonferroni interval over the family's size.
    """
    if adjust not in INTERVAL_NAMES:
        raise ValueError(f"adjust must be one of {', '.join(INTERVAL_NAMES)}; got {adjust!r}")
    alpha = 1 - confidence
    pvalues = [p.p_value for p in pairs]
    adjusted = adjust_pvalues(pvalues, adjust) if pairs else np.empty(0)

    def interval_at(i: int, level: float) -> tuple[float, float]:
        return t_interval(pairs[i].diff, pairs[i].se, pairs[i].df, 1 - level)

    shown = shown_statements(pvalues, [p.diff for p in pairs], alpha, adjust, interval_at) if pairs else []
    size = sum(1 for p in pvalues if not math.isnan(p))
    return [
        _adjusted(
            p, float(q), statement, adjust, t_interval(p.diff, p.se, p.df, alpha / size) if size else None
        )
        for p, q, statement in zip(pairs, adjusted, shown, strict=True)
    ]


def _adjusted(
    pair: ThetaDifference,
    p_adjusted: float,
    statement: Statement | None,
    adjust: str,
    bonferroni: tuple[float, float] | None,
) -> ThetaDifference:
    """``pair`` with its adjusted p, its statement and the Bonferroni interval beside it.

    A bound at 0 keeps its limit 0 (the one encoding, :data:`~enade_bench.metrics.simultaneous.ENCODING`).
    A t interval excludes 0 exactly when ``p < level``; only a tie within rounding (``p``
    equal to the level to the last bits) can split the two: then a different pair's
    *interval* limit nearest 0 is moved just past 0 (the smallest float) on the estimate's
    side, so the shown statement and the decision never disagree (a pair that is not
    different already has its interval reach 0,
    :func:`~enade_bench.metrics.simultaneous.shown_statements`).
    """
    if statement is None:  # no p-value: outside the family
        return replace(
            pair,
            p_adjusted=p_adjusted,
            adjust=adjust,
            ci_level=math.nan,
            ci_method=INTERVAL_NAMES[adjust],
            ci_low=math.nan,
            ci_high=math.nan,
        )
    low, high = statement.low, statement.high
    if statement.kind == INTERVAL and statement.different and not math.isnan(low) and low <= 0 <= high:
        low, high = (math.ulp(0.0), high) if pair.diff > 0 else (low, -math.ulp(0.0))
    b_low, b_high = bonferroni if bonferroni is not None else (math.nan, math.nan)
    return replace(
        pair,
        p_adjusted=p_adjusted,
        adjust=adjust,
        ci_level=statement.confidence,
        ci_method=INTERVAL_NAMES[adjust],
        different=statement.different,
        ci_low=low,
        ci_high=high,
        alpha_i=statement.alpha_i,
        statement=statement.kind,
        bonferroni_low=b_low,
        bonferroni_high=b_high,
    )


def pairs_frame(pairs: Sequence[ThetaDifference]) -> pd.DataFrame:
    """The pairs as a table, one row each (the dataclass fields as columns)."""
    return pd.DataFrame([p.__dict__ for p in pairs])
