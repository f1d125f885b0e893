"""The long table every comparison reads: one row per model × question × replicate.

Columns: ``model``, ``strategy``, ``item``, ``replicate``, ``correct`` (0/1), ``cluster``
(a shared stimulus, or empty), ``stem`` (an excerpt), ``answer``, ``prediction``, then
the exam's grouping fields under their own names.  It comes from our results files
(:func:`from_entries`) or from a long-format CSV any harness can export
(:func:`read_long_csv`): ``model,item,[replicate],correct[,cluster,<fields>…]``.
Records that ended in an error (our results files only) keep a row with the error's
text in the optional ``error`` column: they are no answer, but the comparison counts
them (``n_errors``) and refuses to rank an incomplete run unless asked to.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from enade_bench.errors import UserError
from enade_bench.report.loader import RunEntry
from enade_bench.results.records import QuestionRecord

__all__ = [
    "BASE_COLUMNS",
    "ERROR_COLUMN",
    "from_entries",
    "grouping_fields",
    "read_long_csv",
    "record_stem",
    "stem_excerpt",
]

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
#: Optional column: the error of a record that got no answer ('' for an answer).
ERROR_COLUMN = "error"
_FIRST_OPTION = re.compile(r"^\s*\(?A[).:]\s", re.MULTILINE)
_EXCERPT = 160


def stem_excerpt(prompt: str, width: int = _EXCERPT) -> str:
    """The end of the question text the model saw, just before its options.

    Records keep the whole rendered prompt (instructions and worked examples included);
    the question's options start at its last ``A)`` (or ``(A)``, ``A.``) line, and the
    excerpt is the last ``width`` characters before it.  A chat prompt (a JSON list of
    ``{"role", "content"}`` messages) is read as its last user message.

    Examples
    --------
    >>> stem_excerpt('[{"role": "user", "content": "Quanto é 2+3?\\nA) um\\nE) cinco"}]')
    'Quanto é 2+3?'
    """
    prompt = _last_user_message(prompt)
    starts = [m.start() for m in _FIRST_OPTION.finditer(prompt)]
    text = " ".join(prompt[: starts[-1] if starts else len(prompt)].split())
    return text if len(text) <= width else "…" + text[-width:]


def record_stem(record: QuestionRecord, width: int = _EXCERPT) -> str:
    """The end of a record's question stem (its last ``width`` characters, spaces collapsed).

    Records written before they kept the stem give :func:`stem_excerpt` of their prompt.

    Examples
    --------
    >>> record_stem(QuestionRecord.model_construct(stem="Quanto  é 2+3?", prompt="Responda. Quanto é 2+3?"))
    'Quanto é 2+3?'
    """
    if record.stem is None:
        return stem_excerpt(record.prompt, width)
    text = " ".join(record.stem.split())
    return text if len(text) <= width else "…" + text[-width:]


def _last_user_message(prompt: str) -> str:
    """The content of the last user message of a chat prompt stored as JSON; else the prompt."""
    if not prompt.lstrip().startswith("["):
        return prompt
    try:
        messages = json.loads(prompt, strict=False)
    except ValueError:
        return prompt
    if not isinstance(messages, list):
        return prompt
    contents = [m.get("content") for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    texts = [c for c in contents if isinstance(c, str)]
    return texts[-1] if texts else prompt


def from_entries(entries: Sequence[RunEntry]) -> pd.DataFrame:
    """The long table of our runs: the model is the experiment's name, one row per record.

    A record that ended in an error keeps its row, with the error in :data:`ERROR_COLUMN`
    (it is no answer: the comparison counts it and scores only the others).
    """
    rows = []
    for entry in entries:
        result = entry.result
        for r in result.records:
            row: dict[str, object] = {
                "model": entry.experiment,
                "strategy": entry.strategy,
                "item": r.id,
                "replicate": r.shuffle,
                "correct": int(r.correct),
                "cluster": r.cluster or "",
                "stem": record_stem(r),
                "answer": r.answer,
                "prediction": r.prediction or "",
                ERROR_COLUMN: "" if r.error is None else str(r.error) or "error",
            }
            for key, value in r.fields.items():
                row.setdefault(key, value)
            rows.append({k: _text(v) for k, v in row.items()})
    return _ordered(pd.DataFrame(rows))


def _text(value: object) -> object:
    """A lone surrogate (in a results file that holds one) as its escape ``\\ud83d``: an Arrow string
    cannot hold it (issue 61)."""
    if isinstance(value, str) and not value.isascii():
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    return value


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
        raise UserError(
            f"{path}: missing column(s) {', '.join(missing)} (have: {', '.join(frame.columns)}; "
            "expected model,item,[replicate],correct[,cluster,<fields>...])"
        )
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
    _check_duplicates(path, frame)
    if "replicate" not in frame.columns:
        frame["replicate"] = "0"
    if "strategy" not in frame.columns:
        frame["strategy"] = "-"
    for column in ("cluster", "stem", "answer", "prediction"):
        if column not in frame.columns:
            frame[column] = ""
    return _ordered(frame)


def _check_duplicates(path: Path, frame: pd.DataFrame) -> None:
    """One row per model × [strategy] × item × [replicate] × the exam's fields, named in the file's own columns.

    The fields are part of the key: items may be nested in them (``i00`` of area A and ``i00`` of
    area B are two questions, compared apart with ``--by area``; :func:`~enade_bench.compare.analysis.compare_table`
    refuses to merge them without it).
    """
    fields = [c for c in frame.columns if c not in (*BASE_COLUMNS, "correct", ERROR_COLUMN)]
    keys = [c for c in ("model", "strategy", "item", "replicate", *fields) if c in frame.columns]
    dupes = frame.duplicated(keys, keep=False)
    if not dupes.any():
        return
    row = int(frame.index[dupes][0])
    first = int(frame.index[dupes & (frame[keys] == frame.loc[row, keys]).all(axis=1)][0])
    second = int(frame.index[dupes & (frame[keys] == frame.loc[row, keys]).all(axis=1)][1])
    named = ", ".join(f"{k} {frame.at[second, k]!r}" for k in keys)
    fix = (
        ""
        if "replicate" in frame.columns
        else "; repeated answers to one item (shuffles, samples, runs) need a 'replicate' column numbering them"
    )
    raise UserError(
        f"{path}: row {second + 2}: {named} appears more than once (first at row {first + 2}){fix}"
    )


def grouping_fields(table: pd.DataFrame) -> list[str]:
    """The exam's own columns (everything but :data:`BASE_COLUMNS` and :data:`ERROR_COLUMN`)."""
    return [c for c in table.columns if c not in BASE_COLUMNS and c != ERROR_COLUMN]


def _ordered(frame: pd.DataFrame) -> pd.DataFrame:
    if frame.empty:
        return pd.DataFrame(columns=list(BASE_COLUMNS))
    frame["item"] = frame["item"].astype(str)
    frame["model"] = frame["model"].astype(str)
    frame["strategy"] = frame["strategy"].astype(str)
    frame["cluster"] = frame["cluster"].astype(str)
    errors = [ERROR_COLUMN] if ERROR_COLUMN in frame.columns else []
    return frame[[*BASE_COLUMNS, *grouping_fields(frame), *errors]]
