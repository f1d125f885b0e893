"""E-EVAL reports: per-subject / per-level accuracy and the leaderboard table.

Both read the core results files (``{name}_{setting}_results.json``): the
subject is each record's ``course`` and the level its ``component``.
Accuracies are *micro* averages (correct / questions); the per-level block
also gives the macro average over the level's subjects.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from enade_bench.eeval.subjects import LEVELS, subject_from_key
from enade_bench.errors import UserError
from enade_bench.metrics.accuracy import wilson_interval

LEADERBOARD_COLUMNS = (("ao0", "0-shot AO"), ("ao5", "5-shot AO"), ("cot5", "5-shot CoT"))


def eval_split(sources: Sequence[Mapping[str, str]]) -> str:
    """The evaluated split named in a dataset's sources (``val``, ``test`` or ``dev``)."""
    splits = {str(s["split"]) for s in sources if s.get("split")}
    evaluated = splits - {"dev"}
    return next(iter(evaluated)) if evaluated else ("dev" if splits else "unknown")


def _block(correct: int, n: int) -> dict[str, Any]:
    low, high = wilson_interval(correct, n)
    return {"n": n, "correct": correct, "accuracy": correct / n if n else math.nan, "ci95": [low, high]}


def subject_summary(result: Mapping[str, Any]) -> dict[str, Any]:
    """Per-subject and per-level accuracy of one results file (as loaded from JSON).

    Returns
    -------
    dict
        ``setting``, ``split``, ``overall``, ``by_level`` (micro, plus ``macro``
        over subjects), ``by_subject`` (with English/Chinese names and level) and
        the extraction shares (generation settings).
    """
    tally: dict[str, list[int]] = {}
    for record in result["records"]:
        counts = tally.setdefault(record["course"], [0, 0])
        counts[0] += bool(record["correct"])
        counts[1] += 1
    by_subject: dict[str, Any] = {}
    for key in sorted(tally, key=lambda k: (LEVELS.index(subject_from_key(k).level), k)):
        subject = subject_from_key(key)
        by_subject[key] = {
            "name_en": subject.name_en,
            "name_zh": subject.name_zh,
            "level": subject.level,
            **_block(*tally[key]),
        }
    by_level: dict[str, Any] = {}
    for level in LEVELS:
        rows = [v for v in by_subject.values() if v["level"] == level]
        if rows:
            block = _block(sum(r["correct"] for r in rows), sum(r["n"] for r in rows))
            block["macro"] = sum(r["accuracy"] for r in rows) / len(rows)
            by_level[level] = block
    totals = result["totals"]
    return {
        "experiment": result["experiment"],
        "setting": result["strategy"].get("id"),
        "split": eval_split(result["dataset"]["sources"]),
        "method": result["strategy"].get("method"),
        "overall": _block(totals["correct"], totals["n"]),
        "by_level": by_level,
        "by_subject": by_subject,
        "extraction": totals.get("extraction", {}),
    }


def subjects_csv(summary: Mapping[str, Any]) -> str:
    """One row per subject, then one per level and the overall row."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["group", "key", "name_en", "name_zh", "level", "n", "correct", "accuracy"])
    for key, row in summary["by_subject"].items():
        writer.writerow(["subject", key, row["name_en"], row["name_zh"], row["level"], row["n"],
                         row["correct"], f"{row['accuracy']:.4f}"])  # fmt: skip
    for level, row in summary["by_level"].items():
        writer.writerow(["level", level, "", "", level, row["n"], row["correct"], f"{row['accuracy']:.4f}"])
    o = summary["overall"]
    writer.writerow(["overall", "", "", "", "", o["n"], o["correct"], f"{o['accuracy']:.4f}"])
    return buffer.getvalue()


def load_eeval_results(results_dir: Path) -> list[dict[str, Any]]:
    """Every E-EVAL results file in ``results_dir`` (searched recursively), loaded."""
    if not results_dir.is_dir():
        raise UserError(f"{results_dir}: results folder not found")
    found = []
    for path in sorted(results_dir.rglob("*_results.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise UserError(f"{path}: not a readable results file ({exc})") from None
        if isinstance(data, dict) and data.get("strategy", {}).get("benchmark") == "eeval":
            data["_path"] = str(path)
            found.append(data)
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


def _model_name(identity: Mapping[str, Any]) -> str:
    for key in ("package", "name", "model", "path"):
        if identity.get(key):
            return str(identity[key])
    return "?"


def _column(strategy: Mapping[str, Any]) -> str | None:
    kind, k = strategy.get("kind"), strategy.get("k")
    column = f"{kind}{k}"
    return column if column in dict(LEADERBOARD_COLUMNS) else None


def leaderboard(results_dir: Path) -> list[LeaderboardRow]:
    """The leaderboard rows (val split) of every model with E-EVAL results in ``results_dir``.

    A column takes the setting whose id is exactly the column's (``ao5``) when
    several methods were run, else the other one (``ao5_ft``).  Rows are sorted
    by average, then by name.
    """
    rows: dict[str, LeaderboardRow] = {}
    exact: dict[tuple[str, str], bool] = {}
    for result in load_eeval_results(results_dir):
        if eval_split(result["dataset"]["sources"]) != "val":
            continue
        column = _column(result["strategy"])
        if column is None:
            continue
        name = result["experiment"]
        row = rows.setdefault(name, LeaderboardRow(name, _model_name(result.get("model", {}))))
        is_exact = result["strategy"].get("id") == column
        if column in row.scores and (exact[(name, column)] or not is_exact):
            continue
        row.scores[column] = result["totals"]["accuracy"]
        row.n[column] = result["totals"]["n"]
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
    writer = csv.writer(buffer, lineterminator="\n")
    columns = [c for c, _ in LEADERBOARD_COLUMNS]
    writer.writerow(["experiment", "model", *columns, "average", *(f"n_{c}" for c in columns)])
    for r in rows:
        values = [r.scores.get(c) for c in columns]
        writer.writerow([r.experiment, r.model, *("" if v is None else f"{v:.4f}" for v in values),
                         "" if r.average is None else f"{r.average:.4f}",
                         *(r.n.get(c, "") for c in columns)])  # fmt: skip
    return buffer.getvalue()
