"""The comparison for readers: Table 1 with letters, the pairwise table, a figure, CSVs.

Everything returns a :class:`~enade_bench.report.section.Section`, so ``report``,
``study`` and ``compare`` put the same comparison in their HTML page, and
:func:`write_comparison` writes it on its own (``enade-bench compare``).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from enade_bench.compare.analysis import Comparison, cell_name
from enade_bench.report.figures import FigureFile, save
from enade_bench.report.section import Section
from enade_bench.report.table import Table
from enade_bench.results.csv_safe import write_csv

__all__ = ["comparison_section", "pairs_table", "table1", "write_comparison"]

FOLDER = "comparison"


def _pct(value: float) -> str:
    return "–" if math.isnan(value) else f"{100 * value:.1f}"


def _p(value: float) -> str:
    return "–" if math.isnan(value) else f"{value:.3g}"


def _level(comp: Comparison) -> str:
    return f"{100 * (1 - comp.alpha):g} %"


def _score_cell(row: pd.Series) -> str:
    errors = f", {int(row.n_errors)} errors" if row.n_errors else ""
    if not row.n_questions:
        return f"– (n 0{errors})"
    n = f" (n {int(row.n_questions)}{errors})" if errors else ""
    return f"{_pct(row.accuracy)} [{_pct(row.ci_low)}, {_pct(row.ci_high)}] {row.letters}{n}"


def table1(comp: Comparison) -> Table:
    """Models × strategies: accuracy (%) [interval] and letters; the letter ``a`` in bold."""
    scores = comp.scores_frame()
    scores["column"] = [
        cell_name(st, sr) for st, sr in zip(scores["strategy"], scores["stratum"], strict=True)
    ]
    display = scores.assign(cell=scores.apply(_score_cell, axis=1)).pivot(index="model", columns="column",
                                                                         values="cell")  # fmt: skip
    columns = list(dict.fromkeys(scores["column"]))
    display = display.reindex(index=list(dict.fromkeys(scores["model"])), columns=columns).fillna("–")
    top = scores.assign(
        top=[(t.split()[0] == "a") if " " in t else t.startswith("a") for t in scores["letters"]]
    )
    bold = top.pivot(index="model", columns="column", values="top")
    bold = bold.reindex(index=display.index, columns=columns).fillna(False).astype(bool)
    display.index.name = "model"
    errors = (" n_errors: records that ended in an error, not scored (--allow-errors)."
              if (scores["n_errors"] > 0).any() else "")  # fmt: skip
    return Table("comparison_table1", f"Table 1 across models: accuracy (%) [{_level(comp)} CI] letters "
                 f"({comp.family_label})", scores, display, bold,
                 "Intervals are clustered on the question (and on shared stimuli); Wilson where each question "
                 "has one record. Two models of a column share a letter exactly when their pair is not "
                 f"significant at α = {comp.alpha} ({comp.family_label}; compact letter display, Piepho 2004); "
                 f"models with the letter a (bold) cannot be told apart from the best.{errors}")  # fmt: skip


def pairs_table(comp: Comparison) -> Table:
    """Every pair: difference (points) [95 % CI], test, p, adjusted p, detectable difference."""
    pairs = comp.pairs_frame()
    rows = [{"strategy": cell_name(p.strategy, p.stratum),
             "A − B": f"{p.model_a} − {p.model_b}",
             "difference": f"{_pct(p.result.diff)} [{_pct(p.result.ci_low)}, {_pct(p.result.ci_high)}]",
             "test": p.result.test, "p": _p(p.result.p_value), f"p ({comp.adjust})": _p(p.p_adjusted),
             "MDD 80 %": _pct(p.mdd), "questions": str(p.result.n_questions)}
            for p in comp.pairs]  # fmt: skip
    display = pd.DataFrame(rows).set_index(["strategy", "A − B"]) if rows else pd.DataFrame()
    return Table("comparison_pairs", f"Paired comparisons: A − B in accuracy points [{_level(comp)} CI]; "
                 f"p adjusted {comp.family_label}", pairs, display,
                 notes="Differences are paired on the questions both models answered. The interval comes from "
                       "the test's own procedure (exact McNemar: conditional Clopper-Pearson on the discordant "
                       "questions; clustered t: the t interval), so it excludes 0 exactly when p < α. MDD 80 % is "
                       "the smallest true difference this many questions would detect with 80 % power.")  # fmt: skip


def flips_table(comp: Comparison) -> Table:
    """Questions one model got right and the other wrong, with the exam's fields and a stem excerpt."""
    flips = comp.flips
    if flips.empty:
        return Table("comparison_flips", "Item flips: none", flips, pd.DataFrame())
    shown = ["strategy", "right", "wrong", "item", *comp.fields, "answer", "prediction_right",
             "prediction_wrong", "stem"]  # fmt: skip
    display = flips[[c for c in shown if c in flips.columns]].astype(str).reset_index(drop=True)
    display = display.set_index(["strategy", "right", "wrong"])
    return Table("comparison_flips", "Item flips: right by one model, wrong by the other", flips, display,
                 notes="Right: the question's score (mean over its shuffles or samples) above 1/2; wrong: below. "
                       "Sorted by the exam's fields, then item.")  # fmt: skip


