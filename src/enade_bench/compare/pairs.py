"""One cell of a comparison: each model's question scores, each pair's test, the item flips.

A *cell* is one strategy and one stratum (a value of the ``--by`` fields).  Within it a
model's records become question scores (mean correctness over the question's replicates);
a pair is compared on the questions both answered
(:func:`~enade_bench.metrics.paired.paired_difference`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from enade_bench.compare.table import grouping_fields
from enade_bench.metrics.paired import PairedDifference, paired_difference

__all__ = ["Grid", "Questions", "compare_pair", "flips", "questions"]


@dataclass(frozen=True)
class Questions:
    """One model's question scores in a cell."""

    scores: pd.Series  # item -> mean correctness
    counts: pd.Series  # item -> records
    clusters: pd.Series  # item -> cluster ('' when none)
    modal: pd.Series  # item -> most frequent prediction


def _modal(predictions: pd.Series) -> str:
    modes = predictions.mode()
    return str(modes.iat[0]) if len(modes) else ""


def questions(rows: pd.DataFrame) -> Questions:
    """Question scores of one model's answered records (no error rows)."""
    grouped = rows.groupby("item", sort=True)
    modal = grouped["prediction"].agg(_modal)
    return Questions(grouped["correct"].mean(), grouped["correct"].size(), grouped["cluster"].first(), modal)


@dataclass(frozen=True)
class Grid:
    """A cell's models on one axis of items (the union of theirs, sorted), for every pair at once.

    ``scores`` is models × items (NaN where a model has no answer), ``counts`` its records (0
    there), ``clusters`` and ``modal`` each model's cluster labels ('' when none) and most
    frequent predictions on that axis; ``info`` one row of the cell's records per item.  A pair
    reads its columns by position: nothing per pair is aligned by label.
    """

    items: pd.Index
    scores: npt.NDArray[np.float64]
    counts: npt.NDArray[np.int64]
    clusters: npt.NDArray[np.object_]
    modal: npt.NDArray[np.object_]
    info: pd.DataFrame

    @classmethod
    def of(cls, qs: list[Questions], rows: pd.DataFrame) -> Grid:
        """The grid of ``qs`` (one per model, in the cell's order) over the cell's answered ``rows``."""
        items: pd.Index = pd.Index([], dtype=object)
        for q in qs:
            items = items.union(q.scores.index)
        scores = np.array([q.scores.reindex(items).to_numpy(dtype=float) for q in qs]).reshape(len(qs), -1)
        counts = np.array([q.counts.reindex(items, fill_value=0).to_numpy() for q in qs]).reshape(len(qs), -1)
        clusters = np.array(
            [q.clusters.reindex(items).fillna("").astype(str).to_numpy(dtype=object) for q in qs],
            dtype=object,
        ).reshape(len(qs), -1)
        modal = np.array([q.modal.reindex(items).to_numpy(dtype=object) for q in qs], dtype=object)
        info = rows.drop_duplicates("item").set_index("item").reindex(items.rename("item"))
        return cls(items, scores, counts.astype(np.int64), clusters, modal.reshape(len(qs), -1), info)

    def cluster_labels(self, model: int, items: npt.NDArray[np.bool_]) -> list[str] | None:
        """Each of ``items``' cluster by ``model`` (an unclustered item its own); ``None`` when none has one."""
        labels = self.clusters[model, items]
        if (labels == "").all():
            return None
        return [c if c else f"item:{i}" for i, c in zip(self.items[items], labels, strict=True)]


def compare_pair(grid: Grid, a: int, b: int, confidence: float) -> tuple[PairedDifference, int]:
    """Model ``a`` − model ``b`` (rows of ``grid``) on their common questions; returns the result
    and the count of the questions only one of them answered."""
    held_a, held_b = ~np.isnan(grid.scores[a]), ~np.isnan(grid.scores[b])
    common = held_a & held_b
    counts_a, counts_b = grid.counts[a, common], grid.counts[b, common]
    result = paired_difference(
        grid.scores[a, common],
        grid.scores[b, common],
        bool((counts_a == 1).all() and (counts_b == 1).all()),
        grid.cluster_labels(a, common),
        confidence,
        np.minimum(counts_a, counts_b),
    )
    return result, int(np.count_nonzero(held_a != held_b))


#: Pairs whose flips are found in one array operation (bounds the memory: pairs × items booleans).
_FLIP_BLOCK = 2048


def flips(
    strategy: str, stratum: str, names: list[str], grid: Grid, pairs: list[tuple[int, int]]
) -> pd.DataFrame:
    """Questions one model of a pair gets right and the other wrong (right: score above 1/2, wrong:
    below), pair by pair in ``pairs``' order, each pair's rows sorted by the exam's fields, then item."""
    table = grid.info.reset_index()
    fields = grouping_fields(table)
    order = np.arange(grid.items.size)
    if grid.items.size:
        ranked = table[[*fields, "item"]].sort_values([*fields, "item"], kind="stable")
        order = ranked.index.to_numpy()
    scores = grid.scores[:, order]
    ends = np.array(pairs, dtype=np.intp).reshape(-1, 2)
    found: list[tuple[npt.NDArray[np.intp], ...]] = []
    for start in range(0, len(ends), _FLIP_BLOCK):
        a, b = ends[start : start + _FLIP_BLOCK, 0], ends[start : start + _FLIP_BLOCK, 1]
        sa, sb = scores[a], scores[b]
        a_right = (sa > 0.5) & (sb < 0.5)
        pair, column = np.nonzero(a_right | ((sb > 0.5) & (sa < 0.5)))  # by pair, then by rank
        right_is_a = a_right[pair, column]
        right = np.where(right_is_a, a[pair], b[pair])
        found.append((right, np.where(right_is_a, b[pair], a[pair]), order[column]))
    if not found or not sum(len(f[0]) for f in found):
        return pd.DataFrame()
    right, wrong, item = (np.concatenate(parts) for parts in zip(*found, strict=True))
    model = np.asarray(names, dtype=object)
    info = grid.info.iloc[item]
    frame = pd.DataFrame(
        {
            "strategy": strategy,
            "stratum": stratum,
            "item": grid.items[item],
            "right": model[right],
            "wrong": model[wrong],
            "score_right": grid.scores[right, item],
            "score_wrong": grid.scores[wrong, item],
            "answer": info["answer"].to_numpy(dtype=object),
            "prediction_right": grid.modal[right, item],
            "prediction_wrong": grid.modal[wrong, item],
            "stem": info["stem"].to_numpy(dtype=object),
        }
    )
    for f in fields:
        frame[f] = info[f].to_numpy(dtype=object)
    return frame
