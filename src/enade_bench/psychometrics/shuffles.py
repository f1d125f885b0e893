"""Option-shuffle repeats: θ, l_z and accuracy per shuffle and their summaries.

Input is the tidy response frame of :mod:`enade_bench.psychometrics.tidy`
(``respondent, shuffle, item_id, correct``): each (respondent, shuffle) is
one response pattern.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from enade_bench.psychometrics.estimation import MIRT, Method, Quadrature, estimate_theta
from enade_bench.psychometrics.irt import ItemParams
from enade_bench.psychometrics.personfit import person_fit
from enade_bench.psychometrics.tidy import to_wide, validate_tidy


def score_shuffles(
    frame: pd.DataFrame, items: ItemParams, method: Method = "eap", quadrature: Quadrature = MIRT
) -> pd.DataFrame:
    """θ, SE, l_z, l_z* and accuracy of every (respondent, shuffle) pattern.

    Parameters
    ----------
    frame : DataFrame
        Tidy responses. Items absent from ``items`` (annulled, no parameters)
        count towards ``accuracy`` but not towards θ or l_z.
    items : ItemParams
        Fixed item parameters.
    method : {"eap", "map", "ml", "wle"}
        θ estimator; ``lz_star`` is NaN for EAP (no correction exists).
    quadrature : Quadrature
        Prior and range (default the mirt preset).

    Returns
    -------
    DataFrame
        Columns ``respondent, shuffle, theta, se, lz, lz_star, accuracy,
        n_items, n_correct`` (``n_*`` over the scored items).
    """
    tidy = validate_tidy(frame)
    accuracy = tidy.groupby(["respondent", "shuffle"])["correct"].mean()
    scored = tidy[tidy["item_id"].isin(set(items.item_ids))]
    wide = to_wide(scored, items=list(items.item_ids)).reindex(accuracy.index)
    x = wide.to_numpy(dtype=np.float64)
    est = estimate_theta(x, items, method, quadrature)
    fit = person_fit(x, est, items)
    out = accuracy.index.to_frame(index=False)
    return out.assign(
        theta=est.theta,
        se=est.se,
        lz=fit["lz"].to_numpy(),
        lz_star=fit["lz_star"].to_numpy(),
        accuracy=accuracy.to_numpy(),
        n_items=est.n_items,
        n_correct=est.n_correct,
    )


def _interval(values: np.ndarray, level: float, kind: str) -> tuple[float, float]:
    values = values[np.isfinite(values)]
    if values.size == 0:
        return np.nan, np.nan
    if kind == "percentile":
        lo, hi = np.quantile(values, [(1 - level) / 2, (1 + level) / 2])
        return float(lo), float(hi)
    if kind == "t":
        if values.size < 2:
            return np.nan, np.nan
        half = stats.t.ppf((1 + level) / 2, values.size - 1) * values.std(ddof=1) / np.sqrt(values.size)
        return float(values.mean() - half), float(values.mean() + half)
    raise ValueError(f"interval must be 'percentile' or 't'; got {kind!r}")


def summarise_shuffles(
    per_shuffle: pd.DataFrame,
    columns: Sequence[str] = ("theta", "lz", "accuracy"),
    level: float = 0.95,
    interval: str = "percentile",
) -> pd.DataFrame:
    r"""Mean and interval of per-shuffle statistics for each respondent.

    ``interval="percentile"`` (default): the central ``level`` range of the
    per-shuffle values, :math:`[q_{(1-\ell)/2}, q_{(1+\ell)/2}]` (how much one
    run can vary). ``interval="t"``: Student-t interval for the mean,
    :math:`\bar x \pm t_{(1+\ell)/2,\,K-1}\, s/\sqrt{K}`. Non-finite values
    (not assessable l_z) are skipped; ``n_<column>`` counts the rest.

    Returns
    -------
    DataFrame
        One row per respondent: ``<col>_mean, <col>_low, <col>_high, n_<col>``.
    """
    rows = []
    for respondent, group in per_shuffle.groupby("respondent", sort=True):
        row: dict[str, object] = {"respondent": respondent, "n_shuffles": len(group)}
        for col in columns:
            values = group[col].to_numpy(dtype=np.float64)
            finite = values[np.isfinite(values)]
            lo, hi = _interval(values, level, interval)
            row[f"{col}_mean"] = float(finite.mean()) if finite.size else np.nan
            row[f"{col}_low"] = lo
            row[f"{col}_high"] = hi
            row[f"n_{col}"] = int(finite.size)
        rows.append(row)
    return pd.DataFrame(rows)


def p_correct_matrix(frame: pd.DataFrame, items: ItemParams) -> pd.DataFrame:
    """Respondents × items share of shuffles answered correctly, items by increasing b.

    Only items in ``items`` appear (ties in b keep the order of ``items``);
    a cell is NaN where the respondent never saw the item.
    """
    tidy = validate_tidy(frame)
    order = [items.item_ids[k] for k in np.argsort(items.b, kind="stable")]
    share = tidy.groupby(["respondent", "item_id"])["correct"].mean().unstack("item_id")
    share = share.reindex(columns=order)
    share.columns.name = None
    return share
