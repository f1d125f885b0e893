"""The comparison for readers: Table 1 with letters, the pairwise table, a figure, CSVs.

Everything returns a :class:`~enade_bench.report.section.Section`, so ``report``,
``study`` and ``compare`` put the same comparison in their HTML page, and
:func:`write_comparison` writes it on its own (``enade-bench compare``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from enade_bench.compare.analysis import cell_name
from enade_bench.compare.comparison import Comparison, PairComparison
from enade_bench.metrics.paired import SIGN_FLIP
from enade_bench.metrics.power import NOT_REACHABLE
from enade_bench.metrics.simultaneous import ABOVE, BELOW, SIMULTANEOUS
from enade_bench.report.browser import BrowserData
from enade_bench.report.figures import Estimate, FigureFile, dot_plot, save
from enade_bench.report.forest import ForestRow, forest_figure
from enade_bench.report.html import Lead, render_html
from enade_bench.report.loader import RunEntry
from enade_bench.report.section import Section
from enade_bench.report.table import Table
from enade_bench.results.csv_safe import write_csv
from enade_bench.results.store import atomic_write_text

__all__ = [
    "FOREST_PAIRS",
    "MDD_ROW",
    "comparison_section",
    "mdd_row",
    "pairs_table",
    "table1",
    "unreadable_forests",
    "write_comparison",
]

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


#: Table 1's last row: the detectable difference of each column's pairs.
MDD_ROW = "MDD 80 % (points)"


def _mdd(value: float) -> str:
    """An MDD in points; ``inf`` reads :data:`~enade_bench.metrics.power.NOT_REACHABLE`."""
    return NOT_REACHABLE if math.isinf(value) else _pct(value)


def _mdd_range(p: PairComparison) -> str:
    """A pair's MDD in points, a clustered one with its 10–90 % range; ``–`` without one."""
    if math.isnan(p.mdd):
        return "–"
    if math.isnan(p.mdd_low):
        return _mdd(p.mdd)
    return f"{_mdd(p.mdd)} ({_mdd(p.mdd_low)}–{_mdd(p.mdd_high)})"


def _mdd_cell(mdds: pd.Series) -> str:
    """Median (range) of a cell's pair MDDs in points; ``–`` without comparable pairs."""
    values = mdds.dropna()
    if values.empty:
        return "–"
    low, mid, high = (float(v) for v in (values.min(), values.median(), values.max()))
    if math.isinf(low):
        return NOT_REACHABLE
    return _mdd(mid) if high - low < 0.0005 else f"{_mdd(mid)} ({_mdd(low)}–{_mdd(high)})"


def mdd_row(comp: Comparison, columns: list[str]) -> pd.Series:
    """Each column's minimum detectable difference at 80 % power, each pair at its own level (``mdd_80``)."""
    pairs = comp.pairs_frame()
    if pairs.empty:
        return pd.Series("–", index=columns, name=MDD_ROW)
    pairs["column"] = [cell_name(st, sr) for st, sr in zip(pairs["strategy"], pairs["stratum"], strict=True)]
    cells = {column: _mdd_cell(rows["mdd_80"]) for column, rows in pairs.groupby("column", sort=False)}
    return pd.Series([cells.get(c, "–") for c in columns], index=columns, name=MDD_ROW)


def _lead_letter(letters: pd.Series) -> list[bool]:
    """Bold the models with the letter ``a``, unless every model of the column has it (bold then says nothing)."""
    has_a = [(t.split()[0] == "a") if " " in t else t.startswith("a") for t in letters]
    return [False] * len(has_a) if all(has_a) else has_a


