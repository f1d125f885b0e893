"""The accuracy, temporal-validity, position-bias and extraction tables.

Every number comes from the results files: totals, breakdowns and
``position_bias`` as the run wrote them; only the before/after training
cut-off split is recomputed from the per-question records (the run does not
know the split), with the same Wilson interval as the runner.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import pandas as pd

from enade_bench.metrics.accuracy import wilson_interval
from enade_bench.report.loader import RunEntry, breakdown_fields, experiments, strategies
from enade_bench.report.table import Table, fmt, fmt_interval, fmt_p
from enade_bench.results.summary import AccuracyCell

_ACC_COLUMNS = ["n", "correct", "accuracy", "ci95_low", "ci95_high"]
#: One row of a table's long frame.
Row = dict[str, str | int | float | bool | None]


def _acc_row(block: AccuracyCell) -> Row:
    low, high = block.ci95
    return {
        "n": block.n,
        "correct": block.correct,
        "accuracy": block.accuracy,
        "ci95_low": float(low),
        "ci95_high": float(high),
    }


def _cell(row: pd.Series) -> str:
    return fmt_interval(row["accuracy"], row["ci95_low"], row["ci95_high"])


def table1(entries: Sequence[RunEntry]) -> Table:
    """Table 1: accuracy per model (experiment) × strategy with 95 % Wilson intervals.

    The best accuracy in each strategy column is marked (``best`` in the CSV,
    bold in LaTeX/HTML).  With a single experiment there is nothing to compare
    down a column, so the best strategy of that row is marked instead.
    """
    rows = []
    for e in entries:
        t = e.result.totals
        row: Row = {
            "experiment": e.experiment,
            "model": e.model,
            "strategy": e.strategy,
            "label": e.label,
        }
        row.update(_acc_row(t))
        row["unanswered"] = t.unanswered
        shuffle = t.per_shuffle
        row["shuffle_mean"] = shuffle.mean if shuffle else math.nan
        row["shuffle_low"] = shuffle.interval95[0] if shuffle else math.nan
        row["shuffle_high"] = shuffle.interval95[1] if shuffle else math.nan
        rows.append(row)
    data = pd.DataFrame(rows)
    exps, strats = experiments(entries), strategies(entries)
    group = "experiment" if len(exps) == 1 else "strategy"
    best = data.groupby(group)["accuracy"].transform("max")
    data["best"] = data["accuracy"].notna() & (data["accuracy"] == best)
    cells = {(r["experiment"], r["strategy"]): (_cell(r), bool(r["best"])) for _, r in data.iterrows()}
    index = pd.Index(exps, name="experiment")
    display = pd.DataFrame(
        [[cells.get((x, s), ("–", False))[0] for s in strats] for x in exps], index, strats
    )
    bold = pd.DataFrame([[cells.get((x, s), ("–", False))[1] for s in strats] for x in exps], index, strats)
    models = data.drop_duplicates("experiment").set_index("experiment")["model"]
    display.insert(0, "model", models.reindex(display.index).to_numpy())
    bold.insert(0, "model", False)
    marked = "best strategy" if group == "experiment" else "best model per strategy"
    return Table(
        "table1",
        "Accuracy per model and strategy, 95% Wilson interval",
        data,
        display.fillna("–").replace("", "–"),
        bold,
        f"Bold: {marked}. Strategies: "
        + "; ".join(
            f"{s} = {lbl}" for s, lbl in data.drop_duplicates("strategy")[["strategy", "label"]].values
        ),
    )


def breakdown_table(entries: Sequence[RunEntry], key: str, title: str, name: str | None = None) -> Table:
    """Accuracy per value of one breakdown (a grouping field such as ``course``, or ``n_options``)."""
    rows = []
    for e in entries:
        for value, block in e.result.breakdowns.get(key, {}).items():  # key: a field of the records
            rows.append({"experiment": e.experiment, "strategy": e.strategy, key: value, **_acc_row(block)})
    data = pd.DataFrame(rows, columns=["experiment", "strategy", key, *_ACC_COLUMNS])
    return _wide(data, key, name or f"accuracy_by_{key}", title, entries)


def _wide(data: pd.DataFrame, key: str, name: str, title: str, entries: Sequence[RunEntry]) -> Table:
    strats = strategies(entries)
    index = pd.MultiIndex.from_frame(data[["experiment", key]].drop_duplicates(), names=["experiment", key])
    display = pd.DataFrame("–", index=index, columns=strats)
    for _, row in data.iterrows():
        display.loc[(row["experiment"], row[key]), row["strategy"]] = f"{_cell(row)} n={row['n']}"
    return Table(name, title, data, display, None, "Cells: accuracy [95% Wilson interval] and n items.")


def cutoff_period(year: int | None, cutoff: str | None) -> str | None:
    """``before`` when the exam year precedes the cut-off year, ``after`` otherwise.

    Items from the cut-off year itself count as ``after``: the model saw at
    most part of that year.  ``None`` when the year or the cut-off is unknown.
    """
    if year is None or not cutoff:
        return None
    return "before" if int(year) < int(str(cutoff)[:4]) else "after"


def cutoff_table(entries: Sequence[RunEntry]) -> Table | None:
    """Accuracy before/after each model's ``training_cutoff`` (None when no config gives one)."""
    rows = []
    for e in entries:
        cutoff = e.training_cutoff
        if not cutoff:
            continue
        groups: dict[str, list[bool]] = {}
        for r in e.result.records:
            year = r.fields.get("year")
            period = cutoff_period(year if isinstance(year, int) else None, cutoff)
            if period is not None:
                groups.setdefault(period, []).append(r.correct)
        for period in ("before", "after"):
            hits = groups.get(period, [])
            low, high = wilson_interval(sum(hits), len(hits))
            rows.append({
                "experiment": e.experiment, "strategy": e.strategy, "training_cutoff": cutoff,
                "period": period, "n": len(hits), "correct": sum(hits),
                "accuracy": sum(hits) / len(hits) if hits else math.nan,
                "ci95_low": low, "ci95_high": high,
            })  # fmt: skip
    if not rows:
        return None
    data = pd.DataFrame(rows)
    table = _wide(
        data, "period", "accuracy_by_cutoff", "Accuracy before and after the training cut-off", entries
    )
    table.notes = "Before: exam year < cut-off year; the cut-off year itself counts as after. " + table.notes
    return table


