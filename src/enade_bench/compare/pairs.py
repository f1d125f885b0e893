"""One cell of a comparison: each model's question scores, each pair's test, the item flips.

A *cell* is one strategy and one stratum (a value of the ``--by`` fields).  Within it a
model's records become question scores (mean correctness over the question's replicates);
a pair is compared on the questions both answered
(:func:`~enade_bench.metrics.paired.paired_difference`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from enade_bench.compare.table import grouping_fields
from enade_bench.metrics.paired import PairedDifference, paired_difference

__all__ = ["Questions", "compare_pair", "flips", "questions"]


@dataclass(frozen=True)
class Questions:
    """One model's question scores in a cell."""

    scores: pd.Series  # item -> mean correctness
    counts: pd.Series  # item -> records
    clusters: pd.Series  # item -> cluster ('' when none)
    modal: pd.Series  # item -> most frequent prediction

    def cluster_labels(self, items: pd.Index) -> list[str] | None:
        """Each item's cluster (an unclustered item its own); ``None`` when no item has one."""
        labels = self.clusters.reindex(items).fillna("").astype(str)
        if (labels == "").all():
            return None
        return [c if c else f"item:{i}" for i, c in zip(items, labels, strict=True)]


def _modal(predictions: pd.Series) -> str:
    modes = predictions.mode()
    return str(modes.iat[0]) if len(modes) else ""


def questions(rows: pd.DataFrame) -> Questions:
    """Question scores of one model's answered records (no error rows)."""
    grouped = rows.groupby("item", sort=True)
    modal = grouped["prediction"].agg(_modal)
    return Questions(grouped["correct"].mean(), grouped["correct"].size(), grouped["cluster"].first(), modal)


def compare_pair(qa: Questions, qb: Questions, confidence: float) -> tuple[PairedDifference, pd.Index, int]:
    """A − B on their common questions; returns the result, those questions and the others' count."""
    common = qa.scores.index.intersection(qb.scores.index)
    excluded = len(qa.scores.index.symmetric_difference(qb.scores.index))
    counts_a, counts_b = qa.counts.reindex(common).to_numpy(), qb.counts.reindex(common).to_numpy()
    single = bool((counts_a == 1).all() and (counts_b == 1).all())
    records = np.minimum(counts_a, counts_b)
    result = paired_difference(
        qa.scores.reindex(common).to_numpy(),
        qb.scores.reindex(common).to_numpy(),
        single,
        qa.cluster_labels(common),
        confidence,
        records,
    )
    return result, common, excluded


def flips(
    strategy: str,
    stratum: str,
    a: tuple[str, Questions],
    b: tuple[str, Questions],
    common: pd.Index,
    table: pd.DataFrame,
) -> pd.DataFrame:
    """Questions one model gets right and the other wrong (right: score above 1/2, wrong: below)."""
    (name_a, qa), (name_b, qb) = a, b
    sa, sb = qa.scores.reindex(common), qb.scores.reindex(common)
    fields = grouping_fields(table)
    info = table.drop_duplicates("item").set_index("item").reindex(common)
    rows = []
    for right, wrong, sr, sw, qr, qw in ((name_a, name_b, sa, sb, qa, qb), (name_b, name_a, sb, sa, qb, qa)):
        mask = (sr > 0.5) & (sw < 0.5)
        for item in common[np.asarray(mask)]:
            row = {
                "strategy": strategy,
                "stratum": stratum,
                "item": item,
                "right": right,
                "wrong": wrong,
                "score_right": float(sr[item]),
                "score_wrong": float(sw[item]),
                "answer": info.at[item, "answer"],
                "prediction_right": qr.modal[item],
                "prediction_wrong": qw.modal[item],
                "stem": info.at[item, "stem"],
            }
            row.update({f: info.at[item, f] for f in fields})
            rows.append(row)
    frame = pd.DataFrame(rows)
    return frame.sort_values([*fields, "item"], kind="stable") if len(frame) else frame
