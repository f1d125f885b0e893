"""Forest plot of a family's paired differences: each pair's statement, its magnitude and its MDD.

One row per pair, sorted by the difference, labelled ``A − B``:

* the statement shown beside the adjusted p (:mod:`enade_bench.metrics.simultaneous`):
  an interval as a dark bar; Holm's bound at 0 for a rejected pair as an arrow from 0 in
  the effect's direction, ending at its other limit;
* the Bonferroni :math:`\\alpha/K` interval (the magnitude beside a bound), lighter and
  thicker behind it;
* the pair's minimum detectable difference (80 % power at its level) as a grey band
  :math:`[-\\text{MDD}, +\\text{MDD}]` around 0 on its row (a note at the row's end where
  it is not reachable at this size): a difference inside the band is likely to go unseen; a
  clustered pair's range at the 10 % and 90 % limits of its variance as darker ticks at the
  band's lower edge, on both sides;
* the estimate as a dot, and a line at 0.

The figure takes typed rows (:class:`ForestRow`), not the comparison itself: ``report``
sits below ``compare`` in the layers (tests/test_architecture.py), so the comparison
builds the rows (:func:`enade_bench.compare.render.forest_figures`) and this module draws
them, for ``compare --out`` and the HTML report alike.  Black and white, like the other
figures (:mod:`enade_bench.report.figures`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from enade_bench.report.figures import STYLE

__all__ = ["ForestRow", "forest_figure"]


@dataclass(frozen=True)
class ForestRow:
    """One pair of a forest plot, in the plot's unit (points for accuracies).

    Attributes
    ----------
    label
        ``A − B``.
    diff
        The estimate.
    statement, low, high
        The shown statement: ``interval`` with its limits, ``> 0`` (``low`` 0, ``high`` its
        other limit) or ``< 0`` (``high`` 0) as in every statement-bearing CSV
        (:data:`enade_bench.metrics.simultaneous.ENCODING`).
    magnitude_low, magnitude_high
        The Bonferroni :math:`\\alpha/K` interval (NaN: none).
    mdd
        The minimum detectable difference (``inf``: not reachable; NaN: none).
    mdd_range
        Its range at the 10 % and 90 % limits of its variance (NaNs: none).
    """

    label: str
    diff: float
    statement: str
    low: float
    high: float
    magnitude_low: float = math.nan
    magnitude_high: float = math.nan
    mdd: float = math.nan
    mdd_range: tuple[float, float] = (math.nan, math.nan)


def _limits(rows: Sequence[ForestRow]) -> tuple[float, float]:
    values = [
        v
        for r in rows
        for v in (r.low, r.high, r.magnitude_low, r.magnitude_high, r.diff, 0.0)
        if math.isfinite(v)
    ]
    finite_mdd = [m for r in rows for m in (r.mdd, *r.mdd_range) if math.isfinite(m)]
    values += finite_mdd + [-m for m in finite_mdd]
    low, high = min(values), max(values)
    pad = 0.05 * (high - low or 1.0)
    return low - pad, high + pad


def forest_figure(rows: Sequence[ForestRow], title: str, xlabel: str = "difference A − B (points)") -> Figure:
    """Draw the forest plot of ``rows`` (module docstring); the caller saves it.

    Parameters
    ----------
    rows
        The family's pairs, any order (drawn sorted by ``diff``, the largest on top).
    title
        Names the family (strategy, stratum and adjustment).
    xlabel
        The axis label, with the unit.

    Returns
    -------
    matplotlib.figure.Figure
    """
    ordered = sorted(rows, key=lambda r: r.diff if math.isfinite(r.diff) else -math.inf)
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(6.5, 2.2 + 0.4 * max(1, len(ordered))))
        left, right = _limits(ordered) if ordered else (-1.0, 1.0)
        for y, r in enumerate(ordered):
            if math.isinf(r.mdd):
                ax.annotate(
                    "MDD 80 %: not reachable",
                    (1.0, y),
                    xycoords=("axes fraction", "data"),
                    xytext=(4, 0),
                    textcoords="offset points",
                    va="center",
                    fontsize="x-small",
                )
            elif not math.isnan(r.mdd):
                ax.fill_betweenx([y - 0.4, y + 0.4], -r.mdd, r.mdd, color="0.9", lw=0, zorder=0)
            if all(math.isfinite(m) for m in r.mdd_range):
                low, high = r.mdd_range
                ax.hlines([y - 0.4] * 2, [-high, low], [-low, high], color="0.55", lw=2.5, zorder=1)
            if math.isfinite(r.magnitude_low) and math.isfinite(r.magnitude_high):
                ax.hlines(y, r.magnitude_low, r.magnitude_high, color="0.7", lw=5, zorder=1)
            if r.statement in ("> 0", "< 0"):
                end = r.high if r.statement == "> 0" else r.low
                end = end if math.isfinite(end) else (right if r.statement == "> 0" else left)
                ax.annotate(
                    "",
                    xy=(end, y),
                    xytext=(0.0, y),
                    zorder=2,
                    arrowprops={"arrowstyle": "-|>", "color": "0.1", "lw": 1.6},
                )
            elif math.isfinite(r.low) and math.isfinite(r.high):
                ax.hlines(y, r.low, r.high, color="0.1", lw=1.6, zorder=2)
                ax.vlines([r.low, r.high], y - 0.15, y + 0.15, color="0.1", lw=1.2, zorder=2)
            if math.isfinite(r.diff):
                ax.plot([r.diff], [y], "o", color="black", ms=4, zorder=3)
        ax.axvline(0.0, color="0.3", lw=0.8, ls="--", zorder=1)
        ax.set_xlim(left, right)
        ax.set_ylim(-0.7, len(ordered) - 0.3)
        ax.set_yticks(range(len(ordered)), [r.label for r in ordered])
        ax.set_xlabel(
            f"{xlabel}\ndark: the statement shown (bar: interval; arrow from 0: bound > 0 or < 0)\n"
            "light: Bonferroni alpha/K interval; grey band: ±MDD 80 % (a note where not reachable),\n"
            "its edge's dark ticks: the MDD at the 10 % and 90 % limits of its variance",
            fontsize="small",
        )
        ax.set_title(title, fontsize="medium")
        fig.tight_layout()
    return fig
