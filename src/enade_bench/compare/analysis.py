"""Models side by side: per-model scores, every pair, compact letters and item flips.

Within each strategy (and each value of the ``by`` fields) every model gets its score
with a clustered interval (:func:`~enade_bench.metrics.clustered.clustered_mean`),
every pair of models its paired difference, interval and test on the questions both
answered (:func:`~enade_bench.metrics.paired.paired_difference`).  The p-values are
adjusted (Holm or Benjamini–Hochberg) within a *family* (:data:`FAMILIES`): every pair of
the table, every pair of one strategy (all its strata; the default), or every pair of
one cell.  The models of a cell get letters from the adjusted decisions
(:func:`~enade_bench.metrics.letters.compact_letters`): two models share a letter
exactly when their pair is not significant, and each pair's statement is the adjustment's
simultaneous one (:mod:`enade_bench.metrics.simultaneous`: for Holm, Strassburger &
Bretz's bound at 0 for a rejected pair and the interval at :math:`\alpha/(K-r)` for the
others), so that it excludes 0 exactly when the two models share no letter; the
detectable difference is computed under the alternative at the pair's own level
:math:`\alpha_i` (:mod:`enade_bench.metrics.power`).  A pair of fewer than two common questions
is not comparable: no p, outside the family, no split of the letters.  Questions only
one model of a pair answered are left out of that pair and listed
(:mod:`enade_bench.compare.checks`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from enade_bench.compare.checks import check_errors, check_nested, replicate_warnings, unpaired_items
from enade_bench.compare.pairs import Questions, compare_pair, flips, questions
from enade_bench.compare.table import ERROR_COLUMN, grouping_fields
from enade_bench.errors import UserError
from enade_bench.metrics.clustered import ClusteredMean, clustered_mean
from enade_bench.metrics.letters import compact_letters
from enade_bench.metrics.multiplicity import adjust_pvalues
from enade_bench.metrics.paired import PairedDifference, pair_interval
from enade_bench.metrics.power import pair_mdd
from enade_bench.metrics.ranks import rank_sets
from enade_bench.metrics.simultaneous import INTERVAL_NAMES, SIMULTANEOUS, Statement, shown_statements

__all__ = ["DEFAULT_FAMILY", "FAMILIES", "CompareOptions", "Comparison", "ModelScore", "PairComparison",
           "cell_name", "compare_table"]  # fmt: skip

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
    (:func:`~enade_bench.metrics.power.pair_mdd`; ``inf``: not reachable at this size).
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


@dataclass
class Comparison:
    """Everything :func:`compare_table` found.

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
        scope = {"all": "over every pair of the table", "strategy": "within each strategy (all its strata)",
                 "stratum": "within each cell (strategy and stratum)"}[self.options.family]  # fmt: skip
        return f"{ADJUST_NAMES[self.adjust]} {scope}"

    @property
    def interval_name(self) -> str:
        """How the pairs' shown intervals are adjusted (:data:`~enade_bench.metrics.simultaneous.INTERVAL_NAMES`)."""
        return INTERVAL_NAMES[self.adjust]

    def scores_frame(self) -> pd.DataFrame:
        """One row per model and cell, every number of its :class:`ClusteredMean`."""
        rows = [{"strategy": s.strategy, "stratum": s.stratum, "model": s.model, "accuracy": s.score.mean,
                 "se": s.score.se, "ci_low": s.score.ci_low, "ci_high": s.score.ci_high,
                 "design_effect": s.score.design_effect, "n_questions": s.score.n_questions,
                 "n_records": s.score.n_records, "n_errors": s.n_errors, "n_clusters": s.score.n_clusters,
                 "interval": s.score.method, "letters": s.letters, "rank_low": s.rank_low,
                 "rank_high": s.rank_high, "family": s.family}
                for s in self.scores]  # fmt: skip
        return pd.DataFrame(rows)

    def pairs_frame(self) -> pd.DataFrame:
        """One row per pair and cell: difference, interval, test, p-values, detectable difference."""
        rows = [{"strategy": p.strategy, "stratum": p.stratum, "model_a": p.model_a, "model_b": p.model_b,
                 "accuracy_a": p.result.mean_a, "accuracy_b": p.result.mean_b, "diff": p.result.diff,
                 "se": p.result.se, "statement": p.statement, "ci_low": p.ci_low, "ci_high": p.ci_high,
                 "ci_level": p.ci_level, "alpha_i": p.alpha_i, "ci_method": self.interval_name,
                 "simultaneous": self.adjust in SIMULTANEOUS, "different": p.significant,
                 "bonferroni_low": p.magnitude_low, "bonferroni_high": p.magnitude_high,
                 "ci_low_unadjusted": p.result.ci_low, "ci_high_unadjusted": p.result.ci_high,
                 "test": p.result.test, "statistic": p.result.statistic, "p_value": p.result.p_value,
                 "p_adjusted": p.p_adjusted, "adjust": self.adjust, "family": p.family,
                 "family_size": p.family_size, "mdd_80": p.mdd, "mdd_80_unadjusted": p.mdd_single,
                 "n_questions": p.result.n_questions, "n_clusters": p.result.n_clusters,
                 "n_excluded": p.n_excluded, "a_better": p.result.a_only, "b_better": p.result.b_only,
                 "why_this_test": p.result.reason} for p in self.pairs]  # fmt: skip
        return pd.DataFrame(rows)


