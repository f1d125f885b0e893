"""The long table every comparison reads: one row per model × question × replicate.

Columns: ``model``, ``strategy``, ``item``, ``replicate``, ``correct`` (0/1), ``cluster``
(a shared stimulus, or empty), ``stem`` (an excerpt), ``answer``, ``prediction``, then
the exam's grouping fields under their own names.  It comes from our results files
(:func:`from_entries`) or from a long-format CSV any harness can export
(:func:`read_long_csv`): ``model,item,[replicate],correct[,cluster,<fields>…]``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from enade_bench.errors import UserError
from enade_bench.report.loader import RunEntry

__all__ = ["BASE_COLUMNS", "from_entries", "grouping_fields", "read_long_csv", "stem_excerpt"]

BASE_COLUMNS = (
    "model",
    "strategy",
    "item",
    "replicate",
    "correct",
    "cluster",
    "stem",
    "answer",
    "prediction",
)
_FIRST_OPTION = re.compile(r"^\s*\(?A[).:]\s", re.MULTILINE)
_EXCERPT = 160


def stem_excerpt(prompt: str, width: int = _EXCERPT) -> str:
    """The end of the question text the model saw, just before its options.

    Records keep the whole rendered prompt (instructions and worked examples included);
    the question's options start at its last ``A)`` (or ``(A)``, ``A.``) line, and the
    excerpt is the last ``width`` characters before it.
    """
    starts = [m.start() for m in _FIRST_OPTION.finditer(prompt)]
    text = " ".join(prompt[: starts[-1] if starts else len(prompt)].split())
    return text if len(text) <= width else "…" + text[-width:]


def from_entries(entries: Sequence[RunEntry]) -> pd.DataFrame:
    """The long table of our runs: the model is the experiment's name, one row per record.

    Records that ended in an error are left out (they are not answers).
    """
    rows = []
    for entry in entries:
        result = entry.result
        for r in result.records:
            if r.error is not None:
                continue
            row: dict[str, object] = {
                "model": result.experiment, "strategy": entry.strategy, "item": r.id, "replicate": r.shuffle,
                "correct": int(r.correct), "cluster": r.cluster or "", "stem": stem_excerpt(r.prompt), "answer": r.answer,
                "prediction": r.prediction or "",
            }  # fmt: skip
            for key, value in r.fields.items():
                row.setdefault(key, value)
            rows.append(row)
    return _ordered(pd.DataFrame(rows))


def read_long_csv(path: Path) -> pd.DataFrame:
    """A long-format CSV: ``model``, ``item``, ``correct`` required; one ``error:`` line on bad input."""
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    except FileNotFoundError:
        raise UserError(f"{path}: file not found") from None
    except (UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise UserError(f"{path}: not a readable UTF-8 CSV ({str(exc).splitlines()[0]})") from None
    missing = [c for c in ("model", "item", "correct") if c not in frame.columns]
    if missing:
        raise UserError(f"{path}: missing column(s) {', '.join(missing)} (have: {', '.join(frame.columns)}; "
                        "expected model,item,[replicate],correct[,cluster,<fields>...])")  # fmt: skip
    for column in ("model", "item"):
        empty = frame.index[frame[column].str.strip() == ""]
        if len(empty):
            raise UserError(f"{path}: row {int(empty[0]) + 2}: column '{column}' is empty")
    bad = frame.index[~frame["correct"].str.strip().isin({"0", "1", "true", "false", "True", "False"})]
    if len(bad):
        row = int(bad[0])
        raise UserError(
            f"{path}: row {row + 2}: column 'correct' is {frame.at[row, 'correct']!r}; expected 0 or 1"
        )
    frame["correct"] = frame["correct"].str.strip().isin({"1", "true", "True"}).astype(int)
    if "replicate" not in frame.columns:
        frame["replicate"] = "0"
    if "strategy" not in frame.columns:
        frame["strategy"] = "-"
    dupes = frame.duplicated(["model", "strategy", "item", "replicate"], keep=False)
    if dupes.any():
        row = int(frame.index[dupes][0])
        raise UserError(f"{path}: row {row + 2}: model {frame.at[row, 'model']!r}, item {frame.at[row, 'item']!r}, "
                        f"replicate {frame.at[row, 'replicate']!r} appears more than once")  # fmt: skip
    for column in ("cluster", "stem", "answer", "prediction"):
        if column not in frame.columns:
            frame[column] = ""
    return _ordered(frame)


def grouping_fields(table: pd.DataFrame) -> list[str]:
    """The exam's own columns (everything but :data:`BASE_COLUMNS`)."""
    return [c for c in table.columns if c not in BASE_COLUMNS]


def _ordered(frame: pd.DataFrame) -> pd.DataFrame:
    if frame.empty:
        return pd.DataFrame(columns=list(BASE_COLUMNS))
    frame["item"] = frame["item"].astype(str)
    frame["model"] = frame["model"].astype(str)
    frame["strategy"] = frame["strategy"].astype(str)
    frame["cluster"] = frame["cluster"].astype(str)
    return frame[[*BASE_COLUMNS, *grouping_fields(frame)]]
