"""The accuracy, temporal-validity, position-bias and extraction tables.

Every number comes from the results files: totals, breakdowns and
``position_bias`` as the run wrote them; only the before/after training
cut-off split is recomputed from the per-question records (the run does not
know the split), with the same Wilson interval as the runner.

Accuracies are shown in percent with one decimal, as in the comparison's Table 1 (the
CSV files keep proportions at full precision).  Records that ended in an error are in no
accuracy: a run with errors shows ``n_errors`` beside ``n`` in its cells and CSV rows,
and the table's title says how many records were left out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import pandas as pd

from enade_bench.metrics.accuracy import wilson_interval
from enade_bench.report.loader import RunEntry, breakdown_fields, experiments, strategies
from enade_bench.report.table import Table, fmt, fmt_interval, fmt_p
from enade_bench.results.summary import AccuracyCell

_ACC_COLUMNS = ["n", "n_errors", "correct", "accuracy", "ci95_low", "ci95_high"]
#: One row of a table's long frame.
Row = dict[str, str | int | float | bool | None]


def _acc_row(block: AccuracyCell) -> Row:
    low, high = block.ci95
    return {
        "n": block.n,
        "n_errors": block.n_errors,
        "correct": block.correct,
        "accuracy": block.accuracy,
        "ci95_low": float(low),
        "ci95_high": float(high),
    }


def _cell(row: pd.Series) -> str:
    """``40.0 [23.1, 61.4]``: the row's accuracy and its interval in percent, one decimal."""
    return fmt_interval(100 * row["accuracy"], 100 * row["ci95_low"], 100 * row["ci95_high"], digits=1)


def _errors(row: pd.Series) -> str:
    """``, n_errors=3`` for a cell with records in error (empty otherwise)."""
    errors = int(row.get("n_errors", 0) or 0)
    return f", n_errors={errors}" if errors else ""


def errors_title(title: str, data: pd.DataFrame) -> str:
    """The title, with the records in error it leaves out when there are any."""
    errors = int(data["n_errors"].sum()) if "n_errors" in data and not data.empty else 0
    if not errors:
        return title
    return f"{title} (incomplete: {errors} record{'s' if errors != 1 else ''} in error, not scored)"


