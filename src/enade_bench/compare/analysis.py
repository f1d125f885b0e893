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
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

from enade_bench.compare.checks import check_errors, check_nested, replicate_warnings, unpaired_items
from enade_bench.compare.comparison import (
    ADJUST_NAMES,
    DEFAULT_FAMILY,
    FAMILIES,
    CompareOptions,
    Comparison,
    ModelScore,
    PairComparison,
)
from enade_bench.compare.pairs import Grid, Questions, compare_pair, flips, questions
from enade_bench.compare.table import ERROR_COLUMN, grouping_fields
from enade_bench.errors import UserError
from enade_bench.metrics.clustered import ClusteredMean, clustered_mean
from enade_bench.metrics.letters import compact_letters
from enade_bench.metrics.multiplicity import adjust_pvalues
from enade_bench.metrics.paired import MCNEMAR, SCORE_TEST_NOTE, SIGN_FLIP, PairedDifference, pair_interval
from enade_bench.metrics.power import pair_mdd, pair_mdd_range
from enade_bench.metrics.ranks import rank_sets
from enade_bench.metrics.simultaneous import Statement, shown_statements

__all__ = [
    "DEFAULT_FAMILY",
    "FAMILIES",
    "CompareOptions",
    "Comparison",
    "ModelScore",
    "PairComparison",
    "cell_name",
    "compare_table",
]


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
    grid: Grid  # the models' question scores on one item axis


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
    progress = _Progress(sum(len(c.models) * (len(c.models) - 1) // 2 for c in cells), len(cells))
    for cell in cells:
        if len(cell.models) < 2:
            notes.append(
                f"{cell_name(cell.strategy, cell.stratum)}: only {cell.models[0]} has results; "
                "nothing to compare"
            )
        ends = list(combinations(range(len(cell.models)), 2))
        for i, j in ends:
            progress.tick("pairs tested")
            a, b = cell.models[i], cell.models[j]
            result, excluded = compare_pair(cell.grid, i, j, 1 - opts.alpha)
            if math.isnan(result.p_value):
                notes.append(
                    f"{cell_name(cell.strategy, cell.stratum)}: {a} and {b} are not comparable "
                    f"({result.reason}): no p, outside the {opts.adjust} family, and their letters "
                    "say nothing about each other"
                )
            if result.test == SIGN_FLIP:
                notes.append(f"{cell_name(cell.strategy, cell.stratum)}: {a} vs {b}: {result.reason}")
            raw.append((cell, a, b, result, excluded))
        flip_frames.append(flips(cell.strategy, cell.stratum, cell.models, cell.grid, ends))
    if any(r.test == MCNEMAR for *_, r, _ in raw):
        notes.append(SCORE_TEST_NOTE)
    pairs = _adjust(raw, opts, progress)
    scores = _scores(cells, pairs, opts)
    found = [f for f in flip_frames if len(f)]
    frame = pd.concat(found, ignore_index=True) if found else pd.DataFrame()
    return Comparison(
        scores,
        pairs,
        frame,
        unpaired_frame,
        opts,
        grouping_fields(table),
        list(dict.fromkeys(notes)),
        warnings,
    )


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
                notes.append(
                    f"{cell_name(strategy, stratum)}: every record of {m} is an error "
                    f"({errs.get(m, 0)}): no score, not comparable"
                )
        cells.append(_Cell(strategy, stratum, models, qs, errs, Grid.of([qs[m] for m in models], ok)))
        _note_copies(cell_name(strategy, stratum), qs, notes)
    return cells


def _note_copies(cell: str, qs: dict[str, Questions], notes: list[str]) -> None:
    """A note for models with the same score and prediction on every question (issue 61): two
    copies of one run, most likely, compared as if they were two models."""
    groups: dict[tuple[object, ...], list[str]] = {}
    for model, q in qs.items():
        if not q.scores.empty:
            key = (tuple(q.scores.items()), tuple(q.modal.items()))
            groups.setdefault(key, []).append(str(model))
    for same in (g for g in groups.values() if len(g) > 1):
        notes.append(
            f"{cell}: {', '.join(same)} have the same score and prediction on every question (copies of "
            "one run?): their differences are 0 by construction"
        )


def _unpaired(answered_sets: list[tuple[str, str, dict[str, pd.Index]]], notes: list[str]) -> pd.DataFrame:
    """``unpaired.csv``: the items some models of a cell lack; a note per cell with counts."""
    frames = [unpaired_items(*a) for a in answered_sets]
    for (strategy, stratum, _), frame in zip(answered_sets, frames, strict=True):
        if len(frame):
            counts = frame["missing_for"].value_counts(sort=False).items()
            missing = ", ".join(f"{m} lacks {n}" for m, n in counts)
            notes.append(
                f"{cell_name(strategy, stratum)}: {frame['item'].nunique()} item(s) answered by some "
                f"models and not others are left out of those pairs ({missing}; unpaired.csv)"
            )
    return pd.concat(frames, ignore_index=True) if frames else unpaired_items("", "", {})


#: A comparison of this many pairs or more says what it will do first (docs/performance.md).
MANY_PAIRS = 20
#: Seconds between two progress lines.
PROGRESS_S = 5.0


class _Progress:
    """Lines on stderr for a long comparison (issue 61): the pairs to test, then every
    :data:`PROGRESS_S` seconds how many of them each stage has done."""

    def __init__(self, pairs: int, cells: int) -> None:
        self.total, self.done, self.stage = pairs, 0, "pairs tested"
        self.start = self.last = time.monotonic()
        if pairs >= MANY_PAIRS:
            self._line(f"{pairs:,} pairs of models to test in {cells} cell(s), then their adjusted intervals")

    def _line(self, text: str) -> None:
        print(f"compare: {text}", file=sys.stderr, flush=True)

    def tick(self, stage: str) -> None:
        if stage != self.stage:
            self.stage, self.done = stage, 0
        self.done += 1
        now = time.monotonic()
        if now - self.last >= PROGRESS_S:
            self.last = now
            self._line(f"{stage}: {self.done:,} for {self.total:,} pairs ({now - self.start:.0f} s)")


def _intervals(
    results: list[PairedDifference], progress: _Progress
) -> Callable[[int, float], tuple[float, float]]:
    """Pair ``i``'s interval at ``confidence`` by its own test's procedure."""

    def interval(i: int, confidence: float) -> tuple[float, float]:
        progress.tick("adjusted intervals computed")
        return pair_interval(results[i], confidence)

    return interval


def _adjust(
    raw: list[tuple[_Cell, str, str, PairedDifference, int]], opts: CompareOptions, progress: _Progress
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
            pvalues, [r.diff for r in results], opts.alpha, opts.adjust, _intervals(results, progress)
        )
        size = sum(1 for p in pvalues if not math.isnan(p))
        sizes[label] = size
        for k, r, statement in zip(index, results, shown, strict=True):
            statements[k] = statement
            if statement is not None:
                progress.tick("detectable differences computed")
                magnitude[k] = pair_interval(r, 1 - opts.alpha / size)
    out = []
    for (c, a, b, r, n), p, statement, (m_low, m_high), label in zip(
        raw, adjusted, statements, magnitude, labels, strict=True
    ):
        if statement is None:
            out.append(
                PairComparison(c.strategy, c.stratum, a, b, r, n, float(p), math.nan, label, sizes[label])
            )
            continue
        out.append(
            PairComparison(
                c.strategy,
                c.stratum,
                a,
                b,
                r,
                n,
                float(p),
                pair_mdd(r, statement.alpha_i),
                label,
                sizes[label],
                statement.low,
                statement.high,
                statement.confidence,
                statement.different,
                pair_mdd(r, opts.alpha),
                statement.alpha_i,
                statement.kind,
                m_low,
                m_high,
                *pair_mdd_range(r, statement.alpha_i),
            )
        )
    return out


def _scores(cells: list[_Cell], pairs: list[PairComparison], opts: CompareOptions) -> list[ModelScore]:
    """Each model's clustered score and its letters within its cell."""
    scores = []
    for cell in cells:
        mine = [p for p in pairs if (p.strategy, p.stratum) == (cell.strategy, cell.stratum)]
        scored = {
            m: float(cell.questions[m].scores.mean())
            for m in cell.models
            if not cell.questions[m].scores.empty
        }
        significant = [(p.model_a, p.model_b) for p in mine if p.significant]
        letters = compact_letters(scored, significant)
        family = _family(opts.family, cell.strategy, cell.stratum)
        ranks = rank_sets(
            {
                (p.model_a, p.model_b): (p.result.diff, p.result.p_value)
                for p in mine
                if p.model_a in scored and p.model_b in scored
            },
            list(scored),
            opts.alpha,
            mine[0].family_size if mine else None,
        )
        for k, m in enumerate(cell.models):
            q = cell.questions[m]
            answered = ~np.isnan(cell.grid.scores[k])
            score = (
                clustered_mean(
                    q.scores.to_numpy(),
                    q.counts.to_numpy(),
                    cell.grid.cluster_labels(k, answered),
                    1 - opts.alpha,
                )
                if not q.scores.empty
                else _empty_score()
            )
            low, high = ranks.get(m, (0, 0))
            scores.append(
                ModelScore(
                    cell.strategy,
                    cell.stratum,
                    m,
                    score,
                    letters.get(m, "–"),
                    cell.errors.get(m, 0),
                    family,
                    low,
                    high,
                )
            )
    return scores