def table1(comp: Comparison) -> Table:
    """Models × strategies: accuracy (%) [interval] and letters, the letter ``a`` in bold, and the MDD row."""
    scores = comp.scores_frame()
    scores["column"] = [
        cell_name(st, sr) for st, sr in zip(scores["strategy"], scores["stratum"], strict=True)
    ]
    display = scores.assign(cell=scores.apply(_score_cell, axis=1)).pivot(
        index="model", columns="column", values="cell"
    )
    columns = list(dict.fromkeys(scores["column"]))
    display = display.reindex(index=list(dict.fromkeys(scores["model"])), columns=columns).fillna("–")
    top = scores.assign(top=False)
    for _, rows in scores.groupby("column", sort=False):
        top.loc[rows.index, "top"] = _lead_letter(rows["letters"].astype(str))
    bold = top.pivot(index="model", columns="column", values="top")
    bold = bold.reindex(index=display.index, columns=columns).fillna(False).astype(bool)
    display = pd.concat([display, mdd_row(comp, columns).to_frame().T])
    bold = pd.concat([bold, pd.DataFrame(False, index=[MDD_ROW], columns=columns)])
    display.index.name = "model"
    errors = (
        " n_errors: records that ended in an error, not scored (--allow-errors)."
        if (scores["n_errors"] > 0).any()
        else ""
    )
    return Table(
        "comparison_table1",
        f"Table 1 across models: accuracy (%) [{_level(comp)} CI, each model alone, not simultaneous] letters "
        f"({comp.family_label})",
        scores,
        display,
        bold,
        "Intervals are clustered on the question (and on shared stimuli); Wilson where each question "
        "has one record. Two models of a column share a letter exactly when their pair is not "
        f"significant at α = {comp.alpha} ({comp.family_label}; compact letter display, Piepho 2004); "
        "bold: the letter a, the models not distinguishable from the best (no bold when every model "
        f"has it). {MDD_ROW}: the smallest true difference each pair of the column detects with 80 % "
        "power by its own test at its own level α_i, with the spread that difference implies (median, "
        f"range over the pairs; {NOT_REACHABLE}: 80 % is out of reach whatever the difference). A shared "
        f"letter means not distinguishable at this size, not equal.{errors}",
    )


def _bound(value: float) -> str:
    """An interval limit in points; one that rounds to 0 but is not 0 keeps two significant digits, so
    that a shown interval excludes 0 exactly when the pair's decision does."""
    text = _pct(value)
    if value != 0 and not math.isnan(value) and float(text) == 0:
        return f"{100 * value:.2g}"
    return text


def _level_pct(confidence: float) -> str:
    return "–" if math.isnan(confidence) else f"{100 * confidence:.4g} %"


def _statement(p: PairComparison) -> str:
    """The pair's statement: ``> 0 (≤ 12.3)``/``< 0 (≥ -12.3)`` (Holm, rejected) or ``[low, high]``."""
    if p.statement == ABOVE:
        return f"> 0 (≤ {_bound(p.ci_high)})"
    if p.statement == BELOW:
        return f"< 0 (≥ {_bound(p.ci_low)})"
    return f"[{_bound(p.ci_low)}, {_bound(p.ci_high)}]" if p.statement else "–"


def pairs_table(comp: Comparison) -> Table:
    """Every pair: difference (points), its simultaneous statement, the Bonferroni interval, p, MDD."""
    pairs = comp.pairs_frame()
    joint = comp.adjust in SIMULTANEOUS
    heading = f"{comp.interval_name}: jointly {_level(comp)}" if joint else f"{comp.interval_name}"
    rows = [
        {
            "strategy": cell_name(p.strategy, p.stratum),
            "A − B": f"{p.model_a} − {p.model_b}",
            "difference": _pct(p.result.diff),
            "statement": _statement(p),
            "CI level": _level_pct(p.ci_level),
            "Bonferroni α/K CI (magnitude)": f"[{_bound(p.magnitude_low)}, {_bound(p.magnitude_high)}]",
            "test": p.result.test,
            "p": _p(p.result.p_value),
            f"p ({comp.adjust})": _p(p.p_adjusted),
            "MDD 80 %": _mdd_range(p),
            "questions": str(p.result.n_questions),
        }
        for p in comp.pairs
    ]
    display = pd.DataFrame(rows).set_index(["strategy", "A − B"]) if rows else pd.DataFrame()
    return Table(
        "comparison_pairs",
        f"Paired comparisons: A − B in accuracy points [{heading}]; p adjusted {comp.family_label}",
        pairs,
        display,
        notes="Differences are paired on the questions both models answered. The statement column is "
        + (
            f"simultaneous: all its statements hold together with probability {_level(comp)}"
            if joint
            else "not simultaneous (false coverage rate)"
        )
        + (
            ". Holm is applied to the 2K directional hypotheses (δ ≤ 0, δ ≥ 0 of each pair); a "
            "rejected pair gets a bound at 0 in the direction of its effect (> 0 or < 0; Strassburger "
            "& Bretz 2008) with, in brackets, the other limit, and the others their interval at "
            "confidence 1 − 2α/(2K−r) (CI level; r rejected). The Bonferroni α/K interval beside it "
            "gives the magnitude (simultaneous on its own, not Holm's statement)"
            if comp.adjust == "holm"
            else ""
        )
        + ". Intervals are the test's own (the exact unconditional score test, up to 100 questions "
        "with one record each: its exact interval; McNemar's score test above: Tango's interval; "
        "clustered t: the t interval; sign-flip on text sums, for a pair whose questions mix one binary record "
        "and repeated ones, where the clustered t does not keep its size: the interval that inverts it), so a "
        "statement excludes 0 exactly when p adjusted < α, i.e. when the two models "
        "share no letter. The unadjusted intervals are ci_low_unadjusted and ci_high_unadjusted in "
        "pairs.csv. MDD 80 %: the smallest true difference the pair's test detects with 80 % power at "
        f"its level α_i, with the spread that difference implies ({NOT_REACHABLE}: 80 % is out of "
        "reach); a clustered pair's in brackets at the 10 % and 90 % limits of its variance's sampling "
        "distribution (χ² on the clusters' df): an expected power of 0.80 over the data sets one could "
        "observe, not 0.80 in each (mdd_80_low, mdd_80_high in pairs.csv)."
        + "".join(
            f" {cell_name(p.strategy, p.stratum)}, {p.model_a} − {p.model_b}: {p.result.reason}."
            for p in comp.pairs
            if p.result.test == SIGN_FLIP
        ),
    )


