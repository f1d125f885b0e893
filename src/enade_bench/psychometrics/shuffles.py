"""Option-shuffle repeats: θ, l_z and accuracy per shuffle and their summaries.

Input is the tidy response frame of :mod:`enade_bench.psychometrics.tidy`
(``respondent, shuffle, item_id, correct``): each (respondent, shuffle) is
one response pattern.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

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


#: The share of the per-shuffle values :func:`summarise_shuffles`' range holds.
LEVEL = 0.95


def summarise_shuffles(
    per_shuffle: pd.DataFrame, columns: Sequence[str] = ("theta", "lz", "accuracy")
) -> pd.DataFrame:
    r"""Mean and 95 % percentile range of per-shuffle statistics for each respondent.

    The range is the central 95 % of the per-shuffle values,
    :math:`[q_{0.025}, q_{0.975}]` (how much one run can vary). Non-finite values
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
            lo, hi = np.quantile(finite, [(1 - LEVEL) / 2, (1 + LEVEL) / 2]) if finite.size else (np.nan,) * 2
            row[f"{col}_mean"] = float(finite.mean()) if finite.size else np.nan
            row[f"{col}_low"] = float(lo)
            row[f"{col}_high"] = float(hi)
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
