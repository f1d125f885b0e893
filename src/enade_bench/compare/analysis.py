"""Models side by side: per-model scores, every pair, rank groups and item flips.

Within each strategy (and each value of the ``by`` fields) every model gets its score
with a clustered interval (:func:`~enade_bench.metrics.clustered.clustered_mean`),
every pair of models its paired difference and test on the questions both answered
(:func:`~enade_bench.metrics.paired.paired_difference`); the p-values of the whole
table are adjusted together (Holm or Benjamini–Hochberg) and the models fall into rank
groups (:func:`~enade_bench.metrics.multiplicity.rank_groups`).  Questions only one
model of a pair answered are left out of that pair and counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from enade_bench.compare.table import grouping_fields
from enade_bench.errors import UserError
from enade_bench.metrics.clustered import ClusteredMean, clustered_mean
from enade_bench.metrics.multiplicity import adjust_pvalues, minimum_detectable_difference, rank_groups
from enade_bench.metrics.paired import PairedDifference, paired_difference

__all__ = ["Comparison", "ModelScore", "PairComparison", "compare_table"]


@dataclass(frozen=True)
class ModelScore:
    """One model in one cell of the comparison (a strategy and a stratum)."""

    strategy: str
    stratum: str
    model: str
    score: ClusteredMean
    rank_group: int


@dataclass(frozen=True)
class PairComparison:
    """Model A against model B in one cell; ``n_excluded`` questions only one of them answered."""

    strategy: str
    stratum: str
    model_a: str
    model_b: str
    result: PairedDifference
    n_excluded: int
    p_adjusted: float
    mdd: float


@dataclass
class Comparison:
    """Everything :func:`compare_table` found.

    Attributes
    ----------
    scores, pairs
        One entry per model and per pair in each cell.
    flips
        One row per question one model of a pair got right and the other wrong.
    adjust, alpha, by
        The settings used.
    fields
        The exam's grouping fields (columns of ``flips``).
    notes
        What the reader should know (questions excluded, cells with one model).
    """

    scores: list[ModelScore]
    pairs: list[PairComparison]
    flips: pd.DataFrame
    adjust: str
    alpha: float
    by: list[str]
    fields: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def scores_frame(self) -> pd.DataFrame:
        """One row per model and cell, every number of its :class:`ClusteredMean`."""
        rows = [{"strategy": s.strategy, "stratum": s.stratum, "model": s.model, "accuracy": s.score.mean,
                 "se": s.score.se, "ci_low": s.score.ci_low, "ci_high": s.score.ci_high,
                 "design_effect": s.score.design_effect, "n_questions": s.score.n_questions,
                 "n_records": s.score.n_records, "n_clusters": s.score.n_clusters, "interval": s.score.method,
                 "rank_group": s.rank_group} for s in self.scores]  # fmt: skip
        return pd.DataFrame(rows)

    def pairs_frame(self) -> pd.DataFrame:
        """One row per pair and cell: difference, interval, test, p-values, detectable difference."""
        rows = [{"strategy": p.strategy, "stratum": p.stratum, "model_a": p.model_a, "model_b": p.model_b,
                 "accuracy_a": p.result.mean_a, "accuracy_b": p.result.mean_b, "diff": p.result.diff,
                 "se": p.result.se, "ci_low": p.result.ci_low, "ci_high": p.result.ci_high,
                 "test": p.result.test, "statistic": p.result.statistic, "p_value": p.result.p_value,
                 "p_adjusted": p.p_adjusted, "mdd_80": p.mdd, "n_questions": p.result.n_questions,
                 "n_clusters": p.result.n_clusters, "n_excluded": p.n_excluded, "a_better": p.result.a_only,
                 "b_better": p.result.b_only, "why_this_test": p.result.reason} for p in self.pairs]  # fmt: skip
        return pd.DataFrame(rows)


@dataclass(frozen=True)
class _Questions:
    """One model's question scores in a cell."""

    scores: pd.Series  # item -> mean correctness
    counts: pd.Series  # item -> records
    clusters: pd.Series  # item -> cluster ('' when none)
    modal: pd.Series  # item -> most frequent prediction


def _modal(predictions: pd.Series) -> str:
    modes = predictions.mode()
    return str(modes.iat[0]) if len(modes) else ""


def _questions(rows: pd.DataFrame) -> _Questions:
    grouped = rows.groupby("item", sort=True)
    modal = grouped["prediction"].agg(_modal)
    return _Questions(grouped["correct"].mean(), grouped["correct"].size(), grouped["cluster"].first(), modal)


def _clusters(items: pd.Index, questions: _Questions) -> list[str] | None:
    labels = questions.clusters.reindex(items).fillna("").astype(str)
    if (labels == "").all():
        return None
    return [c if c else f"item:{i}" for i, c in zip(items, labels, strict=True)]  # unclustered: its own


