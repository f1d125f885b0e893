"""Live adaptive testing: ask a model only the ENEM items that the CAT selects.

The CAT itself (:func:`enade_bench.psychometrics.cat.run_cat`) is pure and
takes ``answer(item_index) -> bool``; this module builds that callable from an
experiment (any backend and method the runner supports) and the item bank
from INEP's parameters:

* :func:`enem_item_bank` — the questions of an ENEM exam file that have INEP
  3PL parameters, and those parameters (booklet linked by code or answer key);
* :func:`live_cat` — runs the CAT, putting each selected question to the
  model in its original option order through the experiment's
  :class:`~enade_bench.runner.execute.ChunkExecutor`; returns the trace and the
  records of the questions asked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from enade_bench.dataset.schema import Question
from enade_bench.psychometrics.cat import CatConfig, CatTrace, run_cat
from enade_bench.psychometrics.enem import link_exam, load_booklets, load_inep_items, parse_exam_filename
from enade_bench.psychometrics.irt import ItemParams
from enade_bench.results.records import QuestionRecord
from enade_bench.runner.execute import ChunkExecutor
from enade_bench.runner.work import WorkItem


@dataclass(frozen=True)
class ItemBank:
    """Questions with INEP parameters: ``questions[j]`` is item ``items.item_ids[j]``."""

    questions: tuple[Question, ...]
    items: ItemParams
    booklet: int


def enem_item_bank(questions: Sequence[Question], exam_csv: str | Path, enem_dir: str | Path) -> ItemBank:
    """Join loaded questions of one ENEM exam file to INEP's parameters.

    Each question is found by its ``question_number`` and ``language`` fields (the
    ENEM preset); annulled items and items without parameters are left out.

    Raises
    ------
    ValueError
        If the file name is not an ENEM exam name, no booklet matches, or no
        question has parameters.
    """
    path, folder = Path(exam_csv), Path(enem_dir)
    exam = parse_exam_filename(path)
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    inep = load_inep_items(folder / "inep_items.csv")
    try:
        linked = link_exam(exam, frame, inep, load_booklets(folder / "inep_booklets.csv"))
    except LookupError as exc:
        raise ValueError(f"{path}: {exc}") from None
    joined = linked.items
    by_key = {
        (q.fields.get("question_number"), q.fields.get("language")): q
        for q in questions
        if q.fields.get("booklet") == exam.co_prova and q.fields.get("area") == exam.area
    }
    keys = list(zip(joined["question_number"], joined["language"], strict=True))
    keep = joined[joined["scored"].to_numpy() & np.array([k in by_key for k in keys], dtype=bool)]
    if keep.empty:
        raise ValueError(f"{path}: no loaded question has INEP parameters (booklet {linked.booklet})")
    items = ItemParams.from_frame(keep)
    chosen = zip(keep["question_number"], keep["language"], strict=True)
    return ItemBank(tuple(by_key[k] for k in chosen), items, linked.booklet)


@dataclass(frozen=True)
class LiveCat:
    """A live adaptive test: the CAT trace and the model's records, in the order asked."""

    trace: CatTrace
    records: tuple[QuestionRecord, ...]
    bank: ItemBank


def live_cat(
    executor: ChunkExecutor, bank: ItemBank, config: CatConfig, rng: np.random.Generator | None = None
) -> LiveCat:
    """Adaptive test of the executor's model on ``bank``: only the selected questions are asked.

    Each question is asked once, in its original option order (shuffle 0,
    no permutation), with the executor's method; an answer that cannot be
    extracted counts as wrong.
    """
    records: list[QuestionRecord] = []

    def answer(j: int) -> bool:
        record = executor.run([WorkItem(bank.questions[j], 0, None)], len(records))[0]
        records.append(record)
        return bool(record.correct)

    trace = run_cat(answer, bank.items, config, rng)
    return LiveCat(trace, tuple(records), bank)