def position_bias_table(entries: Sequence[RunEntry]) -> Table | None:
    """BPC per run and number of options, with the share of predictions at each position."""
    rows, display_rows = [], []
    for e in entries:
        for k, block in (e.result.position_bias or {}).items():
            shares = block.prediction_shares or [math.nan] * len(block.positions)
            for pos, letter in enumerate(block.positions):
                rows.append({
                    "experiment": e.experiment, "strategy": e.strategy, "n_options": int(k),
                    "n": block.n, "n_answered": block.n_answered, "position": letter,
                    "prediction_count": block.prediction_counts[pos], "prediction_share": shares[pos],
                    "answer_share": block.answer_shares[pos], "bpc_tvd": block.bpc_tvd,
                    "chi2": block.chi2, "df": block.df, "p_value": block.p_value,
                })  # fmt: skip
            cells: Row = {"experiment": e.experiment, "strategy": e.strategy, "options": int(k)}
            cells["answered"] = f"{block.n_answered}/{block.n}"
            for pos, letter in enumerate("ABCDE"):
                cells[letter] = fmt(shares[pos], 2) if pos < len(shares) else ""
            cells.update(BPC=fmt(block.bpc_tvd), chi2=fmt(block.chi2, 2), p=fmt_p(block.p_value))
            display_rows.append(cells)
    if not rows:
        return None
    display = pd.DataFrame(display_rows).set_index(["experiment", "strategy", "options"])
    display = display.rename(columns={"chi2": "χ²"})
    return Table(
        "position_bias",
        "Position bias (BPC): share of predictions per displayed position, by number of options",
        pd.DataFrame(rows),
        display,
        None,
        "BPC = total-variation distance of the prediction shares from uniform (0 = none, 1-1/k = "
        "always one position); χ² goodness-of-fit against uniform, k-1 df.",
    )


def extraction_table(entries: Sequence[RunEntry]) -> Table | None:
    """Share of records per answer-extraction rule (incl. fallback and unanswered)."""
    rows = []
    for e in entries:
        t = e.result.totals
        for rule, share in (t.extraction or {}).items():
            rows.append({"experiment": e.experiment, "strategy": e.strategy, "rule": rule,
                         "count": share.count, "share": share.share, "n": t.n})  # fmt: skip
    if not rows:
        return None
    data = pd.DataFrame(rows)
    rules = list(dict.fromkeys(data["rule"]))
    pivot = data.pivot_table(index=["experiment", "strategy"], columns="rule", values="share", sort=False)
    display = pivot.reindex(columns=rules).map(lambda v: "–" if pd.isna(v) else f"{100 * v:.1f}%")
    display.columns.name = None
    return Table(
        "extraction",
        "Answer extraction: share of items per extraction rule",
        data,
        display,
        None,
        "Generation runs only; 'fallback' = last valid letter, 'unanswered' = no letter found.",
    )


#: Titles of the breakdown tables of the usual fields (others: ``Accuracy per <field>``).
BREAKDOWN_TITLES = {
    "course": "Accuracy per course (program)",
    "component": "Accuracy per component",
    "year": "Accuracy per exam year",
}


def breakdown_tables(entries: Sequence[RunEntry]) -> list[Table]:
    """One accuracy table per declared grouping field of the runs."""
    return [
        breakdown_table(entries, name, BREAKDOWN_TITLES.get(name, f"Accuracy per {name}"))
        for name in breakdown_fields(entries)
    ]


TABLE_BUILDERS: tuple[Callable[[Sequence[RunEntry]], Table | None], ...] = (
    cutoff_table,
    position_bias_table,
    extraction_table,
)


def core_tables(entries: Sequence[RunEntry]) -> list[Table]:
    """All non-psychometric tables that the runs support, in report order."""
    tables = [table1(entries), *breakdown_tables(entries)]
    return tables + [t for build in TABLE_BUILDERS if (t := build(entries)) is not None]
