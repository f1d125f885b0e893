"""What every harness reader shares: one typed row per answer, the long table, strict 0/1 and JSON.

A reader turns a harness's files into :class:`Row` objects; :func:`long_table` makes the
long table of :mod:`enade_bench.compare.table` from them (``BASE_COLUMNS`` then the
harness's fields) and refuses an answer given twice, naming both places.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from enade_bench.compare.table import BASE_COLUMNS
from enade_bench.errors import UserError
from enade_bench.regular_file import read_text

__all__ = ["ImportOptions", "Row", "Shown", "as_correct", "long_table", "measured", "read_json", "table_rows"]


@dataclass(frozen=True)
class ImportOptions:
    """What the user chose on the command line.

    Attributes
    ----------
    metric
        The harness's 0/1 measure to use as ``correct``: an lm-eval metric (``acc``,
        ``exact_match``…), an inspect_ai scorer name, a HELM stat name.  ``None``: each
        reader's documented default.
    task_metrics
        The same for named tasks (``--metric TASK=NAME``), before ``metric``: a run with a
        multiple-choice task and a generation task can use ``acc_norm`` for one and
        ``exact_match`` for the other.
    """

    metric: str | None = None
    task_metrics: Mapping[str, str] = field(default_factory=dict)

    def metric_for(self, task: str) -> str | None:
        """The measure asked for ``task`` (its own, else the one for every task, else ``None``)."""
        return self.task_metrics.get(task, self.metric)

    @classmethod
    def parse(cls, values: Sequence[str]) -> ImportOptions:
        """``--metric`` values: ``NAME`` (every task, at most once) or ``TASK=NAME`` (repeatable)."""
        every: str | None = None
        tasks: dict[str, str] = {}
        for value in values:
            task, sep, name = value.rpartition("=")
            if not name or (sep and not task):
                raise UserError(f"--metric {value!r}: expected NAME or TASK=NAME")
            if not sep:
                if every is not None:
                    raise UserError(
                        f"--metric: {every!r} and {name!r} both for every task; "
                        "name the task of one (TASK=NAME)"
                    )
                every = name
            elif tasks.setdefault(task, name) != name:
                raise UserError(f"--metric: task {task!r} given twice ({tasks[task]!r} and {name!r})")
        return cls(metric=every, task_metrics=tasks)


@dataclass(frozen=True)
class Shown:
    """What ``compare --out``'s question browser shows of one answer beyond the long table.

    Attributes
    ----------
    text
        The question as the harness put it to the model (its whole prompt).
    options
        The option texts, A first (``""`` each where the harness scored the letters alone).
    gold, choice
        The positions of the key and of the model's choice among ``options``.
    scores
        The summed log-likelihood of each option (lm-eval's ``multiple_choice``).
    raw
        The model's output as it wrote it.
    usage
        Input tokens, output tokens and seconds, where the harness recorded them.
    """

    text: str = ""
    options: tuple[str, ...] = ()
    gold: int | None = None
    choice: int | None = None
    scores: tuple[float, ...] = ()
    raw: str | None = None
    usage: tuple[float | None, float | None, float | None] | None = None


@dataclass(frozen=True)
class Row:
    """One answer: a model's score on one item in one replicate, and where it was read.

    ``fields`` are the harness's grouping fields (``task`` always), usable with ``--by``.
    """

    model: str
    item: str
    replicate: str
    correct: int
    where: str
    strategy: str = "-"
    stem: str = ""
    answer: str = ""
    prediction: str = ""
    fields: dict[str, str] = field(default_factory=dict)
    shown: Shown = field(default_factory=Shown)


def long_table(rows: Iterable[Row]) -> pd.DataFrame:
    """The long table of ``rows``: :data:`BASE_COLUMNS`, then every field ('' where a row has none).

    Raises
    ------
    UserError
        The same model, strategy, item and replicate read twice (two runs of one model on
        one task, or one file given twice).
    """
    seen: dict[tuple[str, str, str, str], str] = {}
    records = []
    for row in rows:
        key = (row.model, row.strategy, row.item, row.replicate)
        if key in seen:
            raise UserError(
                f"{row.where}: model {row.model!r}, item {row.item!r}, replicate {row.replicate!r} was already "
                f"read from {seen[key]}; give each model's run of a task once"
            )
        seen[key] = row.where
        record: dict[str, object] = {
            "model": row.model,
            "strategy": row.strategy,
            "item": row.item,
            "replicate": row.replicate,
            "correct": row.correct,
            "cluster": "",
            "stem": row.stem,
            "answer": row.answer,
            "prediction": row.prediction,
        }
        for name, value in row.fields.items():
            record.setdefault(name, value)
        records.append(record)
    if not records:
        return pd.DataFrame(columns=list(BASE_COLUMNS))
    frame = pd.DataFrame(records)
    fields = [c for c in frame.columns if c not in BASE_COLUMNS]
    frame[fields] = frame[fields].fillna("").astype(str)
    frame["correct"] = frame["correct"].astype(int)
    return frame[[*BASE_COLUMNS, *fields]]


def table_rows(table: pd.DataFrame) -> list[Row]:
    """The rows of a long table (a long CSV's): what :func:`long_table` would make it from."""
    fields = [c for c in table.columns if c not in (*BASE_COLUMNS, "error")]
    return [
        Row(
            model=str(row["model"]),
            item=str(row["item"]),
            replicate=str(row["replicate"]),
            correct=int(row["correct"]),
            where="",
            strategy=str(row["strategy"]),
            stem=str(row["stem"]),
            answer=str(row["answer"]),
            prediction=str(row["prediction"]),
            fields={f: str(row[f]) for f in fields},
        )
        for row in table.to_dict("records")
    ]


def measured(*values: object) -> tuple[float | None, float | None, float | None] | None:
    """Input tokens, output tokens and seconds as a harness recorded them (``None`` where a value is
    not a number; ``None`` where none is)."""
    got = [float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None for v in values]
    return (got[0], got[1], got[2]) if any(v is not None for v in got) else None


def as_correct(value: object, where: str, metric: str) -> int:
    """A 0/1 (or true/false) value as 0 or 1; anything else is an error naming ``where``."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)) and not math.isnan(value) and value in (0, 1):
        return int(value)
    raise UserError(
        f"{where}: {metric} is {value!r}; expected 0 or 1 (a right/wrong measure; choose one with --metric)"
    )


def read_json(path: Path) -> Any:
    """A JSON file, or one ``error:`` line naming it."""
    try:
        return json.loads(read_text(path))
    except FileNotFoundError:
        raise UserError(f"{path}: file not found") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: not a readable UTF-8 JSON file ({exc})") from None
