"""Live adaptive testing: ask a model only the items that the CAT selects.

The CAT itself (:func:`enade_bench.psychometrics.cat.run_cat`) is pure and
takes ``answer(item_index) -> bool``; :func:`live_cat` builds that callable from
a planned strategy (any backend and method the runner supports) and an
:class:`ItemBank` (an exam's questions with fixed 3PL parameters, e.g. ENEM's,
:func:`enade_bench.benchmarks.enem.bank.enem_item_bank`), putting each selected
question to the model in its original option order, and returns the trace and
the records of the questions asked.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from enade_bench.dataset.schema import Question
from enade_bench.psychometrics.cat import CatConfig, CatTrace, run_cat
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
        record = executor.run([WorkItem(bank.questions[j], 0, None)])[0]
        records.append(record)
        return bool(record.correct)

    trace = run_cat(answer, bank.items, config, rng)
    return LiveCat(trace, tuple(records), bank)