def _figure(comp: Comparison, folder: Path) -> FigureFile | None:
    import matplotlib.pyplot as plt  # noqa: PLC0415 (matplotlib at use)

    scores = comp.scores_frame()
    if scores.empty:
        return None
    scores["column"] = scores["strategy"] + " " + scores["stratum"]
    columns = list(dict.fromkeys(scores["column"]))
    models = list(dict.fromkeys(scores["model"]))
    fig, ax = plt.subplots(figsize=(max(4.0, 1.1 * len(columns) * max(1, len(models)) / 2), 3.2))
    width = 0.8 / len(models)
    for k, model in enumerate(models):
        mine = scores[scores["model"] == model].set_index("column").reindex(columns)
        xs = [i + (k - (len(models) - 1) / 2) * width for i in range(len(columns))]
        low = (mine["accuracy"] - mine["ci_low"]).clip(lower=0)
        high = (mine["ci_high"] - mine["accuracy"]).clip(lower=0)
        ax.errorbar(xs, mine["accuracy"], yerr=[low, high], fmt="os^dv"[k % 5], capsize=3, label=model,
                    color=str(0.15 + 0.5 * k / max(1, len(models) - 1)))  # fmt: skip
    ax.set_xticks(range(len(columns)), [c.replace(" all", "") for c in columns], rotation=30, ha="right")
    ax.set_ylabel("accuracy (95 % CI)")
    ax.legend(fontsize="small", frameon=False)
    return save(fig, folder, "comparison_clustered", "Accuracy per model with clustered 95 % intervals")


def comparison_section(comp: Comparison, figures: Path) -> Section:
    """Tables, the figure, the notes and the CSV files (``comparison/*.csv``) of a comparison."""
    figure = _figure(comp, figures)
    flips = comp.flips
    return Section(
        tables=[table1(comp), pairs_table(comp), flips_table(comp)],
        figures=[figure] if figure is not None else [],
        notes=[*(f"warning: {w}" for w in comp.warnings),
               f"multiplicity family: {comp.family_label} (--family {comp.options.family})", *comp.notes,
               f"item flips: {len(flips)} rows in {FOLDER}/flips.csv (sorted by the exam's "
               "fields and item; any column sorts it in a spreadsheet)"],
        files={f"{FOLDER}/scores.csv": comp.scores_frame(), f"{FOLDER}/pairs.csv": comp.pairs_frame(),
               f"{FOLDER}/flips.csv": flips, f"{FOLDER}/unpaired.csv": comp.unpaired},
    )  # fmt: skip


def write_comparison(comp: Comparison, out: Path) -> list[Path]:
    """``enade-bench compare``'s folder: CSVs, LaTeX tables, the figure; returns the files."""
    section = comparison_section(comp, out / "figures")
    written = []
    for name, frame in section.files.items():
        write_csv(out / Path(name).name, frame, index=False, float_format="%.6g")
        written.append(out / Path(name).name)
    for table in section.tables:
        written += list(table.write(out / "tables").values())
    written += [p for f in section.figures for p in (f.png, f.pdf)]
    return written
