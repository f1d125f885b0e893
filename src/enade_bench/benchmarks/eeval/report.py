"""E-EVAL reports: per-subject / per-level accuracy and the leaderboard table.

Both read the core results files (``{name}_{setting}_results.json``): the
subject and the level are each record's ``subject`` and ``level`` fields.
Accuracies are *micro* averages (correct / questions); the per-level block
also gives the macro average over the level's subjects.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from enade_bench.benchmarks.eeval.subjects import LEVELS, subject_from_key
from enade_bench.errors import UserError
from enade_bench.metrics.accuracy import wilson_interval
from enade_bench.results.csv_safe import SafeWriter
from enade_bench.results.records import RunResult
from enade_bench.results.store import V1Fields, read_result, register_v1_fields
from enade_bench.results.summary import AccuracyCell, ExtractionShare

# Results files written before each exam had its own fields (schema version 1): registered by the
# module that reads E-EVAL's results (``eeval leaderboard`` and ``submit`` import it, not the benchmark).
register_v1_fields("eeval", V1Fields.renamed({"subject": "course", "level": "component"}))

LEADERBOARD_COLUMNS = (("ao0", "0-shot AO"), ("ao5", "5-shot AO"), ("cot5", "5-shot CoT"))


def eval_split(sources: Sequence[Mapping[str, str]]) -> str:
    """The evaluated split named in a dataset's sources (``val``, ``test`` or ``dev``)."""
    splits = {str(s["split"]) for s in sources if s.get("split")}
    evaluated = splits - {"dev"}
    return next(iter(evaluated)) if evaluated else ("dev" if splits else "unknown")


def _block(correct: int, n: int) -> AccuracyCell:
    return AccuracyCell(
        n=n, correct=correct, accuracy=correct / n if n else math.nan, ci95=wilson_interval(correct, n)
    )


class LevelCell(AccuracyCell):
    """Micro accuracy of one level, with the macro average over its subjects."""

    macro: float


class SubjectCell(BaseModel):
    """Accuracy of one subject, with its names and level."""

    model_config = ConfigDict(extra="forbid")

    name_en: str
    name_zh: str
    level: str
    n: int
    correct: int
    accuracy: float
    ci95: tuple[float, float]


class SubjectSummary(BaseModel):
    """``{name}_{setting}_eeval.json``: per-subject and per-level accuracy of one setting."""

    model_config = ConfigDict(extra="forbid")

    experiment: str
    setting: str | None
    split: str
    method: str
    overall: AccuracyCell
    by_level: dict[str, LevelCell]
    by_subject: dict[str, SubjectCell]
    extraction: dict[str, ExtractionShare]


def subject_summary(result: RunResult) -> SubjectSummary:
    """Per-subject and per-level accuracy of one results file.

    ``by_level`` is micro (plus ``macro`` over subjects), ``by_subject`` carries
    English/Chinese names and level, ``extraction`` the extraction shares
    (generation settings).
    """
    tally: dict[str, list[int]] = {}
    for record in result.records:
        counts = tally.setdefault(str(record.fields.get("subject", "")), [0, 0])
        counts[0] += bool(record.correct)
        counts[1] += 1
    by_subject: dict[str, SubjectCell] = {}
    for key in sorted(tally, key=lambda k: (LEVELS.index(subject_from_key(k).level), k)):
        subject = subject_from_key(key)
        by_subject[key] = SubjectCell(
            name_en=subject.name_en,
            name_zh=subject.name_zh,
            level=subject.level,
            **_block(*tally[key]).model_dump(),
        )
    by_level: dict[str, LevelCell] = {}
    for level in LEVELS:
        rows = [v for v in by_subject.values() if v.level == level]
        if rows:
            block = _block(sum(r.correct for r in rows), sum(r.n for r in rows))
            by_level[level] = LevelCell(**block.model_dump(), macro=sum(r.accuracy for r in rows) / len(rows))
    totals = result.totals
    return SubjectSummary(
        experiment=result.experiment,
        setting=result.strategy.id,
        split=eval_split(result.dataset.sources),
        method=result.strategy.method,
        overall=_block(totals.correct, totals.n),
        by_level=by_level,
        by_subject=by_subject,
        extraction=totals.extraction or {},
    )


