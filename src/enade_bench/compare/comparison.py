"""What a comparison of models found: the settings, each model's score, each pair, and the whole.

:func:`~enade_bench.compare.analysis.compare_table` makes a :class:`Comparison`;
:mod:`enade_bench.compare.render` and the study's report read it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from enade_bench.metrics.clustered import ClusteredMean
from enade_bench.metrics.paired import PairedDifference
from enade_bench.metrics.simultaneous import INTERVAL_NAMES, SIMULTANEOUS

__all__ = [
    "ADJUST_NAMES",
    "DEFAULT_FAMILY",
    "FAMILIES",
    "CompareOptions",
    "Comparison",
    "ModelScore",
    "PairComparison",
]

#: The adjustments' names in titles.
ADJUST_NAMES = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg"}
#: The families a multiplicity adjustment can span (``--family``).
FAMILIES = ("all", "strategy", "stratum")
#: One strategy's table, all its strata: slicing by more fields is paid for, separate
#: experiments (strategies) are not (docs/comparisons.md, "Which pairs are adjusted together").
DEFAULT_FAMILY = "strategy"


@dataclass(frozen=True)
class CompareOptions:
    """How to compare.

    Attributes
    ----------
    by
        Grouping fields compared separately (strata).
    adjust
        ``holm`` or ``bonferroni`` (family-wise error) or ``bh`` (false discovery rate).
    alpha
        Level of the tests and the letters; intervals have coverage ``1 - alpha``.
    family
        Which pairs are adjusted together: ``all``, ``strategy`` or ``stratum``.
    allow_errors
        Compare runs with error records (their answers only) instead of refusing.
    """

    by: tuple[str, ...] = ()
    adjust: str = "holm"
    alpha: float = 0.05
    family: str = DEFAULT_FAMILY
    allow_errors: bool = False


@dataclass(frozen=True)
class ModelScore:
    """One model in one cell of the comparison (a strategy and a stratum).

    ``letters`` are its compact letters (:mod:`enade_bench.metrics.letters`), ``family``
    the family its pairs were adjusted in, and ``rank_low``–``rank_high`` its
    simultaneous rank set (:mod:`enade_bench.metrics.ranks`; 0–0 without a score).
    """

    strategy: str
    stratum: str
    model: str
    score: ClusteredMean
    letters: str
    n_errors: int = 0
    family: str = ""
    rank_low: int = 0
    rank_high: int = 0


@dataclass(frozen=True)
class PairComparison:
    """Model A against model B in one cell; ``n_excluded`` questions only one of them answered.

    ``result`` holds the unadjusted ``1 - alpha`` interval; ``ci_low``–``ci_high`` is the
    statement shown (``statement``: an interval, or Holm's bound ``> 0``/``< 0`` as
    ``(0, high]``/``[low, 0)``), with ``ci_level`` the confidence level of the two-sided
    interval its limits come from (the statements hold jointly at :math:`1-\alpha`) and
    ``alpha_i`` the decision's level
    (:class:`~enade_bench.metrics.simultaneous.Statement`): it excludes 0 exactly when
    ``significant`` (the pair shares no letter).  ``magnitude_low``–``magnitude_high`` is
    the Bonferroni :math:`\alpha/K` interval, shown beside a bound for the magnitude.
    ``mdd`` is the detectable difference under the alternative at ``alpha_i``,
    ``mdd_single`` at :math:`\alpha`, the pair tested alone
    (:func:`~enade_bench.metrics.power.pair_mdd`; ``inf``: not reachable at this size), and
    ``mdd_low``–``mdd_high`` the clustered MDD's range at the 10 % and 90 % limits of its variance
    (:func:`~enade_bench.metrics.power.pair_mdd_range`; NaN for the single-record tests).
    """

    strategy: str
    stratum: str
    model_a: str
    model_b: str
    result: PairedDifference
    n_excluded: int
    p_adjusted: float
    mdd: float
    family: str = ""
    family_size: int = 0
    ci_low: float = math.nan
    ci_high: float = math.nan
    ci_level: float = math.nan
    significant: bool = False
    mdd_single: float = math.nan
    alpha_i: float = math.nan
    statement: str = ""
    magnitude_low: float = math.nan
    magnitude_high: float = math.nan
    mdd_low: float = math.nan
    mdd_high: float = math.nan


@dataclass
class Comparison:
    """Everything :func:`~enade_bench.compare.analysis.compare_table` found.

    Attributes
    ----------
    scores, pairs
        One entry per model and per pair in each cell.
    flips
        One row per question one model of a pair got right and the other wrong.
    unpaired
        One row per item a model of a cell lacks while another answered it.
    options
        The settings used.
    fields
        The exam's grouping fields (columns of ``flips``).
    notes
        What the reader should know (questions excluded, pairs not comparable, errors).
    warnings
        What probably needs fixing in the input (replicates folded into item ids).
    """

    scores: list[ModelScore]
    pairs: list[PairComparison]
    flips: pd.DataFrame
    unpaired: pd.DataFrame
    options: CompareOptions
    fields: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def adjust(self) -> str:
        """The multiplicity adjustment."""
        return self.options.adjust

    @property
    def alpha(self) -> float:
        """The level of the tests and letters."""
        return self.options.alpha

    @property
    def family_label(self) -> str:
        """How the family reads in titles: ``Holm within each strategy``."""
        scope = {
            "all": "over every pair of the table",
            "strategy": "within each strategy (all its strata)",
            "stratum": "within each cell (strategy and stratum)",
        }[self.options.family]
        return f"{ADJUST_NAMES[self.adjust]} {scope}"

    @property
    def interval_name(self) -> str:
        """How the pairs' shown intervals are adjusted (:data:`~enade_bench.metrics.simultaneous.INTERVAL_NAMES`)."""
        return INTERVAL_NAMES[self.adjust]

    def scores_frame(self) -> pd.DataFrame:
        """One row per model and cell, every number of its :class:`ClusteredMean`."""
        rows = [
            {
                "strategy": s.strategy,
                "stratum": s.stratum,
                "model": s.model,
                "accuracy": s.score.mean,
                "se": s.score.se,
                "ci_low": s.score.ci_low,
                "ci_high": s.score.ci_high,
                "design_effect": s.score.design_effect,
                "n_questions": s.score.n_questions,
                "n_records": s.score.n_records,
                "n_errors": s.n_errors,
                "n_clusters": s.score.n_clusters,
                "interval": s.score.method,
                "letters": s.letters,
                "rank_low": s.rank_low,
                "rank_high": s.rank_high,
                "family": s.family,
            }
            for s in self.scores
        ]
        return pd.DataFrame(rows)

    def pairs_frame(self) -> pd.DataFrame:
        """One row per pair and cell: difference, interval, test, p-values, detectable difference."""
        rows = [
            {
                "strategy": p.strategy,
                "stratum": p.stratum,
                "model_a": p.model_a,
                "model_b": p.model_b,
                "accuracy_a": p.result.mean_a,
                "accuracy_b": p.result.mean_b,
                "diff": p.result.diff,
                "se": p.result.se,
                "statement": p.statement,
                "ci_low": p.ci_low,
                "ci_high": p.ci_high,
                "ci_level": p.ci_level,
                "alpha_i": p.alpha_i,
                "ci_method": self.interval_name,
                "simultaneous": self.adjust in SIMULTANEOUS,
                "different": p.significant,
                "bonferroni_low": p.magnitude_low,
                "bonferroni_high": p.magnitude_high,
                "ci_low_unadjusted": p.result.ci_low,
                "ci_high_unadjusted": p.result.ci_high,
                "test": p.result.test,
                "statistic": p.result.statistic,
                "p_value": p.result.p_value,
                "p_adjusted": p.p_adjusted,
                "adjust": self.adjust,
                "family": p.family,
                "family_size": p.family_size,
                "mdd_80": p.mdd,
                "mdd_80_unadjusted": p.mdd_single,
                "mdd_80_low": p.mdd_low,
                "mdd_80_high": p.mdd_high,
                "n_questions": p.result.n_questions,
                "n_clusters": p.result.n_clusters,
                "n_excluded": p.n_excluded,
                "a_better": p.result.a_only,
                "b_better": p.result.b_only,
                "why_this_test": p.result.reason,
            }
            for p in self.pairs
        ]
        return pd.DataFrame(rows)