#: The flips table's text for a model that gave no answer the parser could read.
NO_ANSWER = "(no answer)"


def flips_table(comp: Comparison) -> Table:
    """Questions one model got right and the other wrong, with the exam's fields and a stem excerpt.

    Answer columns that are empty throughout (a long CSV without them) are left out; an
    empty prediction among filled ones reads :data:`NO_ANSWER`.  Without flips the table
    says so in one sentence (no empty grid).
    """
    flips = comp.flips
    if flips.empty:
        message = pd.DataFrame(
            {"item flips": ["none: no question is right for one model of a pair and wrong for the other"]},
            index=pd.Index([""], name=""),
        )
        return Table("comparison_flips", "Item flips: none", flips, message)
    shown = [
        "strategy",
        "right",
        "wrong",
        "item",
        *comp.fields,
        "answer",
        "prediction_right",
        "prediction_wrong",
        "stem",
    ]
    display = flips[[c for c in shown if c in flips.columns]].fillna("").astype(str).reset_index(drop=True)
    for column in ("answer", "prediction_right", "prediction_wrong", "stem"):
        if column in display.columns:
            if (display[column].str.strip() == "").all():
                display = display.drop(columns=column)
            elif column.startswith("prediction"):
                display[column] = display[column].where(display[column].str.strip() != "", NO_ANSWER)
    display = display.set_index(["strategy", "right", "wrong"])
    return Table(
        "comparison_flips",
        "Item flips: right by one model, wrong by the other",
        flips,
        display,
        notes="Right: the question's score (mean over its shuffles or samples) above 1/2; wrong: below. "
        f"Sorted by the exam's fields, then item. {NO_ANSWER}: no option could be read from the "
        "model's output.",
    )


def _figure(comp: Comparison, folder: Path) -> FigureFile | None:
    """Each model's accuracy per cell (strategy × stratum) with its clustered interval (:func:`dot_plot`)."""
    scores = comp.scores_frame()
    if scores.empty:
        return None
    estimates = [
        Estimate(
            cell_name(str(r["strategy"]), str(r["stratum"])),
            str(r["model"]),
            r["accuracy"],
            r["ci_low"],
            r["ci_high"],
        )
        for r in scores.to_dict("records")
    ]
    level = _level(comp)
    fig = dot_plot(estimates, "Accuracy per model", f"{level} interval clustered on the question")
    return save(fig, folder, "comparison_clustered", f"Accuracy per model with clustered {level} intervals")


def _points(value: float) -> float:
    return 100 * value if math.isfinite(value) else value


def _file_part(name: str) -> str:
    """A cell's name in a file name, without spaces, commas or brackets.

    >>> _file_part("S1 (area=CH, language=en)")
    'S1_area-CH_language-en'
    """
    return re.sub(r"[^\w.-]+", "_", name.replace("=", "-")).strip("_") or "all"


#: A cell with more pairs than this gets no forest plot (a row per pair: 1,225 rows at 50 models,
#: too tall to read or to save); a note says so, and ``pairs.csv`` holds every statement.
FOREST_PAIRS = 100


def _by_cell(comp: Comparison) -> dict[tuple[str, str], list[PairComparison]]:
    """The pairs with a statement, by cell (strategy, stratum)."""
    cells: dict[tuple[str, str], list[PairComparison]] = {}
    for p in comp.pairs:
        if p.statement:
            cells.setdefault((p.strategy, p.stratum), []).append(p)
    return cells