def _cells(table: pd.DataFrame, by: list[str]) -> list[tuple[str, str, pd.DataFrame]]:
    keys = ["strategy", *by]
    out = []
    for key, rows in table.groupby(keys, sort=False, dropna=False):
        values = key if isinstance(key, tuple) else (key,)
        stratum = ", ".join(f"{k}={v}" for k, v in zip(by, values[1:], strict=True)) or "all"
        out.append((str(values[0]), stratum, rows))
    return out


def compare_table(table: pd.DataFrame, by: list[str] | None = None, adjust: str = "holm",
                  alpha: float = 0.05) -> Comparison:  # fmt: skip
    """Compare the models of a long table (:mod:`enade_bench.compare.table`).

    Raises
    ------
    UserError
        A ``by`` field the table does not have, or fewer than two models.
    """
    by = list(by or [])
    unknown = [f for f in by if f not in grouping_fields(table)]
    if unknown:
        raise UserError(
            f"--by {', '.join(unknown)}: no such field (fields: {', '.join(grouping_fields(table)) or 'none'})"
        )
    if table["model"].nunique() < 2:
        raise UserError(f"a comparison needs two or more models; found {sorted(table['model'].unique())}")
    notes: list[str] = []
    cells = []
    for strategy, stratum, rows in _cells(table, by):
        models = list(dict.fromkeys(rows["model"]))
        questions = {m: _questions(rows[rows["model"] == m]) for m in models}
        cells.append((strategy, stratum, models, questions))
    raw: list[tuple[str, str, str, str, PairedDifference, int]] = []
    flips: list[pd.DataFrame] = []
    for strategy, stratum, models, questions in cells:
        if len(models) < 2:
            notes.append(f"{strategy} ({stratum}): only {models[0]} has results; nothing to compare")
        for a, b in combinations(models, 2):
            qa, qb = questions[a], questions[b]
            common = qa.scores.index.intersection(qb.scores.index)
            excluded = len(qa.scores.index.symmetric_difference(qb.scores.index))
            if excluded:
                notes.append(f"{strategy} ({stratum}): {excluded} question(s) answered by only one of {a}, {b} "
                             "are left out of that pair")  # fmt: skip
            single = bool((qa.counts.reindex(common) == 1).all() and (qb.counts.reindex(common) == 1).all())
            result = paired_difference(qa.scores.reindex(common).to_numpy(), qb.scores.reindex(common).to_numpy(),
                                       single, _clusters(common, qa))  # fmt: skip
            raw.append((strategy, stratum, a, b, result, excluded))
            flips.append(_flips(strategy, stratum, (a, qa), (b, qb), common, table))
    adjusted = adjust_pvalues([r[4].p_value for r in raw], adjust)
    pairs = [PairComparison(s, st, a, b, r, n, float(p), minimum_detectable_difference(r.se, alpha))
             for (s, st, a, b, r, n), p in zip(raw, adjusted, strict=True)]  # fmt: skip
    scores = []
    for strategy, stratum, models, questions in cells:
        means = {m: float(questions[m].scores.mean()) for m in models}
        cell_p = {
            (p.model_a, p.model_b): p.p_adjusted
            for p in pairs
            if (p.strategy, p.stratum) == (strategy, stratum)
        }
        groups = rank_groups(means, cell_p, alpha)
        for m in models:
            q = questions[m]
            score = clustered_mean(q.scores.to_numpy(), q.counts.to_numpy(), _clusters(q.scores.index, q))
            scores.append(ModelScore(strategy, stratum, m, score, groups[m]))
    frame = pd.concat(flips, ignore_index=True) if flips else pd.DataFrame()
    return Comparison(
        scores, pairs, frame, adjust, alpha, by, grouping_fields(table), list(dict.fromkeys(notes))
    )


def _flips(strategy: str, stratum: str, a: tuple[str, _Questions], b: tuple[str, _Questions],
           common: pd.Index, table: pd.DataFrame) -> pd.DataFrame:  # fmt: skip
    """Questions one model gets right and the other wrong (right: score above 1/2, wrong: below)."""
    (name_a, qa), (name_b, qb) = a, b
    sa, sb = qa.scores.reindex(common), qb.scores.reindex(common)
    fields = grouping_fields(table)
    info = table.drop_duplicates("item").set_index("item").reindex(common)
    rows = []
    for right, wrong, sr, sw, qr, qw in ((name_a, name_b, sa, sb, qa, qb), (name_b, name_a, sb, sa, qb, qa)):
        mask = (sr > 0.5) & (sw < 0.5)
        for item in common[np.asarray(mask)]:
            row = {"strategy": strategy, "stratum": stratum, "item": item, "right": right, "wrong": wrong,
                   "score_right": float(sr[item]), "score_wrong": float(sw[item]),
                   "answer": info.at[item, "answer"], "prediction_right": qr.modal[item],
                   "prediction_wrong": qw.modal[item], "stem": info.at[item, "stem"]}  # fmt: skip
            row.update({f: info.at[item, f] for f in fields})
            rows.append(row)
    frame = pd.DataFrame(rows)
    return frame.sort_values([*fields, "item"], kind="stable") if len(frame) else frame