def _cells(table: pd.DataFrame, by: list[str]) -> list[tuple[str, str, pd.DataFrame]]:
    keys = ["strategy", *by]
    out = []
    for key, rows in table.groupby(keys, sort=False, dropna=False):
        values = key if isinstance(key, tuple) else (key,)
        stratum = ", ".join(f"{k}={v}" for k, v in zip(by, values[1:], strict=True)) or "all"
        out.append((str(values[0]), stratum, rows))
    return out


def cell_name(strategy: str, stratum: str) -> str:
    """``S1``, ``S1 (area=MT)``, or ``area=MT`` for a CSV without strategies."""
    if strategy == "-":
        return stratum
    return strategy if stratum == "all" else f"{strategy} ({stratum})"


def _family(family: str, strategy: str, stratum: str) -> str:
    """The family's label in ``scores.csv``/``pairs.csv``: it names the ``family`` option used."""
    if family == "all":
        return "all"
    if family == "strategy":
        return "strategy (none: every pair)" if strategy == "-" else f"strategy {strategy}"
    return f"stratum {cell_name(strategy, stratum)}"


@dataclass(frozen=True)
class _Cell:
    strategy: str
    stratum: str
    models: list[str]
    questions: dict[str, Questions]
    errors: dict[str, int]
    rows: pd.DataFrame  # the cell's answered records


def _empty_score() -> ClusteredMean:
    nan = math.nan
    return ClusteredMean(0, 0, 0, nan, nan, nan, nan, nan, "none")