def unreadable_forests(comp: Comparison) -> list[str]:
    """A note for each cell whose forest plot is not drawn (more than :data:`FOREST_PAIRS` pairs)."""
    return [
        f"forest plot of {cell_name(*cell)} not drawn: {len(mine):,} pairs, more than the {FOREST_PAIRS} one "
        f"figure can show readably ({FOLDER}/pairs.csv holds every pair's statement)"
        for cell, mine in _by_cell(comp).items()
        if len(mine) > FOREST_PAIRS
    ]


def forest_figures(comp: Comparison, folder: Path) -> list[FigureFile]:
    """One forest plot per cell (strategy × stratum) of the pairs with a statement
    (:func:`enade_bench.report.forest.forest_figure`), saved as ``forest_<cell>.png``/``.pdf``;
    none for a cell of more than :data:`FOREST_PAIRS` pairs (:func:`unreadable_forests`)."""
    figures = []
    for (strategy, stratum), mine in _by_cell(comp).items():
        if len(mine) > FOREST_PAIRS:
            continue
        rows = [
            ForestRow(
                f"{p.model_a} − {p.model_b}",
                _points(p.result.diff),
                p.statement,
                _points(p.ci_low),
                _points(p.ci_high),
                _points(p.magnitude_low),
                _points(p.magnitude_high),
                _points(p.mdd),
                (_points(p.mdd_low), _points(p.mdd_high)),
            )
            for p in mine
        ]
        name = cell_name(strategy, stratum)
        title = f"{name}: A − B, {comp.interval_name.split(':')[0]}\nfamily {mine[0].family} ({mine[0].family_size} pairs)"
        caption = (
            f"Forest plot of {name}: each pair's statement (bar: interval; arrow from 0: bound), the "
            "Bonferroni alpha/K interval (light) and the MDD 80 % band around 0 (a note where 80 % is out "
            "of reach); family "
            f"{mine[0].family}, {comp.family_label}"
        )
        figures.append(save(forest_figure(rows, title), folder, f"forest_{_file_part(name)}", caption))
    return figures


def comparison_section(comp: Comparison, figures: Path) -> Section:
    """Tables, the figures (accuracies; a forest plot per cell), the notes and the CSV files
    (``comparison/*.csv``) of a comparison."""
    figure = _figure(comp, figures)
    flips = comp.flips
    return Section(
        tables=[table1(comp), pairs_table(comp), flips_table(comp)],
        figures=([figure] if figure is not None else []) + forest_figures(comp, figures),
        notes=[
            *(f"warning: {w}" for w in comp.warnings),
            f"multiplicity family: {comp.family_label} (family: {comp.options.family}); intervals beside "
            f"adjusted p: {comp.interval_name}",
            *comp.notes,
            *unreadable_forests(comp),
            f"item flips: {len(flips)} rows in {FOLDER}/flips.csv (sorted by the exam's "
            "fields and item; any column sorts it in a spreadsheet)",
        ],
        files={
            f"{FOLDER}/scores.csv": comp.scores_frame(),
            f"{FOLDER}/pairs.csv": comp.pairs_frame(),
            f"{FOLDER}/flips.csv": flips,
            f"{FOLDER}/unpaired.csv": comp.unpaired,
        },
    )


def write_comparison(
    comp: Comparison,
    out: Path,
    browser: BrowserData,
    entries: Sequence[RunEntry] = (),
    folders: Sequence[Path] = (),
) -> list[Path]:
    """``enade-bench compare``'s folder: CSVs, LaTeX tables, the figures and ``index.html`` (the
    comparison's tables and figures, then the question browser over every answer compared:
    ``browser``, :mod:`enade_bench.report.browser`); returns the files.  ``entries``: the runs
    compared when they are results files (the page's run manifest)."""
    section = comparison_section(comp, out / "figures")
    written = []
    for name, frame in section.files.items():
        write_csv(out / Path(name).name, frame, index=False, float_format="%.6g")
        written.append(out / Path(name).name)
    for table in section.tables:
        written += list(table.write(out / "tables").values())
    written += [p for f in section.figures for p in (f.png, f.pdf)]
    page = render_html(
        entries,
        [],
        section.figures,
        folders,
        section.notes,
        "enade-bench comparison",
        Lead(tuple(section.tables), "Comparison", comparison=True, figures=tuple(section.figures)),
        browser=browser,
    )
    atomic_write_text(out / "index.html", page)
    return [*written, out / "index.html"]