def table1(entries: Sequence[RunEntry], mark_best: bool = True) -> Table:
    """Table 1: accuracy per model (experiment) × strategy with 95 % Wilson intervals.

    The best accuracy in each strategy column is marked (``best`` in the CSV,
    bold in LaTeX/HTML).  With a single experiment there is nothing to compare
    down a column, so the best strategy of that row is marked instead.
    ``mark_best=False`` (a report with the comparison, whose letters say which
    models differ): the ``best`` column stays in the CSV, nothing is bold.
    A cell with records in error adds ``n_errors=k``; a run whose every record is
    an error has no accuracy (``–``) and is never the best.
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
    cells = {
        (r["experiment"], r["strategy"]): (
            _cell(r) + _errors(r).replace(", ", " ", 1),
            mark_best and bool(r["best"]),
        )
        for _, r in data.iterrows()
    }
    index = pd.Index(exps, name="experiment")
    display = pd.DataFrame(
        [[cells.get((x, s), ("–", False))[0] for s in strats] for x in exps], index, strats
    )
    bold = pd.DataFrame([[cells.get((x, s), ("–", False))[1] for s in strats] for x in exps], index, strats)
    models = data.drop_duplicates("experiment").set_index("experiment")["model"]
    display.insert(0, "model", models.reindex(display.index).to_numpy())
    bold.insert(0, "model", False)
    marked = "best strategy" if group == "experiment" else "best model per strategy"
    lead = f"Accuracy in percent. Bold: {marked}. " if mark_best else "Accuracy in percent. "
    return Table(
        "table1",
        errors_title("Accuracy per model and strategy, 95% Wilson interval", data),
        data,
        display.fillna("–").replace("", "–"),
        bold,
        lead
        + "Strategies: "
        + "; ".join(
            f"{s} = {lbl}" for s, lbl in data.drop_duplicates("strategy")[["strategy", "label"]].values
        ),
    )


def _wide(data: pd.DataFrame, key: str, name: str, title: str, entries: Sequence[RunEntry]) -> Table:
    strats = strategies(entries)
    index = pd.MultiIndex.from_frame(data[["experiment", key]].drop_duplicates(), names=["experiment", key])
    display = pd.DataFrame("–", index=index, columns=strats)
    for _, row in data.iterrows():
        display.loc[(row["experiment"], row[key]), row["strategy"]] = (
            f"{_cell(row)} n={row['n']}{_errors(row)}"
        )
    return Table(
        name,
        errors_title(title, data),
        data,
        display,
        None,
        "Cells: accuracy in percent [95% Wilson interval] and n items scored (n_errors: records in error, "
        "not scored).",
    )


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
        errors: dict[str, int] = {}
        for r in e.result.records:
            year = r.fields.get("year")
            period = cutoff_period(year if isinstance(year, int) else None, cutoff)
            if period is not None and r.error is not None:
                errors[period] = errors.get(period, 0) + 1
            elif period is not None:
                groups.setdefault(period, []).append(r.correct)
        for period in ("before", "after"):
            hits = groups.get(period, [])
            low, high = wilson_interval(sum(hits), len(hits))
            rows.append(
                {
                    "experiment": e.experiment,
                    "strategy": e.strategy,
                    "training_cutoff": cutoff,
                    "period": period,
                    "n": len(hits),
                    "n_errors": errors.get(period, 0),
                    "correct": sum(hits),
                    "accuracy": sum(hits) / len(hits) if hits else math.nan,
                    "ci95_low": low,
                    "ci95_high": high,
                }
            )
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
            errors = sum(r.error is not None and r.n_options == int(k) for r in e.result.records)
            shares = block.prediction_shares or [math.nan] * len(block.positions)
            for pos, letter in enumerate(block.positions):
                rows.append(
                    {
                        "experiment": e.experiment,
                        "strategy": e.strategy,
                        "n_options": int(k),
                        "n": block.n,
                        "n_errors": errors,
                        "n_answered": block.n_answered,
                        "position": letter,
                        "prediction_count": block.prediction_counts[pos],
                        "prediction_share": shares[pos],
                        "answer_share": block.answer_shares[pos],
                        "bpc_tvd": block.bpc_tvd,
                        "chi2": block.chi2,
                        "df": block.df,
                        "p_value": block.p_value,
                    }
                )
            cells: Row = {"experiment": e.experiment, "strategy": e.strategy, "options": int(k)}
            cells["answered"] = f"{block.n_answered}/{block.n}" + (f", n_errors={errors}" if errors else "")
            for pos, letter in enumerate("ABCDE"):
                cells[letter] = fmt(100 * shares[pos], 1) if pos < len(shares) else ""
            cells.update(BPC=fmt(block.bpc_tvd), chi2=fmt(block.chi2, 2), p=fmt_p(block.p_value))
            display_rows.append(cells)
    if not rows:
        return None
    display = pd.DataFrame(display_rows).set_index(["experiment", "strategy", "options"])
    display = display.rename(columns={"chi2": "χ²"})
    return Table(
        "position_bias",
        errors_title(
            "Position bias (BPC): share of predictions per displayed position, by number of options",
            pd.DataFrame(rows).drop_duplicates(["experiment", "strategy", "n_options"]),
        ),
        pd.DataFrame(rows),
        display,
        None,
        "A–E: percent of the answered predictions. "
        "BPC = total-variation distance of the prediction shares from uniform (0 = none, 1-1/k = "
        "always one position); χ² goodness-of-fit against uniform, k-1 df.",
    )


def extraction_table(entries: Sequence[RunEntry]) -> Table | None:
    """Share of records per answer-extraction rule (incl. fallback and unanswered)."""
    rows = []
    for e in entries:
        t = e.result.totals
        for rule, share in (t.extraction or {}).items():
            rows.append(
                {
                    "experiment": e.experiment,
                    "strategy": e.strategy,
                    "rule": rule,
                    "count": share.count,
                    "share": share.share,
                    "n": t.n,
                    "n_errors": t.errors,
                }
            )
    if not rows:
        return None
    data = pd.DataFrame(rows)
    rules = list(dict.fromkeys(data["rule"]))
    pivot = data.pivot_table(index=["experiment", "strategy"], columns="rule", values="share", sort=False)
    display = pivot.reindex(columns=rules).map(lambda v: "–" if pd.isna(v) else f"{100 * v:.1f}%")
    display.columns.name = None
    if data["n_errors"].any():
        errors = data.drop_duplicates(["experiment", "strategy"]).set_index(["experiment", "strategy"])
        display["n_errors"] = errors["n_errors"].reindex(display.index).astype(str).to_numpy()
    return Table(
        "extraction",
        errors_title(
            "Answer extraction: share of items per extraction rule",
            data.drop_duplicates(["experiment", "strategy"]),
        ),
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
    """One accuracy table per declared grouping field of the runs (``course``…): accuracy per value."""
    tables = []
    for key in breakdown_fields(entries):
        rows = [
            {"experiment": e.experiment, "strategy": e.strategy, key: value, **_acc_row(block)}
            for e in entries
            for value, block in e.result.breakdowns.get(key, {}).items()
        ]
        data = pd.DataFrame(rows, columns=["experiment", "strategy", key, *_ACC_COLUMNS])
        title = BREAKDOWN_TITLES.get(key, f"Accuracy per {key}")
        tables.append(_wide(data, key, f"accuracy_by_{key}", title, entries))
    return tables


TABLE_BUILDERS: tuple[Callable[[Sequence[RunEntry]], Table | None], ...] = (
    cutoff_table,
    position_bias_table,
    extraction_table,
)


def core_tables(entries: Sequence[RunEntry], mark_best: bool = True) -> list[Table]:
    """All non-psychometric tables that the runs support, in report order.

    ``mark_best=False``: Table 1 bolds no "best" (the report leads with the comparison).
    """
    tables = [table1(entries, mark_best), *breakdown_tables(entries)]
    return tables + [t for build in TABLE_BUILDERS if (t := build(entries)) is not None]
