"""Summaries of a post-hoc CAT simulation: items against SE and error, the target check.

See :mod:`enade_bench.psychometrics.cat` for the algorithm; the target of
issue 12 on the published ENEM patterns is: median items ≤ 20 and
:math:`|\\hat\\theta_{CAT} - \\hat\\theta_{full}| \\le 0.15` for at least 80 % of patterns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from enade_bench.psychometrics.cat_posthoc import CatSimulation


def cat_curve(sim: CatSimulation, tolerance: float = 0.15) -> pd.DataFrame:
    """Items against SE and error over the full-length paths.

    Returns
    -------
    DataFrame
        One row per test length ``k``: ``n_patterns`` (patterns with at least
        ``k`` items), ``se_median``, ``se_q25``, ``se_q75``,
        ``abs_error_median``, ``abs_error_mean`` (of
        :math:`|\\hat\\theta_k - \\hat\\theta_{full}|`), ``within_tol`` (share
        with that error ≤ ``tolerance``) and ``stopped`` (share of patterns
        whose stopping rule fired by ``k``).
    """
    err = np.abs(sim.theta_path - sim.theta_full[:, None])
    rows = []
    for k in range(sim.se_path.shape[1]):
        ok = ~np.isnan(sim.se_path[:, k])
        if not ok.any():
            break
        se, e = sim.se_path[ok, k], err[ok, k]
        rows.append(
            {
                "k": k + 1,
                "n_patterns": int(ok.sum()),
                "se_median": float(np.median(se)),
                "se_q25": float(np.quantile(se, 0.25)),
                "se_q75": float(np.quantile(se, 0.75)),
                "abs_error_median": float(np.median(e)),
                "abs_error_mean": float(e.mean()),
                "within_tol": float((e <= tolerance).mean()),
                "stopped": float((sim.n_items <= k + 1).mean()),
            }
        )
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class CatSummary:
    """The CAT target check over a set of patterns.

    Attributes
    ----------
    n_patterns : int
    median_items, median_full_items : float
        Median items used by the CAT and in the full test.
    median_se, median_se_full : float
    share_within : float
        Share of patterns with :math:`|\\hat\\theta_{CAT} - \\hat\\theta_{full}| \\le` ``tolerance``.
    share_stopped_by_rule : float
    tolerance, max_median_items, min_share_within : float
        The target (defaults: 0.15, 20 items, 80 %).
    passed : bool
        ``median_items <= max_median_items and share_within >= min_share_within``.
    """

    n_patterns: int
    median_items: float
    median_full_items: float
    median_se: float
    median_se_full: float
    share_within: float
    share_stopped_by_rule: float
    tolerance: float
    max_median_items: float
    min_share_within: float
    passed: bool


def cat_summary(
    sim: CatSimulation, tolerance: float = 0.15, max_median_items: float = 20, min_share_within: float = 0.8
) -> CatSummary:
    """Summarise a post-hoc simulation against the target (issue 12 defaults)."""
    within = float((np.abs(sim.error) <= tolerance).mean())
    median_items = float(np.median(sim.n_items))
    return CatSummary(
        n_patterns=int(sim.n_items.size),
        median_items=median_items,
        median_full_items=float(np.median(sim.n_available)),
        median_se=float(np.median(sim.se)),
        median_se_full=float(np.median(sim.se_full)),
        share_within=within,
        share_stopped_by_rule=float((sim.stopped_by == "rule").mean()),
        tolerance=tolerance,
        max_median_items=max_median_items,
        min_share_within=min_share_within,
        passed=bool(median_items <= max_median_items and within >= min_share_within),
    )
