"""Test information curves and where a respondent's θ lies on them.

A θ where the test information is a small fraction of its maximum is a θ
the exam measures poorly (SE(θ) = 1/√I(θ) is large): a report can say "this
exam cannot measure this model" there.

References
----------
Birnbaum, A. (1968). In Lord & Novick, *Statistical Theories of Mental Test
Scores*, ch. 20. Addison-Wesley.

Hambleton, R. K., Swaminathan, H., & Rogers, H. J. (1991). *Fundamentals of
Item Response Theory*, ch. 6. Sage.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import optimize

from enade_bench.psychometrics.irt import ItemParams, test_information

#: Below this fraction of the peak information the SE is at least twice its minimum.
LOW_INFORMATION = 0.25


def information_curve(items: ItemParams, grid: ArrayLike | None = None) -> pd.DataFrame:
    r"""Test information and SE over a θ grid.

    .. math:: I(\theta) = \sum_j I_j(\theta), \qquad SE(\theta) = 1/\sqrt{I(\theta)}

    Parameters
    ----------
    items : ItemParams
        The items of one test form.
    grid : array_like, optional
        θ values (default 241 points on [-6, 6]).

    Returns
    -------
    DataFrame
        Columns ``theta``, ``information``, ``se``.
    """
    t = np.linspace(-6.0, 6.0, 241) if grid is None else np.asarray(grid, dtype=np.float64)
    info = test_information(t, items)
    return pd.DataFrame({"theta": t, "information": info, "se": 1.0 / np.sqrt(info)})


@dataclass(frozen=True)
class Peak:
    """Maximum of the test information: where and how much."""

    theta: float
    information: float


def information_peak(items: ItemParams, lim: float = 6.0) -> Peak:
    """Maximum of :math:`I(\\theta)` on ``[-lim, lim]`` (grid search, then bounded refinement)."""
    grid = np.linspace(-lim, lim, 481)
    info = test_information(grid, items)
    k = int(info.argmax())
    lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]
    res = optimize.minimize_scalar(
        lambda t: -float(test_information(np.array([t]), items)[0]),
        bounds=(lo, hi),
        method="bounded",
        options={"xatol": 1e-8},
    )
    best = float(res.x) if -res.fun >= info[k] else float(grid[k])
    return Peak(best, float(test_information(np.array([best]), items)[0]))


def measurement_position(
    theta: ArrayLike, items: ItemParams, threshold: float = LOW_INFORMATION
) -> pd.DataFrame:
    r"""Where each θ lies on the test-information curve.

    .. math:: \rho(\hat\theta) = I(\hat\theta) / \max_\theta I(\theta)

    Parameters
    ----------
    theta : array_like
        Shape ``(n,)``.
    items : ItemParams
        The items of one test form.
    threshold : float
        ``poorly_measured`` is True where :math:`\rho <` threshold (default
        0.25: the SE is at least twice the smallest SE the test can give).

    Returns
    -------
    DataFrame
        Columns ``theta``, ``information``, ``se_at_theta``, ``peak_theta``,
        ``relative_information``, ``side`` ("below"/"above" the peak) and
        ``poorly_measured``.
    """
    t = np.asarray(theta, dtype=np.float64).reshape(-1)
    finite = np.isfinite(t)
    safe = np.where(finite, t, 0.0)
    peak = information_peak(items)
    info = np.where(finite, test_information(safe, items), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        relative = np.where(peak.information > 0, info / peak.information, np.nan)
        se = 1.0 / np.sqrt(info)
    return pd.DataFrame(
        {
            "theta": t,
            "information": info,
            "se_at_theta": se,
            "peak_theta": peak.theta,
            "relative_information": relative,
            "side": np.where(t < peak.theta, "below", "above"),
            "poorly_measured": relative < threshold,
        }
    )