def compare_table(table: pd.DataFrame, options: CompareOptions | None = None) -> Comparison:
    """Compare the models of a long table (:mod:`enade_bench.compare.table`).

    Raises
    ------
    UserError
        A ``by`` field the table does not have, fewer than two models, an unknown family,
        or runs with error records without ``allow_errors``.
    """
    opts = options or CompareOptions()
    by = list(opts.by)
    unknown = [f for f in by if f not in grouping_fields(table)]
    if unknown:
        raise UserError(
            f"--by {', '.join(unknown)}: no such field (fields: {', '.join(grouping_fields(table)) or 'none'})"
        )
    if opts.adjust not in ADJUST_NAMES:
        raise UserError(f"--adjust: expected one of {', '.join(ADJUST_NAMES)}, got {opts.adjust!r}")
    if opts.family not in FAMILIES:
        raise UserError(f"--family: expected one of {', '.join(FAMILIES)}, got {opts.family!r}")
    if table["model"].nunique() < 2:
        raise UserError(f"a comparison needs two or more models; found {sorted(table['model'].unique())}")
    errors = check_errors(table, opts.allow_errors)
    failed = table[ERROR_COLUMN].fillna("").astype(str) != "" if ERROR_COLUMN in table.columns else None
    answered = table if failed is None else table[~failed]
    notes: list[str] = []
    if errors.errors:
        notes.append(f"incomplete runs, compared on their answered questions only: {errors.describe()}")
    cells = _build_cells(table, by, failed, notes)
    answered_sets = [
        (c.strategy, c.stratum, {m: c.questions[m].scores.index for m in c.models}) for c in cells
    ]
    warnings = replicate_warnings(answered, answered_sets)
    unpaired_frame = _unpaired(answered_sets, notes)
    raw: list[tuple[_Cell, str, str, PairedDifference, int]] = []
    flip_frames: list[pd.DataFrame] = []
    for cell in cells:
        if len(cell.models) < 2:
            notes.append(f"{cell_name(cell.strategy, cell.stratum)}: only {cell.models[0]} has results; "
                         "nothing to compare")  # fmt: skip
        for a, b in combinations(cell.models, 2):
            qa, qb = cell.questions[a], cell.questions[b]
            result, common, excluded = compare_pair(qa, qb, 1 - opts.alpha)
            if math.isnan(result.p_value):
                notes.append(f"{cell_name(cell.strategy, cell.stratum)}: {a} and {b} are not comparable "
                             f"({result.reason}): no p, outside the {opts.adjust} family, and their letters "
                             "say nothing about each other")  # fmt: skip
            raw.append((cell, a, b, result, excluded))
            flip_frames.append(flips(cell.strategy, cell.stratum, (a, qa), (b, qb), common, cell.rows))
    pairs = _adjust(raw, opts)
    scores = _scores(cells, pairs, opts)
    frame = pd.concat(flip_frames, ignore_index=True) if flip_frames else pd.DataFrame()
    return Comparison(scores, pairs, frame, unpaired_frame, opts, grouping_fields(table),
                      list(dict.fromkeys(notes)), warnings)  # fmt: skip


def _build_cells(
    table: pd.DataFrame, by: list[str], failed: pd.Series | None, notes: list[str]
) -> list[_Cell]:
    """Each cell's models, their question scores (answers only) and error counts."""
    cells = []
    for strategy, stratum, rows in _cells(table, by):
        check_nested(rows, by, cell_name(strategy, stratum))
        models = list(dict.fromkeys(rows["model"]))
        mask = failed.reindex(rows.index) if failed is not None else pd.Series(False, index=rows.index)
        ok = rows[~mask]
        qs = {m: questions(ok[ok["model"] == m]) for m in models}
        errs = {str(m): int(n) for m, n in rows.loc[mask, "model"].value_counts().items()}
        for m in models:
            if qs[m].scores.empty:
                notes.append(f"{cell_name(strategy, stratum)}: every record of {m} is an error "
                             f"({errs.get(m, 0)}): no score, not comparable")  # fmt: skip
        cells.append(_Cell(strategy, stratum, models, qs, errs, ok))
    return cells


def _unpaired(answered_sets: list[tuple[str, str, dict[str, pd.Index]]], notes: list[str]) -> pd.DataFrame:
    """``unpaired.csv``: the items some models of a cell lack; a note per cell with counts."""
    frames = [unpaired_items(*a) for a in answered_sets]
    for (strategy, stratum, _), frame in zip(answered_sets, frames, strict=True):
        if len(frame):
            counts = frame["missing_for"].value_counts(sort=False).items()
            missing = ", ".join(f"{m} lacks {n}" for m, n in counts)
            notes.append(f"{cell_name(strategy, stratum)}: {frame['item'].nunique()} item(s) answered by some "
                         f"models and not others are left out of those pairs ({missing}; unpaired.csv)")  # fmt: skip
    return pd.concat(frames, ignore_index=True) if frames else unpaired_items("", "", {})


