"""Tidy response tables (one row per respondent × shuffle × item) and their wide forms.

The runner writes responses as a tidy :class:`pandas.DataFrame` with columns
``respondent`` (a model, or any examinee id), ``shuffle`` (option-shuffle
repeat, an integer), ``item_id`` and ``correct`` (0/1). Every psychometric
function that takes model output takes this frame.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

TIDY_COLUMNS = ("respondent", "shuffle", "item_id", "correct")


def validate_tidy(frame: pd.DataFrame) -> pd.DataFrame:
    """Check a tidy response frame and normalise its dtypes.

    Returns a copy with ``item_id`` as ``str`` and ``correct`` as float.

    Raises
    ------
    ValueError
        If a column is missing, ``correct`` holds a value other than 0/1, or a
        (respondent, shuffle, item) appears twice.
    """
    missing = [c for c in TIDY_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"response frame lacks column(s) {missing}; expected {list(TIDY_COLUMNS)}")
    out = frame.copy()
    out["item_id"] = out["item_id"].astype(str)
    correct = pd.to_numeric(out["correct"], errors="coerce")
    bad = ~correct.isin([0, 1])
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise ValueError(f"row {row}: correct = {frame['correct'].iloc[row]!r}; expected 0 or 1")
    out["correct"] = correct.astype(float)
    keys = [c for c in TIDY_COLUMNS if c != "correct"]
    dup = out.duplicated(subset=keys)
    if dup.any():
        row = int(np.flatnonzero(dup.to_numpy())[0])
        raise ValueError(f"row {row}: {dict(out[keys].iloc[row])} appears more than once")
    return out


def to_wide(frame: pd.DataFrame, items: Sequence[str] | None = None) -> pd.DataFrame:
    """Pivot a tidy frame to rows (respondent, shuffle) × item columns (NaN = not administered).

    ``items`` fixes the column order (items absent from ``frame`` are all NaN);
    by default the sorted item ids.
    """
    tidy = validate_tidy(frame)
    wide = tidy.pivot_table(
        index=["respondent", "shuffle"], columns="item_id", values="correct", aggfunc="first"
    )
    cols = sorted(wide.columns) if items is None else [str(i) for i in items]
    wide = wide.reindex(columns=cols)
    wide.columns.name = None
    return wide


def aggregate_shuffles(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per respondent: 1 where the item was answered correctly in at least half of
    its option shuffles, else 0 (NaN: never administered).

    Shuffles of one model are not independent examinees; calibration and
    classical statistics use one aggregated pattern per model.

    Returns
    -------
    DataFrame
        Index ``respondent``, one column per item (sorted ids).
    """
    tidy = validate_tidy(frame)
    mean = tidy.groupby(["respondent", "item_id"])["correct"].mean().unstack("item_id")
    mean = mean.reindex(columns=sorted(mean.columns))
    mean.columns.name = None
    return mean.where(mean.isna(), (mean >= 0.5).astype(float))