def subjects_csv(summary: SubjectSummary) -> str:
    """One row per subject, then one per level and the overall row."""
    buffer = io.StringIO()
    writer = SafeWriter(buffer)
    writer.writerow(["group", "key", "name_en", "name_zh", "level", "n", "correct", "accuracy"])
    for key, row in summary.by_subject.items():
        writer.writerow(
            ["subject", key, row.name_en, row.name_zh, row.level, row.n, row.correct, f"{row.accuracy:.4f}"]
        )
    for level, cell in summary.by_level.items():
        writer.writerow(["level", level, "", "", level, cell.n, cell.correct, f"{cell.accuracy:.4f}"])
    o = summary.overall
    writer.writerow(["overall", "", "", "", "", o.n, o.correct, f"{o.accuracy:.4f}"])
    return buffer.getvalue()


class ResultFile(NamedTuple):
    """A results file and its content."""

    path: Path
    result: RunResult


def load_eeval_results(results_dir: Path) -> list[ResultFile]:
    """Every E-EVAL results file in ``results_dir`` (searched recursively), read by the one reader."""
    if not results_dir.is_dir():
        raise UserError(f"{results_dir}: results folder not found")
    found = []
    for path in sorted(results_dir.rglob("*_results.json")):
        result = read_result(path)
        if result.strategy.benchmark == "eeval":
            found.append(ResultFile(path, result))
    return found


@dataclass
class LeaderboardRow:
    """One model (experiment) of the leaderboard; accuracies in [0, 1], ``None`` when not run."""

    experiment: str
    model: str
    scores: dict[str, float | None] = field(default_factory=dict)
    n: dict[str, int] = field(default_factory=dict)

    @property
    def average(self) -> float | None:
        """Mean of the three columns (``None`` unless all three were run)."""
        values = [self.scores.get(c) for c, _ in LEADERBOARD_COLUMNS]
        if any(v is None for v in values):
            return None
        return sum(v for v in values if v is not None) / len(values)


def _column(result: RunResult) -> str | None:
    column = f"{result.strategy.kind}{result.strategy.k}"
    return column if column in dict(LEADERBOARD_COLUMNS) else None


def leaderboard(results_dir: Path) -> list[LeaderboardRow]:
    """The leaderboard rows (val split) of every model with E-EVAL results in ``results_dir``.

    A column takes the setting whose id is exactly the column's (``ao5``) when
    several methods were run, else the other one (``ao5_ft``).  Rows are sorted
    by average, then by name.
    """
    rows: dict[str, LeaderboardRow] = {}
    exact: dict[tuple[str, str], bool] = {}
    for _, result in load_eeval_results(results_dir):
        if eval_split(result.dataset.sources) != "val":
            continue
        column = _column(result)
        if column is None:
            continue
        name = result.experiment
        row = rows.setdefault(name, LeaderboardRow(name, result.model.label))
        is_exact = result.strategy.id == column
        if column in row.scores and (exact[(name, column)] or not is_exact):
            continue
        row.scores[column] = result.totals.accuracy
        row.n[column] = result.totals.n
        exact[(name, column)] = is_exact
    if not rows:
        raise UserError(f"{results_dir}: no E-EVAL val results (run `enade-bench eeval run CONFIG` first)")
    return sorted(rows.values(), key=lambda r: (-(r.average if r.average is not None else -1), r.experiment))


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}"


def leaderboard_markdown(rows: Sequence[LeaderboardRow]) -> str:
    """The table in the benchmark's layout (accuracy in %)."""
    header = ["Model", *(title for _, title in LEADERBOARD_COLUMNS), "Average"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        cells = [f"{r.experiment} ({r.model})", *(_pct(r.scores.get(c)) for c, _ in LEADERBOARD_COLUMNS)]
        lines.append("| " + " | ".join([*cells, _pct(r.average)]) + " |")
    sizes = {n for r in rows for n in r.n.values()}
    if len(sizes) > 1:
        lines.append(f"\nNote: columns were computed on different numbers of questions ({sorted(sizes)}).")
    return "\n".join(lines) + "\n"


def leaderboard_csv(rows: Sequence[LeaderboardRow]) -> str:
    """The table as CSV (accuracy as a fraction, with the number of questions per column)."""
    buffer = io.StringIO()
    writer = SafeWriter(buffer)
    columns = [c for c, _ in LEADERBOARD_COLUMNS]
    writer.writerow(["experiment", "model", *columns, "average", *(f"n_{c}" for c in columns)])
    for r in rows:
        values = [r.scores.get(c) for c in columns]
        writer.writerow(
            [
                r.experiment,
                r.model,
                *("" if v is None else f"{v:.4f}" for v in values),
                "" if r.average is None else f"{r.average:.4f}",
                *(r.n.get(c, "") for c in columns),
            ]
        )
    return buffer.getvalue()
