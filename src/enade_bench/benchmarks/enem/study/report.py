"""The study's report folder: verdict (table, CSV), the report's tables and figures per exam, HTML.

Layout of ``<output>/report/``: ``verdict.csv`` (the verdict table, full
precision, one row per model × predictions × area × language),
``dif.csv``, ``prior_correction.csv``, ``cat.csv`` (the IRT steps,
:mod:`enade_bench.benchmarks.enem.study.irt_steps`), ``tables/<name>.csv|.tex``,
``figures/<name>.png|.pdf`` and the self-contained ``index.html`` with the
verdict on top.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from enade_bench.benchmarks.enem.analysis import ExamAnalysis, Psychometrics
from enade_bench.benchmarks.enem.figures import (
    accuracy_theta_figure,
    discrimination_figure,
    information_figure,
    lz_theta_figure,
    pattern_heatmap,
)
from enade_bench.benchmarks.enem.steps import STEPS
from enade_bench.benchmarks.enem.study.analysis import StudyAnalysis
from enade_bench.benchmarks.enem.study.config import VerdictRule
from enade_bench.benchmarks.enem.study.verdict import MEASURED, OUTSIDE, UNRELIABLE
from enade_bench.benchmarks.enem.tables import psychometric_tables
from enade_bench.compare.study import study_comparison
from enade_bench.report.figures import MARKERS, STYLE, FigureFile, core_figures, save
from enade_bench.report.html import render_html
from enade_bench.report.section import Section, run_steps
from enade_bench.report.table import Table, fmt, fmt_interval
from enade_bench.report.tables import core_tables
from enade_bench.results.csv_safe import write_csv
from enade_bench.results.store import atomic_write_text

EXAM_FIGURES = (
    ("accuracy_theta", accuracy_theta_figure, "Accuracy vs. θ; grey: simulated human population."),
    ("lz_theta", lz_theta_figure, "Person fit l_z vs. θ; dashed: 5% misfit cut-off."),
    ("information", information_figure, "Test information and each model's θ (95% interval over shuffles)."),
    ("patterns", pattern_heatmap, "Share correct over shuffles, items ordered by difficulty b."),
    ("discrimination", discrimination_figure, "Discrimination index histogram."),
)


@dataclass
class StudyReport:
    """What :func:`write_study_report` wrote."""

    tables: list[Table]
    figures: list[FigureFile]
    verdict_csv: Path
    index: Path
    notes: list[str]
    warnings: list[str]


def verdict_table(verdict: pd.DataFrame, rule: VerdictRule) -> Table:
    """The verdict per model × area × language (random baseline rows for reference)."""
    rows = []
    for _, r in verdict.iterrows():
        share = "n/a" if not np.isfinite(r["aberrant_share"]) else f"{100 * r['aberrant_share']:.0f}%"
        rows.append(
            {
                "model": r["model"],
                "predictions": r["predictions"],
                "area": r["area"],
                "language": r["language"],
                "K": int(r["n_shuffles"]),
                "items": int(r["n_items"]),
                "accuracy": fmt(r["accuracy"], 2),
                "θ [95%]": fmt_interval(r["theta"], r["theta_low"], r["theta_high"], 2),
                "SE": fmt(r["se"], 2),
                "ENEM score [95%]": fmt_interval(r["score"], r["score_low"], r["score_high"], 0),
                "l_z* < cut-off": f"{share} of {int(r['n_assessable'])}",
                "I(θ)/max": f"{fmt(r['relative_information'], 2)} ({r['side']})",
                "verdict": r["verdict"],
            }
        )
    display = pd.DataFrame(rows).set_index(["model", "predictions", "area", "language"])
    notes = (
        "predictions: 'raw' (the model's answers) or 'corrected' (its letter prior removed, PriDe; the "
        "random baseline has no letter scores, its rows are raw). "
        f"accuracy: mean share correct over the K shuffles (the booklet's items; LC with the Spanish set). θ: mean EAP over the K option shuffles [2.5%, 97.5% percentiles]; SE: mean posterior SD; "
        f"ENEM score = k·θ + d (inep_scale_constants.csv). l_z* < cut-off: share of assessable shuffles "
        f"whose l_z* (WLE) is below the {rule.alpha:g} parametric-bootstrap cut-off ({rule.n_boot} "
        f"replications of {rule.n_respondents} patterns, θ resampled from the model's shuffles). "
        f"I(θ)/max: test information at θ relative to its peak (below/above the peak). Verdict: "
        f"'{UNRELIABLE}' if that share ≥ {rule.max_aberrant_share:g}; else '{OUTSIDE}' if "
        f"I(θ)/max < {rule.min_relative_information:g}; else '{MEASURED}' (docs/enem_study.md)."
    )
    return Table("study_verdict", "Verdict: does the exam measure the model?", verdict, display, None, notes)


def theta_overview_figure(verdict: pd.DataFrame) -> Figure:
    """θ of every model (and the random baseline) per area, one panel per language.

    Corrected-prediction rows are drawn as their own model, ``<model> (corrected)``.
    """
    corrected = verdict["predictions"] == "corrected"
    verdict = verdict.assign(model=verdict["model"].where(~corrected, verdict["model"] + " (corrected)"))
    languages = list(dict.fromkeys(verdict["language"]))
    order = verdict.sort_values("baseline", kind="stable")
    models = list(dict.fromkeys(order["model"]))
    areas = list(dict.fromkeys(verdict["area"]))
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(
            1, len(languages), figsize=(4.8 * len(languages), 3.6), squeeze=False, sharey=True
        )
        for ax, language in zip(axes[0], languages, strict=True):
            part = verdict[verdict["language"] == language]
            for k, model in enumerate(models):
                rows = part[part["model"] == model].set_index("area").reindex(areas)
                x = np.arange(len(areas)) + (k - (len(models) - 1) / 2) * 0.8 / max(len(models), 1)
                y = rows["theta"].to_numpy(float)
                err = np.vstack(
                    [y - rows["theta_low"].to_numpy(float), rows["theta_high"].to_numpy(float) - y]
                )
                filled = (rows["verdict"] == MEASURED).to_numpy()
                marker = "x" if bool(rows["baseline"].fillna(False).any()) else MARKERS[k % len(MARKERS)]
                ax.errorbar(x, y, yerr=np.clip(err, 0, None), fmt="none", ecolor="0.3", capsize=2)
                ax.scatter(
                    x[filled], y[filled], marker=marker, color="black", label=model if filled.any() else None
                )
                hollow = (
                    {"color": "0.55"} if marker == "x" else {"facecolors": "white", "edgecolors": "black"}
                )
                ax.scatter(
                    x[~filled], y[~filled], marker=marker, label=None if filled.any() else model, **hollow
                )
            ax.axhline(0, color="0.6", linewidth=0.8, linestyle=":")
            ax.set_xticks(range(len(areas)), areas)
            ax.set_xlim(-0.6, len(areas) - 0.4)
            ax.set_title(f"{language}")
            ax.set_xlabel("area")
        axes[0][0].set_ylabel("θ (EAP), 95% over shuffles")
        axes[0][-1].legend(frameon=False, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        fig.suptitle("Ability per model and area (filled: measured; open: not)")
    return fig


def exam_figures(exams: Sequence[ExamAnalysis], folder: Path) -> list[FigureFile]:
    """The report's five psychometric figures for every exam of the study."""
    out = []
    for exam in exams:
        for name, build, caption in EXAM_FIGURES:
            out.append(save(build(exam), folder, f"{name}_{exam.tag}", f"{exam.label}: {caption}"))
    return out


