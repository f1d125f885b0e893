"""Psychometric figures as in the reference study (ENEM runs), black-and-white readable."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from enade_bench.benchmarks.enem.analysis import RANDOM, ExamAnalysis, Psychometrics
from enade_bench.psychometrics.shuffles import p_correct_matrix
from enade_bench.report.figures import MARKERS, STYLE, FigureFile, save

#: l_z below this flags misfit at the 5 % level (one-sided, standard normal).
LZ_CUT = -1.645


def _models(exam: ExamAnalysis) -> pd.DataFrame:
    return exam.summary.reset_index(drop=True)


def _scatter_models(ax: plt.Axes, exam: ExamAnalysis, y: str) -> None:
    for k, (_, r) in enumerate(_models(exam).iterrows()):
        marker = "x" if r["respondent"] == RANDOM else MARKERS[k % len(MARKERS)]
        xerr = [[max(r["theta_mean"] - r["theta_low"], 0)], [max(r["theta_high"] - r["theta_mean"], 0)]]
        yerr = [[max(r[f"{y}_mean"] - r[f"{y}_low"], 0)], [max(r[f"{y}_high"] - r[f"{y}_mean"], 0)]]
        if not np.isfinite(r[f"{y}_mean"]):
            continue
        ax.errorbar(
            r["theta_mean"],
            r[f"{y}_mean"],
            xerr=xerr,
            yerr=yerr,
            fmt=marker,
            color="black",
            markerfacecolor="white",
            markersize=7,
            capsize=2,
            label=r["respondent"],
        )


def accuracy_theta_figure(exam: ExamAnalysis) -> Figure:
    """Accuracy against θ: the simulated human cloud and each model (intervals over shuffles)."""
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(5.2, 3.8))
        h = exam.humans
        ax.scatter(h["theta"], h["accuracy"], s=4, color="0.7", label="simulated humans", rasterized=True)
        _scatter_models(ax, exam, "accuracy")
        ax.set_xlabel("θ (EAP)")
        ax.set_ylabel("accuracy")
        ax.set_ylim(0, 1)
        ax.set_title(f"{exam.label}: accuracy vs. ability")
        ax.legend(frameon=False, fontsize=7, loc="upper left")
    return fig


def lz_theta_figure(exam: ExamAnalysis) -> Figure:
    """l_z against θ, with the human cloud and the 5 % misfit line."""
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(5.2, 3.8))
        h = exam.humans[np.isfinite(exam.humans["lz"])]
        ax.scatter(h["theta"], h["lz"], s=4, color="0.7", label="simulated humans", rasterized=True)
        _scatter_models(ax, exam, "lz")
        ax.axhline(LZ_CUT, color="black", linestyle="--", linewidth=1, label="l_z = -1.645")
        ax.set_xlabel("θ (EAP)")
        ax.set_ylabel("l_z")
        ax.set_title(f"{exam.label}: person fit vs. ability")
        ax.legend(frameon=False, fontsize=7, loc="lower left")
    return fig


def pattern_heatmap(exam: ExamAnalysis) -> Figure:
    """Models × items ordered by difficulty b; shade = share correct over shuffles."""
    share = p_correct_matrix(exam.tidy, exam.items)
    order = list(share.columns)
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(max(5.0, 0.16 * len(order) + 2.5), 0.45 * len(share) + 1.6))
        image = ax.imshow(
            share.to_numpy(dtype=float), cmap="Greys", vmin=0, vmax=1, aspect="auto", interpolation="nearest"
        )
        ax.set_yticks(range(len(share)), share.index)
        b = dict(zip(exam.items.item_ids, exam.items.b, strict=True))
        ax.set_xticks(range(len(order)), [f"{b[i]:.1f}" for i in order], rotation=90, fontsize=6)
        ax.set_xlabel("items, ordered by difficulty b (label: b)")
        fig.colorbar(image, ax=ax, label="share correct over shuffles")
        ax.set_title(f"{exam.label}: response patterns")
    return fig


def information_figure(exam: ExamAnalysis) -> Figure:
    """Test information curve with each model's θ interval over shuffles."""
    curve = exam.information
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(5.2, 3.6))
        ax.plot(curve["theta"], curve["information"], color="black", label="test information")
        peak = float(curve["information"].max())
        models = _models(exam)
        for k, (_, r) in enumerate(models.iterrows()):
            y = peak * (0.08 + 0.9 * (k + 1) / (len(models) + 1))
            marker = "x" if r["respondent"] == RANDOM else MARKERS[k % len(MARKERS)]
            ax.plot([r["theta_low"], r["theta_high"]], [y, y], color="0.3", linewidth=2)
            ax.plot(r["theta_mean"], y, marker, color="black", markerfacecolor="white", label=r["respondent"])
        ax.set_xlabel("θ")
        ax.set_ylabel("I(θ)")
        ax.set_title(f"{exam.label}: where the exam measures")
        ax.legend(frameon=False, fontsize=7, loc="upper left")
    return fig


def discrimination_figure(exam: ExamAnalysis) -> Figure:
    """Histogram of the discrimination index, with the 0.2 threshold."""
    di = exam.discrimination["di"].to_numpy(dtype=float)
    di = di[np.isfinite(di)]
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(4.6, 3.2))
        ax.hist(di, bins=np.linspace(-1, 1, 21).tolist(), color="0.6", edgecolor="black", hatch="//")
        ax.axvline(0.2, color="black", linestyle="--", linewidth=1, label="DI = 0.2")
        ax.set_xlabel("discrimination index (upper - lower 25%)")
        ax.set_ylabel("items")
        ax.set_title(f"{exam.label}: item discrimination")
        ax.legend(frameon=False, fontsize=7)
    return fig


def psychometric_figures(psy: Psychometrics, folder: Path) -> list[FigureFile]:
    """All psychometric figures of every exam, saved to ``folder``."""
    out: list[FigureFile] = []
    for exam in psy.exams:
        tag = f"{exam.exam.year}_{exam.exam.area}_{exam.booklet}"
        specs = (
            ("accuracy_theta", accuracy_theta_figure, "Accuracy vs. θ; grey: simulated human population."),
            ("lz_theta", lz_theta_figure, "Person fit l_z vs. θ; dashed: 5% misfit cut-off."),
            ("patterns", pattern_heatmap, "Share correct over shuffles, items by difficulty."),
            ("information", information_figure, "Test information and each model's θ interval."),
            ("discrimination", discrimination_figure, "Discrimination index histogram."),
        )
        for name, build, caption in specs:
            out.append(save(build(exam), folder, f"{name}_{tag}", f"{exam.label}: {caption}"))
    return out
