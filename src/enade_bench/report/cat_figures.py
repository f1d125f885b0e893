"""Figures of the adaptive-testing simulation (black-and-white paper style)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure

from enade_bench.report.figures import STYLE


def cat_curve_figure(curve: pd.DataFrame, tolerance: float = 0.15, target_se: float | None = None) -> Figure:
    """Two panels against items administered: SE (median, quartiles) and error to the full-test θ.

    ``curve`` is :func:`~enade_bench.psychometrics.cat.cat_curve`'s output.
    """
    with plt.rc_context({**STYLE, "text.parse_math": True}):  # its own maths (θ̂); no data text here
        fig, (left, right) = plt.subplots(1, 2, figsize=(7.0, 2.8))
        k = curve["k"]
        left.fill_between(k, curve["se_q25"], curve["se_q75"], color="0.85", label="SE, quartiles")
        left.plot(k, curve["se_median"], color="black", marker="o", markersize=2.5, label="SE, median")
        if target_se is not None:
            left.axhline(target_se, color="black", linestyle=":", linewidth=1, label=f"SE = {target_se:g}")
        left.set_xlabel("items administered")
        left.set_ylabel("EAP posterior SD")
        left.legend(frameon=False, fontsize=7)
        right.plot(
            k,
            curve["abs_error_median"],
            color="black",
            marker="s",
            markersize=2.5,
            label=r"median $|\hat\theta_{CAT}-\hat\theta_{full}|$",
        )
        right.plot(k, curve["abs_error_mean"], color="0.4", linestyle="--", label="mean")
        twin = right.twinx()
        twin.plot(
            k,
            curve["within_tol"],
            color="0.55",
            linestyle=":",
            marker="^",
            markersize=2.5,
            label=f"share within {tolerance:g}",
        )
        twin.axhline(0.8, color="0.55", linewidth=0.6)
        twin.set_ylim(0, 1.02)
        twin.set_ylabel(f"share with error ≤ {tolerance:g}")
        right.set_xlabel("items administered")
        right.set_ylabel("error to full-test θ")
        lines = right.get_legend_handles_labels()
        extra = twin.get_legend_handles_labels()
        right.legend(lines[0] + extra[0], lines[1] + extra[1], frameon=False, fontsize=7)
        fig.tight_layout()
    return fig