def _intervals(results: list[PairedDifference]) -> Callable[[int, float], tuple[float, float]]:
    """Pair ``i``'s interval at ``confidence`` by its own test's procedure."""
    return lambda i, confidence: pair_interval(results[i], confidence)


def _adjust(
    raw: list[tuple[_Cell, str, str, PairedDifference, int]], opts: CompareOptions
) -> list[PairComparison]:
    """Adjusted p-values within each family (NaN p-values stay outside it), each pair's
    simultaneous statement (one inference per pair) and its detectable difference."""
    labels = [_family(opts.family, c.strategy, c.stratum) for c, *_ in raw]
    adjusted = np.full(len(raw), math.nan)
    statements: list[Statement | None] = [None] * len(raw)
    magnitude = [(math.nan, math.nan)] * len(raw)
    sizes = dict.fromkeys(labels, 0)
    for label in sizes:
        index = [k for k, lab in enumerate(labels) if lab == label]
        results = [raw[k][3] for k in index]
        pvalues = [r.p_value for r in results]
        adjusted[index] = adjust_pvalues(pvalues, opts.adjust)
        shown = shown_statements(
            pvalues, [r.diff for r in results], opts.alpha, opts.adjust, _intervals(results)
        )
        size = sum(1 for p in pvalues if not math.isnan(p))
        sizes[label] = size
        for k, r, statement in zip(index, results, shown, strict=True):
            statements[k] = statement
            if statement is not None:
                magnitude[k] = pair_interval(r, 1 - opts.alpha / size)
    out = []
    for (c, a, b, r, n), p, statement, (m_low, m_high), label in zip(raw, adjusted, statements, magnitude, labels,
                                                                     strict=True):  # fmt: skip
        if statement is None:
            out.append(
                PairComparison(c.strategy, c.stratum, a, b, r, n, float(p), math.nan, label, sizes[label])
            )
            continue
        out.append(PairComparison(c.strategy, c.stratum, a, b, r, n, float(p), pair_mdd(r, statement.alpha_i), label,
                                  sizes[label], statement.low, statement.high, statement.confidence,
                                  statement.different, pair_mdd(r, opts.alpha), statement.alpha_i, statement.kind,
                                  m_low, m_high))  # fmt: skip
    return out


def _scores(cells: list[_Cell], pairs: list[PairComparison], opts: CompareOptions) -> list[ModelScore]:
    """Each model's clustered score and its letters within its cell."""
    scores = []
    for cell in cells:
        mine = [p for p in pairs if (p.strategy, p.stratum) == (cell.strategy, cell.stratum)]
        scored = {m: float(cell.questions[m].scores.mean()) for m in cell.models
                  if not cell.questions[m].scores.empty}  # fmt: skip
        significant = [(p.model_a, p.model_b) for p in mine if p.significant]
        letters = compact_letters(scored, significant)
        family = _family(opts.family, cell.strategy, cell.stratum)
        ranks = rank_sets({(p.model_a, p.model_b): (p.result.diff, p.result.p_value) for p in mine
                           if p.model_a in scored and p.model_b in scored}, list(scored), opts.alpha,
                          mine[0].family_size if mine else None)  # fmt: skip
        for m in cell.models:
            q = cell.questions[m]
            score = (clustered_mean(q.scores.to_numpy(), q.counts.to_numpy(), q.cluster_labels(q.scores.index),
                                    1 - opts.alpha) if not q.scores.empty else _empty_score())  # fmt: skip
            low, high = ranks.get(m, (0, 0))
            scores.append(ModelScore(cell.strategy, cell.stratum, m, score, letters.get(m, "–"),
                                     cell.errors.get(m, 0), family, low, high))  # fmt: skip
    return scores