def _attribute_notes(tables: list[Table], source: str) -> list[Table]:
    return [
        replace(
            t,
            notes=f"Attributes: {source}. Items the table does not list are left out. "
            "The χ² approximation asks for min E ≥ 5.",
        )
        if t.name == "psychometrics_attributes"
        else t
        for t in tables
    ]


def _comparison(study: StudyAnalysis, out: Path, allow_errors: bool, family: str = "strategy") -> Section:
    """Accuracy compared across the study's models per area and language (docs/comparisons.md)."""
    if len({e.result.experiment for e in study.labelled}) < 2:
        return Section()

    comparison = study_comparison(
        study.labelled, out, ["area", "language"], "holm", 0.05, family=family, allow_errors=allow_errors
    )
    comparison.section.tables[:0] = comparison.lead
    return comparison.section


def write_study_report(
    study: StudyAnalysis,
    out: Path,
    rule: VerdictRule,
    attributes_source: str,
    title: str,
    allow_errors: bool = False,
    family: str = "strategy",
) -> StudyReport:
    """Write the study's report folder (see the module docstring)."""
    figures_dir = out / "figures"
    lead = verdict_table(study.verdict, rule)
    tables = core_tables(study.entries)
    tables += _attribute_notes(psychometric_tables(Psychometrics(list(study.exams), [])), attributes_source)
    figures = [
        save(
            theta_overview_figure(study.verdict),
            figures_dir,
            "theta_overview",
            "θ per model and area (95% interval over shuffles); filled markers: verdict 'measured'.",
        )
    ]
    figures += exam_figures(study.exams, figures_dir)
    extra = Section.combine(
        [run_steps(STEPS.values(), study, figures_dir), _comparison(study, out, allow_errors, family)]
    )
    tables += extra.tables
    figures += extra.figures
    figures += core_figures(study.entries, figures_dir)
    for table in [lead, *tables]:
        table.write(out / "tables")
    for name, frame in extra.files.items():
        write_csv(out / name, frame, index=False)
    verdict_csv = out / "verdict.csv"
    write_csv(verdict_csv, study.verdict, index=False)
    notes = study.notes + extra.notes
    folders = sorted({e.path.parent for e in study.entries})
    warnings = [w for e in study.entries for w in e.warnings]  # errors, stale files: the page opens with them
    html = render_html(study.entries, tables, figures, folders, notes, title, lead=[lead], warnings=warnings)
    index = out / "index.html"
    atomic_write_text(index, html)
    return StudyReport([lead, *tables], figures, verdict_csv, index, notes, warnings)
