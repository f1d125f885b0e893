"""Figures of the accuracy and position-bias results (matplotlib, PNG and PDF).

All figures are readable in black and white: bars carry hatch patterns,
series carry distinct markers and line styles, and colours are greys.

Text is drawn literally (``text.parse_math`` off in :data:`STYLE`): group values,
model and experiment names come from data files, where a ``$`` is a currency
(``R$ 10 e R$ 20``) or a chemical formula in TeX, never matplotlib's mathtext. A
figure that wants maths turns it on for its own text (``Text.set_parse_math``).
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.text import Text
from numpy.typing import ArrayLike

from enade_bench.report.loader import RunEntry, breakdown_fields, experiments, strategies
from enade_bench.report.table import fmt
from enade_bench.results.safe_write import file_stem, write_bytes

HATCHES = ("", "///", "...", "xxx", "\\\\\\", "++", "oo", "--")
GREYS = ("0.25", "0.85", "0.55", "1.0", "0.7", "0.4", "0.95", "0.15")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
STYLE: dict[Any, Any] = {
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "savefig.dpi": 150,
    "pdf.fonttype": 42,
    "text.parse_math": False,  # data text ($ in a group value or a name) is drawn as written
}


@dataclass
class FigureFile:
    """A saved figure: its name, caption and the PNG and PDF paths."""

    name: str
    caption: str
    png: Path
    pdf: Path


def _control_escaped(text: str) -> str:
    """``text`` with control characters but line breaks and tabs written as escapes (``\\x00``)."""
    return "".join(
        c.encode("unicode_escape").decode("ascii")
        if (ord(c) < 32 and c not in "\n\t") or 127 <= ord(c) < 160
        else c
        for c in text
    )


def _escape_texts(fig: Figure) -> None:
    """Every text of ``fig`` with control characters escaped (before it is laid out or drawn: a
    NUL or an ESC in a name is drawn as ``\\x00``, without matplotlib's glyph warnings)."""
    for text in fig.findobj(Text):
        shown = text.get_text()
        if not shown.isprintable():
            text.set_text(_control_escaped(shown))


def save(fig: Figure, folder: Path, name: str, caption: str) -> FigureFile:
    """Save ``fig`` as ``<name>.png`` and ``<name>.pdf`` in ``folder`` and close it.

    Rendered in memory and written by the one safe writer (:mod:`enade_bench.results.safe_write`:
    atomic, never through a link); a ``name`` that is not one safe file name (an experiment
    or strategy name from a results file made elsewhere) is mapped to one, and said.  Control
    characters in its texts (a NUL or an ESC in a model or group name) are drawn as escapes.
    """
    stem = file_stem(name, "figure")
    png, pdf = folder / f"{stem}.png", folder / f"{stem}.pdf"
    _escape_texts(fig)
    try:
        for path in (png, pdf):
            buffer = io.BytesIO()
            fig.savefig(buffer, format=path.suffix[1:], bbox_inches="tight")
            write_bytes(path, buffer.getvalue())
    finally:
        plt.close(fig)
    return FigureFile(name, caption, png, pdf)


def _bar(ax: plt.Axes, x: ArrayLike, height: ArrayLike, width: float, k: int, **kw: Any) -> None:
    ax.bar(
        x,
        height,
        width,
        color=GREYS[k % len(GREYS)],
        hatch=HATCHES[k % len(HATCHES)],
        edgecolor="black",
        linewidth=0.6,
        **kw,
    )


def _errors(values: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    return np.vstack([np.clip(values - low, 0, None), np.clip(high - values, 0, None)])


def position_figure(entry: RunEntry) -> Figure | None:
    """Share of predictions at each displayed position vs. the correct answer's share."""
    blocks = entry.result.position_bias or {}
    if not blocks:
        return None
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(
            1, len(blocks), figsize=(3.4 * len(blocks), 3.0), squeeze=False, layout="constrained"
        )
        for ax, (k, block) in zip(axes[0], blocks.items(), strict=True):
            x = np.arange(len(block.positions))
            pred = np.asarray(block.prediction_shares or [0.0] * x.size, dtype=float)
            _bar(ax, x - 0.2, pred, 0.4, 0, label="predictions")  # type: ignore[arg-type]
            _bar(ax, x + 0.2, np.asarray(block.answer_shares), 0.4, 1, label="correct answer")  # type: ignore[arg-type]
            ax.axhline(1 / x.size, color="black", linestyle=":", linewidth=1, label="uniform")
            ax.set_xticks(x, block.positions)
            ax.set_ylim(0, 1)
            ax.set_xlabel("displayed position")
            ax.set_title(
                f"{k} options: BPC {fmt(block.bpc_tvd, 2)} (n={block.n_answered})", fontsize="medium"
            )
        axes[0][0].set_ylabel("share")
        axes[0][0].legend(frameon=False, fontsize=7)
        fig.suptitle(f"{entry.experiment} {entry.strategy}: position of predictions")
    return fig


def summary_figure(runs: Sequence[RunEntry]) -> Figure:
    """Four panels for one experiment: accuracy per strategy, per its first grouping field
    (ENADE: course; ENEM: area; E-EVAL: subject), per year; position bias."""
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(2, 2, figsize=(9, 6.5))
        ax = axes[0][0]
        acc = 100 * np.array([e.result.totals.accuracy for e in runs])
        lo = 100 * np.array([e.result.totals.ci95[0] for e in runs])
        hi = 100 * np.array([e.result.totals.ci95[1] for e in runs])
        for k in range(len(runs)):
            _bar(ax, k, acc[k], 0.7, k)  # type: ignore[arg-type]
        ax.errorbar(range(len(runs)), acc, _errors(acc, lo, hi), fmt="none", ecolor="black", capsize=3)
        ax.set_xticks(range(len(runs)), [_control_escaped(e.strategy) for e in runs])
        ax.set_ylim(0, 100)
        ax.set_ylabel("accuracy (%, 95% Wilson CI)")
        ax.set_title("accuracy per strategy")
        group = _main_field(runs)
        _breakdown_panel(axes[0][1], runs, group, f"accuracy per {group}")
        _breakdown_panel(axes[1][0], runs, "year", "accuracy per exam year")
        ax = axes[1][1]
        biased = [(e, k, b) for e in runs for k, b in (e.result.position_bias or {}).items()]
        for j, (_, _, block) in enumerate(biased):
            # no answered prediction in a stratum: BPC undefined (null in JSON), drawn as 0
            bpc = block.bpc_tvd
            _bar(ax, j, bpc if bpc is not None and math.isfinite(bpc) else 0.0, 0.7, j)
        ax.set_xticks(range(len(biased)), [_control_escaped(f"{e.strategy}\n{k} opt.") for e, k, _ in biased])
        ax.set_ylim(0, 1)
        ax.set_ylabel("BPC (TVD from uniform)")
        ax.set_title("position bias")
        fig.suptitle(runs[0].experiment)
        _escape_texts(fig)
        fig.tight_layout()
    return fig


def _main_field(runs: Sequence[RunEntry]) -> str:
    """The first grouping field other than the year (``course`` for ENADE; else ``n_options``).

    An exam without a grouping field of its own (a generic exam's file with no course
    column) is shown per number of options rather than per an empty ``course``.
    """
    return next((f for f in breakdown_fields(runs) if f != "year"), "n_options")


def _breakdown_panel(ax: plt.Axes, runs: Sequence[RunEntry], key: str, title: str) -> None:
    values = sorted({v for e in runs for v in e.result.breakdowns.get(key, {})})
    width = 0.8 / max(len(runs), 1)
    for k, e in enumerate(runs):
        blocks = e.result.breakdowns.get(key, {})
        cells = [blocks.get(v) for v in values]
        heights = np.array([100 * c.accuracy if c else np.nan for c in cells])
        low = np.array([100 * c.ci95[0] if c else np.nan for c in cells])
        high = np.array([100 * c.ci95[1] if c else np.nan for c in cells])
        xs = np.arange(len(values)) + (k - (len(runs) - 1) / 2) * width
        _bar(ax, xs, heights, width, k, label=e.strategy)
        ax.errorbar(xs, heights, _errors(heights, low, high), fmt="none", ecolor="black", capsize=1.5, lw=0.7)
    ax.set_xticks(range(len(values)), [_control_escaped(str(v)) for v in values], rotation=30, ha="right")
    ax.set_ylim(0, 100)
    ax.set_ylabel("accuracy (%, 95% Wilson CI)")
    ax.set_title(title)
    if key != "year":
        ax.legend(
            frameon=False, fontsize=6, ncol=min(len(runs), 4), loc="lower left", bbox_to_anchor=(0, 1.08)
        )


def all_errors(entries: Sequence[RunEntry]) -> list[RunEntry]:
    """Runs whose every record ended in an error (no accuracy: no bar to draw)."""
    return [e for e in entries if e.result.totals.n == 0]


@dataclass(frozen=True)
class Estimate:
    """One accuracy of :func:`dot_plot` (a proportion, drawn in percent) with its interval."""

    panel: str
    label: str
    value: float
    low: float
    high: float


def dot_plot(estimates: Sequence[Estimate], title: str, interval: str) -> Figure:
    """Small multiples: one panel per ``panel`` (a strategy, a stratum), one row per ``label``
    (a model, in the same order in every panel), each accuracy a dot with its ``interval``.

    Readable at 10 models × 6 strategies: the rows are named on the axis (no legend to cover
    the intervals), three panels a row, percent as in the tables.
    """
    panels = list(dict.fromkeys(e.panel for e in estimates)) or [""]
    labels = list(dict.fromkeys(e.label for e in estimates))
    index = {(e.panel, e.label): e for e in estimates}
    ncols = min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    y = np.arange(len(labels))[::-1]
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(
            nrows,
            ncols,
            figsize=(1.5 + 2.6 * ncols, 0.9 + nrows * (0.5 + 0.24 * max(1, len(labels)))),
            sharex=True,
            sharey=True,
            squeeze=False,
            layout="constrained",
        )
        for ax, panel in zip(axes.flat, panels, strict=False):
            for row, label in zip(y, labels, strict=True):
                e = index.get((panel, label))
                if e is None or not math.isfinite(e.value):
                    continue
                value, low, high = (100 * v for v in (e.value, e.low, e.high))
                ax.errorbar(
                    [value],
                    [row],
                    xerr=_errors(np.array([value]), np.array([low]), np.array([high])),
                    fmt="o",
                    color="black",
                    ms=3.5,
                    capsize=2,
                    lw=1,
                )
            if len(panels) > 1:
                ax.set_title(panel, fontsize="medium")
            ax.set_xlim(0, 100)
            ax.grid(axis="x", color="0.9", lw=0.6)
            ax.set_axisbelow(True)
        for ax in axes.flat[len(panels) :]:
            ax.set_visible(False)
        axes[0][0].set_yticks(y, labels)
        axes[0][0].set_ylim(-0.6, len(labels) - 0.4)
        fig.supxlabel(f"accuracy (%), {interval}", fontsize="medium")
        fig.suptitle(title, fontsize="medium")
    return fig


def comparison_figure(entries: Sequence[RunEntry]) -> Figure:
    """Accuracy with 95 % Wilson intervals: one panel per strategy, one row per model (:func:`dot_plot`).

    Runs without a scored record (:func:`all_errors`) have no dot; a model with no
    dot at all is left out (:func:`core_figures` says so in the caption).
    """
    left_out = {id(e) for e in all_errors(entries)}
    kept = [e for e in entries if id(e) not in left_out]
    order = {s: i for i, s in enumerate(strategies(kept))}
    estimates = [
        Estimate(e.strategy, e.experiment, e.result.totals.accuracy, *e.result.totals.ci95)
        for e in sorted(kept, key=lambda e: order[e.strategy])
    ]
    return dot_plot(estimates, "models compared across strategies", "95% Wilson interval")


def _comparison_caption(entries: Sequence[RunEntry]) -> str:
    caption = "Accuracy per strategy and model (95% CI)."
    left = all_errors(entries)
    if left:
        runs = ", ".join(f"{e.experiment} {e.strategy}" for e in left)
        caption += f" Left out, every answer an error (no accuracy): {runs}."
    return caption


def core_figures(entries: Sequence[RunEntry], folder: Path) -> list[FigureFile]:
    """Comparison chart, one 4-panel summary per experiment and position plots; saved to ``folder``."""
    out = [save(comparison_figure(entries), folder, "comparison", _comparison_caption(entries))]
    for name in experiments(entries):
        runs = [e for e in entries if e.experiment == name]
        out.append(
            save(
                summary_figure(runs),
                folder,
                f"summary_{name}",
                f"{name}: accuracy per strategy, {_main_field(runs)} and year; position bias.",
            )
        )
        for e in runs:
            fig = position_figure(e)
            if fig is not None:
                out.append(
                    save(
                        fig,
                        folder,
                        f"positions_{name}_{e.strategy}",
                        f"{name} {e.strategy}: share of predictions per displayed position "
                        "vs. share of correct answers.",
                    )
                )
    return out
