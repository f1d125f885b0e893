"""What a run hands back and prints: its outcome, the summary CSV, Table 1, the accuracy lines.

Live runs, batch runs and every benchmark write Table 1 and print the accuracy
summary through these functions; nothing else formats them.
"""

from __future__ import annotations

import glob
import io
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from enade_bench.errors import UserError
from enade_bench.results.csv_safe import SafeWriter
from enade_bench.results.records import QuestionRecord, RunResult
from enade_bench.results.store import atomic_write_text, read_result

#: Columns of the summary CSV after ``id``, ``shuffle`` and the exam's grouping fields.
SUMMARY_COLUMNS = (
    "n_options",
    "answer",
    "prediction",
    "correct",
    "method",
    "shot",
    "strategy",
    "permutation",
    "extraction_rule",
    "error",
    "question_hash",
    "prompt_hash",
)


@dataclass(frozen=True)
class RunOutcome:
    """The results of a run (one per strategy that completed) and the files it wrote, in order."""

    results: list[RunResult] = field(default_factory=list)
    written: list[Path] = field(default_factory=list)

    @classmethod
    def combine(cls, outcomes: Iterable[RunOutcome], *written: Path) -> RunOutcome:
        """One outcome from several (results and files in order), plus further files."""
        parts = list(outcomes)
        return cls(
            [r for o in parts for r in o.results], [p for o in parts for p in o.written] + list(written)
        )


def record_fields(records: Iterable[QuestionRecord]) -> list[str]:
    """The grouping fields the records carry, in first-seen order."""
    return list(dict.fromkeys(name for r in records for name in r.fields))


def summary_csv(records: Sequence[QuestionRecord]) -> str:
    """``{name}_{strategy}_summary.csv``: one row per record, without prompts and outputs.

    Columns: ``id``, ``shuffle``, the exam's grouping fields (ENADE: ``year``, ``course``,
    ``component``), then :data:`SUMMARY_COLUMNS`.
    """
    fields = record_fields(records)
    buffer = io.StringIO()
    writer = SafeWriter(buffer)
    writer.writerow(["id", "shuffle", *fields, *SUMMARY_COLUMNS])
    for r in records:
        row = r.model_dump()
        row["permutation"] = "".join(map(str, r.permutation)) if r.permutation else ""
        values = [r.id, r.shuffle, *(r.fields.get(f) for f in fields), *(row[c] for c in SUMMARY_COLUMNS)]
        writer.writerow(["" if v is None else v for v in values])
    return buffer.getvalue()


def table1_csv(results: Sequence[RunResult]) -> str:
    """Accuracy per strategy (Table 1).

    ``n`` counts the scored records; ``n_errors`` those that ended in an error (not scored);
    ``model``: the model that ran the strategy (name and pinned weights), so that strategies
    run by different models under one experiment name are never shown as one model.
    """
    buffer = io.StringIO()
    writer = SafeWriter(buffer)
    writer.writerow(
        [
            "strategy",
            "label",
            "n",
            "n_errors",
            "correct",
            "accuracy",
            "ci95_low",
            "ci95_high",
            "unanswered",
            "model",
        ]
    )
    for res in results:
        t = res.totals
        writer.writerow(
            [
                res.strategy.id,
                res.strategy.label,
                t.n,
                t.errors,
                t.correct,
                f"{t.accuracy:.4f}",
                f"{t.ci95[0]:.4f}",
                f"{t.ci95[1]:.4f}",
                t.unanswered,
                res.model.summary,
            ]
        )
    return buffer.getvalue()


def results_on_disk(output_dir: Path, name: str) -> list[RunResult]:
    """Every strategy's results of experiment ``name`` in ``output_dir``.

    Files that cannot be read are left out (they are not this run's to judge).
    """
    found = []
    for path in sorted(output_dir.glob(f"{glob.escape(name)}_*_results.json")):
        try:
            result = read_result(path)
        except UserError:
            continue
        if result.experiment == name and result.strategy.id:
            found.append(result)
    return found


def write_table1(output_dir: Path, name: str, results: Sequence[RunResult] = ()) -> list[Path]:
    """Write ``{name}_table1.csv`` when several strategies have results; the files written.

    Table 1 is rebuilt from every strategy's results file in ``output_dir`` (``results``,
    this process's, are among them): S1+S2 and S3+S4 run by two processes at once give one
    table of all four, whichever ends last.
    """
    on_disk = {r.strategy.id: r for r in results_on_disk(output_dir, name)}
    on_disk.update({r.strategy.id: r for r in results if r.strategy.id})
    from enade_bench.report.loader import strategy_sort_key  # noqa: PLC0415 (the report stack: pandas, matplotlib)

    rows = sorted(on_disk.values(), key=lambda r: strategy_sort_key(str(r.strategy.id)))
    if len(rows) < 2:
        return []
    path = output_dir / f"{name}_table1.csv"
    models: dict[str, list[str]] = {}
    for r in rows:
        models.setdefault(r.model.summary, []).append(str(r.strategy.id))
    if len(models) > 1:
        shown = ", ".join(f"{m}: {' '.join(ids)}" for m, ids in models.items())
        print(
            f"note: {path}: experiment {name!r} holds strategies run by {len(models)} models ({shown}); "
            "its rows are kept apart by the model column, never averaged as one",
            file=sys.stderr,
        )
    atomic_write_text(path, table1_csv(rows))
    return [path]


def accuracy_line(result: RunResult) -> str:
    """``S1: accuracy 0.500 [0.236, 0.764] on 10 items (1 unanswered)``.

    Records in error are named next to the unanswered ones: ``(1 unanswered, 2 errors)``; they
    are not among the items scored (a run whose every record is an error: ``accuracy –``).
    """
    t = result.totals
    low, high = t.ci95
    errors = f", {t.errors} error{'s' if t.errors != 1 else ''}" if t.errors else ""
    score = f"{t.accuracy:.3f} [{low:.3f}, {high:.3f}]" if t.n else "–"  # errors are not scored
    return (
        f"{result.strategy.id or result.experiment}: accuracy {score} on {t.n} items "
        f"({t.unanswered} unanswered{errors})"
    )


def print_outcome(outcome: RunOutcome, lines: Sequence[str] | None = None) -> None:
    """Print one line per result (``accuracy_line`` unless ``lines`` are given), then the files."""
    for line in lines if lines is not None else [accuracy_line(r) for r in outcome.results]:
        print(line)
    for path in outcome.written:
        print(f"wrote {path}")
